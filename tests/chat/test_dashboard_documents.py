"""Dashboard: the Documents page (chat/documents_views.py) — the session-summary documents
listed per scope, one rendered as sanitised Markdown, history with diffs, and the buttons
that queue a run or refresh mental models."""

import re

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from memory.documents import mental_model_path, skill_path
from memory.models import AuditEvent, DocumentKind, JobRun, JobStatus, MemoryDocument
from memory.services import Actor, app_config_set
from memory.services.documents import document_prune, document_write
from memory.tokens import estimate_tokens
from tests.dashboard_helpers import hx

MEMORY_TEXT = "# Long-term memory\n\n## Decisions\n\n- Deploys go through **staging** first.\n"
SUMMARY_TEXT = "Alice ships through staging; migrations run before the traffic switch.\n"


def url(name, subject, **kwargs):
    return reverse(f"dashboard:{name}", kwargs={"subject_id": subject.pk, **kwargs})


def write(subject, path, content, *, scope="", **fields):
    document, _ = document_write(
        subject=subject,
        path=path,
        content=content,
        actor=Actor.system("test"),
        scope=scope,
        method="heuristic",
        **fields,
    )
    return document


@pytest.fixture
def summaries_on(owned_subject):
    app_config_set(app=owned_subject.app, config={"memory": {"backend": "local"}}, actor=Actor.system("test"))
    return owned_subject


@pytest.fixture
def documents(owned_subject):
    return {
        "memory": write(owned_subject, "MEMORY.md", MEMORY_TEXT),
        "summary": write(owned_subject, "memory_summary.md", SUMMARY_TEXT),
        "billing_memory": write(
            owned_subject, "MEMORY.md", "# Billing\n\nUse the blue-green deploy.\n", scope="billing-api"
        ),
        "skill": write(
            owned_subject,
            skill_path("release-checklist"),
            "# Release\n\n1. Tag\n2. Ship\n",
            scope="billing-api",
            name="release-checklist",
        ),
        "model": write(
            owned_subject,
            mental_model_path("current-projects"),
            "- billing-api migration\n",
            name="current-projects",
            description="What Alice is working on now",
            auto_refresh=True,
            builtin=True,
        ),
    }


def ids_in_order(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'id="document-(\d+)"', html)]


def test_the_page_lists_each_scope_then_skills_then_mental_models(documents, owned_subject, owner_client):
    response = owner_client.get(url("documents", owned_subject))
    html = response.content.decode()
    assert response.status_code == 200
    assert ids_in_order(html) == [
        documents[key].pk for key in ("memory", "summary", "billing_memory", "skill", "model")
    ]
    assert (
        html.index("Whole memory")
        < html.index("billing-api")
        < html.index("Skills")
        < html.index("Mental models")
    )


def test_each_row_shows_its_address_version_method_and_size(documents, owned_subject, owner_client):
    second = MEMORY_TEXT + "- A second decision.\n"
    write(owned_subject, "MEMORY.md", second)
    html = owner_client.get(url("documents", owned_subject)).content.decode()
    row = html[html.index(f'id="document-{documents["memory"].pk}"') :]
    row = row[: row.index("</li>")]
    assert "memory://root/MEMORY.md" in row
    assert "v2" in row
    assert "heuristic" in row
    assert f"~{estimate_tokens(second)} tokens" in row
    assert "memory://root<" in html  # the summary's address is memory://root
    assert "memory://scope/billing-api/skills/release-checklist/SKILL.md" in html
    assert "What Alice is working on now" in html and "refreshed by every run" in html


def test_the_whole_memorys_memory_md_is_shown_rendered_by_default(documents, owned_subject, owner_client):
    html = owner_client.get(url("documents", owned_subject)).content.decode()
    body = html[html.index('id="document-body"') :]
    assert "<h1>Long-term memory</h1>" in body
    assert "<strong>staging</strong>" in body
    assert f'id="document-{documents["memory"].pk}"' in html and "is-selected" in html


def test_doc_picks_the_document_to_show(documents, owned_subject, owner_client):
    html = owner_client.get(url("documents", owned_subject), {"doc": documents["skill"].pk}).content.decode()
    body = html[html.index('id="document-body"') :]
    assert "<h1>Release</h1>" in body and "<li>Tag</li>" in body
    assert "Long-term memory" not in body


def test_another_subjects_document_id_shows_your_own_memory_instead(
    documents, owned_subject, stranger_subject, owner_client
):
    theirs = write(stranger_subject, "MEMORY.md", "# Bob's secret plans\n")
    html = owner_client.get(url("documents", owned_subject), {"doc": theirs.pk}).content.decode()
    assert "Bob&#x27;s secret plans" not in html and "Bob's secret plans" not in html
    assert "<h1>Long-term memory</h1>" in html


