"""The Documents page: a session-summary document rendered as Markdown (sanitised), Rebuild
queuing a run that the worker finishes, and live updates — the run's end and a new document
version both reach the open page over the websocket without a reload.

Its data lives in an app of its own with session summaries on (`memory.backend` "local"), so
the other browser tests keep the default; the documents are written through the document
service in a `manage.py shell` step, as no API writes them.
"""

import json

import pytest

from tests.browser.conftest import Person, expect, log_in, save_screenshot

pytestmark = pytest.mark.browser

_SETUP = """
import json
from django.contrib.auth import get_user_model
from memory.services import Actor, app_create, subject_get_or_create
from memory.services.documents import document_write

actor = Actor.system("browser-test")
app = app_create(name="documents-browser", config={"memory": {"backend": "local"}}, actor=actor)
user = get_user_model().objects.create_user("dora", password="dora-browser-pass")
subject = subject_get_or_create(app=app, external_id="dora")
subject.owner = user
subject.display_name = "Dora Lind"
subject.save(update_fields=["owner", "display_name"])
document_write(subject=subject, path="MEMORY.md", actor=actor, method="heuristic", content=(
    "# Dora's long-term memory\\n\\n## Decisions\\n\\n- Releases go out on **Tuesdays**.\\n"
    "- [Runbook](https://example.com/runbook)\\n\\n<script>window.__injected = true</script>\\n"
))
document_write(subject=subject, path="memory_summary.md", actor=actor, method="heuristic",
               content="Dora releases on Tuesdays.\\n")
print(json.dumps({"subject_id": subject.pk}))
"""

_NEW_VERSION = """
from memory.models import Subject
from memory.services import Actor
from memory.services.documents import document_write

subject = Subject.objects.get(pk={subject_id})
document_write(subject=subject, path="MEMORY.md", actor=Actor.system("browser-test"), method="heuristic",
               content="# Dora's long-term memory\\n\\n## Decisions\\n\\n- Releases moved to **Thursdays**.\\n")
"""


@pytest.fixture(scope="module")
def dora(server) -> Person:
    ids = json.loads(server.manage("shell", "-c", _SETUP).strip().splitlines()[-1])
    return Person("dora", "dora-browser-pass", "dora", "Dora Lind", subject_id=ids["subject_id"])


def test_the_documents_page_renders_markdown_rebuilds_and_follows_live_updates(page, server, dora):
    log_in(page, dora)
    page.goto(dora.page_url("documents"))
    expect(page.locator("body")).to_have_attribute("data-live", "open")
    page.evaluate("window.__notReloaded = true")

    body = page.locator("#document-body")
    expect(body.locator("h1")).to_have_text("Dora's long-term memory")
    expect(body.locator("strong")).to_have_text("Tuesdays")
    expect(body.get_by_role("link", name="Runbook")).to_have_attribute("href", "https://example.com/runbook")
    expect(body.locator("script")).to_have_count(0)
    assert page.evaluate("window.__injected === undefined")
    expect(page.locator("#documents-list")).to_contain_text("memory://root/MEMORY.md")
    expect(page.get_by_role("link", name="Documents")).to_have_attribute("aria-current", "page")
    save_screenshot(page, "documents")

    page.get_by_role("button", name="Rebuild").click()
    expect(page.locator("#toasts")).to_contain_text("Rebuild queued")
    # the worker runs it; its job.finished reloads the panel, which then names the run's outcome
    expect(page.locator("#documents-status")).to_contain_text("Last run: done")

    server.manage("shell", "-c", _NEW_VERSION.format(subject_id=dora.subject_id))
    expect(body.locator("strong")).to_have_text("Thursdays")
    expect(page.locator("#documents-list")).to_contain_text("v2")
    assert page.evaluate("window.__notReloaded === true"), "the page was reloaded"

    page.get_by_role("link", name="History and diffs").click()
    expect(page.locator("#document-diff .diff-add")).to_contain_text(["Thursdays"])
    expect(page.locator("#document-diff .diff-del")).to_contain_text(["Tuesdays"])
    save_screenshot(page, "document-history")
