"""Markdown documents as safe HTML for dashboard pages (the session-summary documents).

Two steps, each a library that does the job: markdown-it-py renders CommonMark (plus tables)
with raw HTML off, so `<script>` in a document comes out as text; nh3 then keeps only the
tags on ALLOWED_TAGS and links whose address is http(s) or mailto — a document is written
from conversations and model output, so nothing in it may run or navigate anywhere else in
the page. The result is marked safe for templates only after both steps.
"""

import re

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

ALLOWED_TAGS = {
    *(f"h{level}" for level in range(1, 7)),
    "p",
    "ul",
    "ol",
    "li",
    "code",
    "pre",
    "em",
    "strong",
    "a",
    "blockquote",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "hr",
    "br",
}
ALLOWED_ATTRIBUTES = {"a": {"href"}}
LINK_SCHEMES = {"http", "https", "mailto"}
_ABSOLUTE_LINK = re.compile(r"^(https?://|mailto:)", re.IGNORECASE)

_renderer = MarkdownIt("commonmark", {"html": False}).enable("table")


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """Links keep only absolute http(s) and mailto addresses; a relative one would resolve
    against the dashboard, so it is dropped with the rest."""
    if tag == "a" and attribute == "href":
        return value if _ABSOLUTE_LINK.match(value.strip()) else None
    return value


def markdown_html(text: str) -> SafeString:
    """`text` (Markdown) as sanitised HTML, ready for a template."""
    rendered = _renderer.render(text or "")
    cleaned = nh3.clean(
        rendered,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=LINK_SCHEMES,
        attribute_filter=_keep_attribute,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return mark_safe(cleaned)  # noqa: S308 — sanitised by nh3 just above