def test_a_pruned_skill_is_not_listed(documents, owned_subject, owner_client):
    document_prune(document=documents["skill"], actor=Actor.system("test"))
    html = owner_client.get(url("documents", owned_subject)).content.decode()
    assert f'id="document-{documents["skill"].pk}"' not in html


def test_a_script_or_javascript_link_in_a_document_never_reaches_the_page(owned_subject, owner_client):
    write(
        owned_subject, "MEMORY.md", "# Notes\n\n<script>alert('x')</script>\n\n[open](javascript:alert(1))\n"
    )
    html = owner_client.get(url("documents", owned_subject)).content.decode()
    body = html[html.index('id="document-body"') : html.index("</article>")]
    assert "<script" not in body
    assert "<a " not in body and "href" not in body  # the link stays plain text
    assert "&lt;script&gt;" in body


def test_with_no_document_the_page_says_what_writes_them(owned_subject, owner_client):
    html = owner_client.get(url("documents", owned_subject)).content.decode()
    assert "No memory document yet." in html
    assert "Nothing to show yet" in html


def test_with_the_backend_off_the_page_says_how_to_turn_it_on_and_disables_the_buttons(
    documents, owned_subject, owner_client
):
    html = owner_client.get(url("documents", owned_subject)).content.decode()
    assert "Session summaries are off for this app" in html
    assert '"backend": "local"' in html
    for label in ("Run now", "Rebuild", "Seed built-ins"):
        assert re.search(rf"disabled>{label}</button>", html), label
    assert "documents-off" in html


def test_rebuild_with_the_backend_off_queues_nothing_and_says_why(owned_subject, owner_client):
    response = hx(owner_client, "POST", url("documents_rebuild", owned_subject))
    html = response.content.decode()
    assert response.status_code == 200
    assert not JobRun.objects.filter(subject=owned_subject).exists()
    assert not AuditEvent.objects.filter(action="subject.summaries_requested").exists()
    assert "Not queued: session summaries are off for this app" in html  # the toast


def test_rebuild_without_javascript_redirects_back_with_the_message(owned_subject, owner_client):
    response = owner_client.post(url("documents_rebuild", owned_subject))
    assert response.status_code == 302
    assert response["Location"] == url("documents", owned_subject)
    assert [str(m) for m in get_messages(response.wsgi_request)][0].startswith("Not queued:")


def test_rebuild_queues_a_forced_run_and_records_who_asked(
    summaries_on, documents, owned_subject, owner, owner_client
):
    response = hx(
        owner_client, "POST", url("documents_rebuild", owned_subject), {"doc": documents["skill"].pk}
    )
    run = JobRun.objects.get(subject=owned_subject)
    event = AuditEvent.objects.get(action="subject.summaries_requested")
    html = response.content.decode()
    assert (run.kind, run.status, run.stats) == ("summaries", JobStatus.QUEUED, {"force": True})
    assert (event.actor_kind, event.actor_id, event.object_id, event.data) == (
        "user",
        owner.username,
        str(run.pk),
        {"force": True},
    )
    assert html.lstrip().startswith('<div id="documents-panel"')
    assert f"Rebuild queued (job run {run.pk})" in html
    assert "a run is queued" in html
    assert "<h1>Release</h1>" in html  # the document that was shown stays shown


def test_run_now_queues_an_ordinary_run(summaries_on, owned_subject, owner_client):
    response = owner_client.post(url("documents_enqueue", owned_subject))
    run = JobRun.objects.get(subject=owned_subject)
    assert response.status_code == 302
    assert (run.kind, run.status, run.stats) == ("summaries", JobStatus.QUEUED, {})
    assert AuditEvent.objects.get(action="subject.summaries_requested").data == {"force": False}


def test_with_the_backend_on_the_buttons_are_enabled_and_the_last_run_shown(
    summaries_on, owned_subject, owner_client
):
    from tests.memory.dashboard.test_dashboard_jobs import finished_run

    finished_run(owned_subject, kind="summaries")
    html = owner_client.get(url("documents", owned_subject)).content.decode()
    assert "Session summaries are off" not in html
    assert '<button type="submit" class="btn btn-primary">Rebuild</button>' in html
    assert 'Last run: <span class="badge">done</span>' in html


