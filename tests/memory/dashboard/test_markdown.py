"""Markdown documents as HTML (memory/dashboard/markdown.py): CommonMark rendered, then only
the allowed tags and http(s)/mailto links kept."""

from memory.dashboard.markdown import markdown_html


def test_headings_lists_emphasis_and_code_are_rendered():
    html = markdown_html("# Decisions\n\n- use **uv** for installs\n- pin `ruff`\n\n```\nmake test\n```\n")
    assert "<h1>Decisions</h1>" in html
    assert "<li>use <strong>uv</strong> for installs</li>" in html
    assert "<code>ruff</code>" in html
    assert "<pre><code>make test\n</code></pre>" in html


def test_a_table_is_rendered_as_a_table():
    html = markdown_html("| tool | why |\n|---|---|\n| ruff | lint |\n")
    assert "<table>" in html and "<th>tool</th>" in html and "<td>ruff</td>" in html


def test_a_script_in_a_document_never_reaches_the_page():
    html = markdown_html("Before\n\n<script>alert('x')</script>\n\n<img src=x onerror=alert(1)>\n")
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;" in html  # shown as text, so the reader sees what the document says


def test_a_javascript_link_is_never_a_link():
    html = markdown_html(
        '[click](javascript:alert(1)) [also](JAVASCRIPT:alert(2)) <a href="javascript:alert(3)">raw</a>'
    )
    assert "<a" not in html
    assert "&lt;a href=" in html  # the raw tag is shown as text
    assert "click" in html and "also" in html


def test_http_and_mailto_links_are_kept_and_marked_noopener():
    html = markdown_html("[docs](https://example.com/a) [mail](mailto:ops@example.com)")
    assert 'href="https://example.com/a"' in html
    assert 'href="mailto:ops@example.com"' in html
    assert "noopener" in html


def test_relative_data_and_autolinked_other_schemes_are_dropped():
    html = markdown_html("[rel](/s/1/notes/) [data](data:text/html,hi) <ftp://example.com/x>")
    assert "href=" not in html


def test_images_and_attributes_outside_the_allow_list_are_removed():
    html = markdown_html("![logo](https://example.com/logo.png)\n\n```python\nx = 1\n```\n")
    assert "<img" not in html
    assert "class=" not in html
    assert "<code>x = 1\n</code>" in html


def test_the_result_is_safe_for_templates_and_empty_text_is_empty():
    assert markdown_html("") == ""
    assert hasattr(markdown_html("text"), "__html__")