def test_the_panel_answers_htmx_and_keeps_the_shown_document_for_live_reloads(
    documents, owned_subject, owner_client
):
    response = hx(
        owner_client, "GET", url("documents_panel", owned_subject), {"doc": documents["summary"].pk}
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="documents-panel"')
    assert f"{url('documents_panel', owned_subject)}?doc={documents['summary'].pk}" in html
    assert 'hx-trigger="mw:documents from:body"' in html
    assert "migrations run before the traffic switch" in html
    assert "<html" not in html


def test_the_panel_without_htmx_redirects_to_the_page(documents, owned_subject, owner_client):
    response = owner_client.get(url("documents_panel", owned_subject), {"doc": documents["summary"].pk})
    assert response.status_code == 302
    assert response["Location"] == f"{url('documents', owned_subject)}?doc={documents['summary'].pk}"


def test_the_nav_links_the_documents_page(owned_subject, owner_client):
    html = owner_client.get(url("overview", owned_subject)).content.decode()
    assert f'href="{url("documents", owned_subject)}"' in html and ">Documents</a>" in html


# --- history ------------------------------------------------------------------------------


@pytest.fixture
def three_versions(owned_subject):
    for content in ("- keep\n- old line\n", "- keep\n- new line\n", "- keep\n- new line\n- <b>third</b>\n"):
        document = write(owned_subject, "MEMORY.md", content)
    return document


def test_history_lists_every_version_newest_first(three_versions, owned_subject, owner_client):
    html = owner_client.get(
        url("document_history", owned_subject, document_id=three_versions.pk)
    ).content.decode()
    assert [int(n) for n in re.findall(r'id="version-(\d+)"', html)] == [3, 2, 1]
    assert html.count("heuristic") >= 3
    assert "memory://root/MEMORY.md" in html


def test_history_diffs_the_previous_version_against_the_current_one_by_default(
    three_versions, owned_subject, owner_client
):
    html = owner_client.get(
        url("document_history", owned_subject, document_id=three_versions.pk)
    ).content.decode()
    assert "Version 2 → version 3" in html
    assert '<span class="diff-line diff-add">+- &lt;b&gt;third&lt;/b&gt;</span>' in html  # escaped text
    assert '<span class="diff-line diff-hunk">@@' in html
    assert '<span class="diff-line diff-file">--- memory://root/MEMORY.md v2</span>' in html
    assert "diff-del" not in html


def test_history_diffs_the_two_versions_asked_for(three_versions, owned_subject, owner_client):
    page = url("document_history", owned_subject, document_id=three_versions.pk)
    html = owner_client.get(page, {"from": 1, "to": 2}).content.decode()
    assert '<span class="diff-line diff-del">-- old line</span>' in html
    assert '<span class="diff-line diff-add">+- new line</span>' in html
    assert '<span class="diff-line diff-ctx"> - keep</span>' in html
    from_empty = owner_client.get(page, {"from": 0, "to": 1}).content.decode()
    assert "Empty document → version 1" in from_empty and "(empty)" in from_empty


def test_history_with_a_version_that_does_not_exist_is_a_400_naming_the_field(
    three_versions, owned_subject, owner_client
):
    response = owner_client.get(
        url("document_history", owned_subject, document_id=three_versions.pk), {"from": 9, "to": "x"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert 'data-field="from"' in html and 'data-field="to"' in html
    assert "diff-line" not in html


def test_a_pruned_documents_history_stays_readable(documents, owned_subject, owner_client):
    document_prune(document=documents["skill"], actor=Actor.system("test"))
    response = owner_client.get(url("document_history", owned_subject, document_id=documents["skill"].pk))
    assert response.status_code == 200
    assert "pruned" in response.content.decode()


def test_history_of_another_subjects_document_is_404(owned_subject, stranger_subject, owner_client):
    theirs = write(stranger_subject, "MEMORY.md", "# Bob\n")
    assert owner_client.get(url("document_history", owned_subject, document_id=theirs.pk)).status_code == 404


# --- mental models (chat/summaries/mental_models.py, written beside this page) ------------


def test_seed_built_ins_adds_the_missing_mental_models(summaries_on, owned_subject, owner_client):
    response = hx(owner_client, "POST", url("mental_models_seed", owned_subject))
    seeded = MemoryDocument.objects.filter(subject=owned_subject, kind=DocumentKind.MENTAL_MODEL)
    html = response.content.decode()
    assert response.status_code == 200
    assert seeded.exists() and all(document.builtin for document in seeded)
    assert f"Added {seeded.count()} built-in mental model" in html
    again = hx(owner_client, "POST", url("mental_models_seed", owned_subject)).content.decode()
    assert "Every built-in mental model is there already." in again
    assert (
        MemoryDocument.objects.filter(subject=owned_subject, kind=DocumentKind.MENTAL_MODEL).count()
        == seeded.count()
    )


def test_refresh_writes_the_mental_model_and_says_so(summaries_on, documents, owned_subject, owner_client):
    model = documents["model"]
    response = hx(owner_client, "POST", url("mental_model_refresh", owned_subject, document_id=model.pk))
    model.refresh_from_db()
    html = response.content.decode()
    assert response.status_code == 200
    assert model.current is not None
    assert "Refreshed current-projects" in html
    assert html.lstrip().startswith('<div id="documents-panel"')


def test_refresh_of_a_document_that_is_not_a_mental_model_is_404(
    summaries_on, documents, owned_subject, owner_client
):
    response = owner_client.post(
        url("mental_model_refresh", owned_subject, document_id=documents["memory"].pk)
    )
    assert response.status_code == 404
