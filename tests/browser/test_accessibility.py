"""Every dashboard page, at laptop and phone width, checked by axe-core (tests/browser/axe.py):
no serious or critical violation of WCAG 2.0/2.1 A and AA or of axe's best practices.

PAGES walks each page a person can open, with real data on it (alice's facts, notes, pending
items, lessons and procedures from `alice_memory`, a consequence chain from two chat turns,
documents written through the document service) and, for a few, in the state a person puts it
in (a search typed, an editor open, a confirmation asked). NOT_PAGES names the URLs deliberately
not walked, each with its reason. `test_every_page_is_walked_or_excluded_with_a_reason` is not
a browser test: it lists the URL tree and fails when a URL is in neither table, so a new page
cannot be added without its accessibility check.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.browser.axe import AXE_PATH, AxeFileMismatch, assert_accessible, axe_source, describe, run_axe
from tests.browser.conftest import LAPTOP, PHONE, Person, chat_turn, expect, log_in

WIDTHS = {"laptop": LAPTOP, "phone": PHONE}

# --- the data on the pages -------------------------------------------------------------------

# No API writes documents or dashboard logins: they are made through the services in a
# `manage.py shell` step, as in test_documents.py. The documents live in an app of their own
# with session summaries on, so alice's app keeps the defaults the other tests rely on.
_SETUP = """
import json
from django.contrib.auth import get_user_model
from memory.services import Actor, app_create, subject_get_or_create
from memory.services.documents import document_write

actor = Actor.system("browser-a11y")
users = get_user_model().objects
users.create_user("ada", password="ada-browser-pass", is_staff=True)
users.create_user("nemo", password="nemo-browser-pass")  # a login that owns no memory yet
app = app_create(name="a11y-documents", config={"memory": {"backend": "local"}}, actor=actor)
owner = users.create_user("dana", password="dana-browser-pass")
subject = subject_get_or_create(app=app, external_id="dana")
subject.owner = owner
subject.display_name = "Dana Reis"
subject.save(update_fields=["owner", "display_name"])
memory_md, _ = document_write(subject=subject, path="MEMORY.md", actor=actor, method="heuristic", content=(
    "# Dana's long-term memory\\n\\n## Decisions\\n\\n- Releases go out on **Tuesdays**.\\n"
    "- The [runbook](https://example.com/runbook) lives in the wiki.\\n\\n"
    "```\\nmake release VERSION=1.4.2\\n```\\n"
))
document_write(subject=subject, path="MEMORY.md", actor=actor, method="heuristic", content=(
    "# Dana's long-term memory\\n\\n## Decisions\\n\\n- Releases moved to **Thursdays**.\\n"
))
document_write(subject=subject, path="memory_summary.md", actor=actor, method="heuristic",
               content="Dana releases on Thursdays.\\n")
document_write(subject=subject, path="mental_models/working-style.md", actor=actor, name="working-style",
               content="- Dana reviews code before lunch.\\n")

# A procedure: consolidation's heuristic distils notes that describe steps, and its store
# writes the lesson and procedure (the clustering, which needs the worker's links, is skipped).
from consolidation.distill import SourceNote, distill_heuristic
from memory.config import get_config
from memory.services.distillation import lesson_distilled_store
from memory.services.notes import note_store

steps = [
    "Dana's release: first run the test suite, then build the wheel, then upload it to the package index",
    "Dana's release: after the upload, tag the commit and then push the tag to the main repository",
    "Dana's release: first update the changelog, then send the release notes to the team channel",
]
notes = [note_store(subject=subject, content=text, tags=["release"], actor=actor, config=get_config(app))[0]
         for text in steps]
drafted = distill_heuristic([SourceNote(n.pk, n.content, n.tags, n.created_at) for n in notes], "release")
assert drafted.lesson and drafted.procedure, drafted
lesson = lesson_distilled_store(
    subject=subject, note_ids=[n.pk for n in notes], text=drafted.lesson, tags=["release"],
    procedure=(drafted.procedure.title, drafted.procedure.steps), distiller=drafted.distiller, actor=actor,
)
print(json.dumps({"dana": subject.pk, "document": memory_md.pk, "procedure": lesson.procedures.get().pk}))
"""

ADVICE = (
    "The lint errors come from mixed formatting. Run `black .` on the whole repository to "
    "reformat every file at once, then commit the result."
)


@pytest.fixture(scope="module")
def seeded(server, memory, alice, alice_memory) -> dict:
    """The ids the pages' URLs name, and the logins that open them."""
    made = json.loads(server.manage("shell", "-c", _SETUP).strip().splitlines()[-1])
    people = {
        "alice": alice,
        "ada": Person("ada", "ada-browser-pass", "", "Ada (staff)"),
        "nemo": Person("nemo", "nemo-browser-pass", "", "Nemo"),
        "dana": Person("dana", "dana-browser-pass", "dana", "Dana Reis", subject_id=made["dana"]),
    }
    # a consequence chain, the way reflection records one: advice, then a report of its outcome
    chat_turn(memory, alice.external_id, "My lint job fails on formatting.", ADVICE, conversation="a11y-lint")
    chat_turn(
        memory,
        alice.external_id,
        "That broke the build, the CI is red now.",
        "Sorry about that: let's revert and format one file at a time.",
        conversation="a11y-lint",
    )
    consequences = memory.consequences(alice.external_id)
    assert consequences, "reflection recorded no consequence chain for the reported outcome"
    facts = memory.profile(alice.external_id)
    lessons = memory.lessons(alice.external_id)
    assert lessons, "consolidation distilled no lesson"
    fact = next(f for f in facts if f["key"] == "city")
    note = alice_memory["notes"][0]
    return {
        "people": people,
        "alice": alice.subject_id,
        "dana": made["dana"],
        "fact_id": fact["id"],
        "fact_ref": f"f:{fact['id']}",
        "note_id": note,
        "note_ref": f"n:{note}",
        "lesson_id": lessons[0]["id"],
        "procedure_id": made["procedure"],
        "document_id": made["document"],
    }


@pytest.fixture(scope="module")
def signed_in(browser, server, seeded) -> dict:
    """Each person's cookies after one sign-in through the form, so each check opens its page
    signed in without signing in again."""
    states = {}
    for name, person in seeded["people"].items():
        context = browser.new_context(base_url=server.url)
        page = context.new_page()
        log_in(page, person)
        states[name] = context.storage_state()
        context.close()
    return states


# --- what a person does on a page before it is checked ----------------------------------------


def _send_in_playground(page, seeded) -> None:
    page.get_by_label("Message").fill("What should I pack for Kyoto?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#chat-log .chat-user").last).to_contain_text("What should I pack for Kyoto?")
    expect(page.locator("#chat-status")).to_contain_text("Stored")


def _ask_to_forget_selected_notes(page, seeded) -> None:
    page.locator("#note-results input[type=checkbox]").first.check()
    page.locator("#note-bulk").get_by_role("button", name="Forget…").click()
    expect(page.locator("#note-results")).to_contain_text("for good?")


def _sign_in_wrongly(page, seeded) -> None:
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("not her password")
    page.get_by_role("button", name=re.compile(r"log in|sign in", re.I)).click()
    expect(page.locator("form")).to_contain_text(re.compile(r"correct|wrong|invalid", re.I))


def _sign_in_and_out(page, seeded) -> None:
    log_in(page, seeded["people"]["alice"])  # a session of its own: the shared one stays signed in
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url("**/accounts/login/")  # LOGOUT_REDIRECT_URL
    expect(page.get_by_label("Username")).to_be_visible()


def _open_a_facts_editor_in_place(page, seeded) -> None:
    row = page.locator(f"#fact-{seeded['fact_id']}")
    row.get_by_role("link", name="Edit").click()
    expect(row).to_have_class("is-editing")


# --- the tables -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Visit:
    """One page as a person opens it: URL name, the seeded ids its arguments come from, a
    query string, who opens it (a key of seeded["people"], or "" for nobody signed in), and
    what they do on it before the check (starting from START's page, for a page that only a
    form leads to)."""

    name: str
    args: dict = field(default_factory=dict)  # URL kwarg → key of `seeded`
    query: dict = field(default_factory=dict)
    query_ids: dict = field(default_factory=dict)  # query parameter → key of `seeded`
    start: str = ""
    who: str = "alice"
    variant: str = ""
    then: Callable | None = None
    status: int = 200

    def __str__(self) -> str:
        return self.name.removeprefix("dashboard:") + (f"[{self.variant}]" if self.variant else "")

    def url(self, seeded: dict) -> str:
        kwargs = {kwarg: seeded[key] for kwarg, key in self.args.items()}
        url = reverse(self.start or self.name, kwargs=kwargs or None)
        query = {**self.query, **{param: seeded[key] for param, key in self.query_ids.items()}}
        return f"{url}?{urlencode(query)}" if query else url


def _alice(name: str, **kwargs) -> Visit:
    """A page of alice's memory (`/s/<alice>/…`)."""
    args = {"subject_id": "alice", **kwargs.pop("args", {})}
    return Visit(f"dashboard:{name}", args=args, **kwargs)


PAGES = [
    Visit("login", who=""),
    Visit("login", who="", variant="refused", then=_sign_in_wrongly),
    Visit(
        "logout", who="", start="login", then=_sign_in_and_out
    ),  # "Log out" (a POST) leads to the login page
    Visit("dashboard:home", who="ada", variant="staff: every memory"),
    Visit("dashboard:home", who="nemo", variant="no memory yet"),
    Visit("dashboard:modes"),
    Visit("dashboard:audit", who="ada"),
    _alice("overview"),
    _alice("search"),
    _alice("search", query={"q": "marathon"}, variant="results"),
    _alice("profile"),
    _alice("profile", variant="editing in place", then=_open_a_facts_editor_in_place),
    _alice("fact_edit", args={"fact_id": "fact_id"}),
    _alice("fact_history", args={"fact_id": "fact_id"}),
    _alice("notes"),
    _alice("notes", query={"q": "running"}, variant="search"),
    _alice("notes", variant="bulk forget asked", then=_ask_to_forget_selected_notes),
    _alice("note_detail", args={"note_id": "note_id"}),
    _alice("note_edit", args={"note_id": "note_id"}),  # redirects to the detail with its editor open
    _alice("beliefs"),
    _alice("belief_detail", args={"ref": "fact_ref"}, variant="fact"),
    _alice("belief_detail", args={"ref": "note_ref"}, variant="note"),
    _alice("evidence"),
    _alice("lessons"),
    _alice("lesson_edit", args={"item_id": "lesson_id"}),
    # alice's notes describe no steps that consolidation reads as a procedure; dana's do
    Visit("dashboard:procedures", args={"subject_id": "dana"}, who="dana"),
    Visit("dashboard:procedure_edit", args={"subject_id": "dana", "item_id": "procedure_id"}, who="dana"),
    _alice("graph"),
    _alice("graph", query_ids={"focus": "note_id"}, variant="focused"),
    _alice("contract"),
    _alice("consent"),
    _alice("consequences"),
    _alice("subject_data"),
    _alice("apps"),
    _alice("access"),
    _alice("preview"),
    _alice(
        "preview", query={"message": "Any vegetarian restaurant near Alfama for Friday?"}, variant="built"
    ),
    _alice("jobs"),
    _alice("playground"),
    _alice("playground", variant="after a turn", then=_send_in_playground),
    Visit("dashboard:documents", args={"subject_id": "dana"}, who="dana"),
    Visit(
        "dashboard:document_history", args={"subject_id": "dana", "document_id": "document_id"}, who="dana"
    ),
]

NOT_PAGES = {
    # redirects, which land on a page walked above
    "dashboard:switch": "the subject switcher's form target: redirects to the same page of another memory",
    "dashboard:subject": "redirects to the overview",
    "dashboard:lesson_card": "an htmx fragment of the lessons page (without htmx it redirects there)",
    "dashboard:procedure_card": "an htmx fragment of the procedures page (without htmx it redirects there)",
    # fragments, which htmx puts into a page walked above
    "dashboard:overview_counts": "an htmx fragment of the overview",
    "dashboard:overview_pending": "an htmx fragment of the overview",
    "dashboard:overview_consolidation": "an htmx fragment of the overview",
    "dashboard:fact_row": "an htmx fragment: one row of the profile's table",
    "dashboard:consent_queue": "an htmx fragment of the consent page",
    "dashboard:consent_badge": "an htmx fragment: the nav's pending count",
    "dashboard:jobs_list": "an htmx fragment of the jobs page",
    "dashboard:documents_panel": "an htmx fragment of the documents page",
    # data, not pages
    "dashboard:graph_data": "JSON for the link graph's script",
    "dashboard:audit_export": "a CSV or JSON download",
    "dashboard:subject_data_export": "a JSON download",
    # state changes: POST only, each answering with a fragment or a redirect to a page above
    **{
        f"dashboard:{name}": "POST only: changes state"
        for name in (
            "fact_add fact_park fact_remove facts_bulk note_add notes_bulk note_vote note_forget lesson_vote "
            "lesson_park lessons_bulk procedure_park procedures_bulk "
            "lesson_delete procedure_vote procedure_delete evidence_forget pending_approve "
            "pending_reject consent_policy contract_edit contract_reset belief_revise consequence_edit "
            "consequence_delete subject_data_delete app_pause app_resume jobs_consolidate "
            "playground_send documents_rebuild documents_enqueue mental_models_seed mental_model_refresh"
        ).split()
    },
    # Django's own password pages: nothing in the dashboard links to them (accounts are made by
    # whoever runs memoryweb, `manage.py changepassword`), and they render the admin's templates
    "password_change": "Django's admin-styled page; the dashboard does not offer it",
    "password_change_done": "Django's admin-styled page; the dashboard does not offer it",
    "password_reset": "Django's admin-styled page; the dashboard does not offer it (no mail is set up)",
    "password_reset_done": "Django's admin-styled page; the dashboard does not offer it",
    "password_reset_confirm": "Django's admin-styled page; the dashboard does not offer it",
    "password_reset_complete": "Django's admin-styled page; the dashboard does not offer it",
}

# The URL tree's parts that are not the dashboard's pages: the REST API and its schema and
# Swagger UI (JSON and a third-party page for developers) and Django's admin.
NOT_WALKED_TREES = ("api/", "admin/")


def _url_names(resolver: URLResolver | None = None, prefix: str = "", namespace: str = "") -> dict[str, str]:
    """Every named URL of the tree outside NOT_WALKED_TREES: qualified name → route."""
    resolver = resolver or get_resolver()
    names: dict[str, str] = {}
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if route.startswith(NOT_WALKED_TREES):
            continue
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            names.update(_url_names(entry, route, inner))
        elif isinstance(entry, URLPattern) and entry.name:
            names[namespace + entry.name] = route
    return names


def test_every_page_is_walked_or_excluded_with_a_reason():
    names = _url_names()
    walked = {visit.name for visit in PAGES}
    assert "dashboard:overview" in names and "login" in names, names  # the walk found the tree
    assert sorted(set(names) - walked - NOT_PAGES.keys()) == [], (
        "these URLs have no accessibility check: add them to PAGES (or, if not a page, to NOT_PAGES with the reason)"
    )
    assert sorted((walked | NOT_PAGES.keys()) - set(names)) == [], "these URL names do not exist"
    assert sorted(walked & NOT_PAGES.keys()) == [], "in both tables"
    assert all(reason.strip() for reason in NOT_PAGES.values())


def test_the_vendored_axe_is_checked_before_it_is_used(tmp_path):
    assert axe_source().startswith("/*! axe v4.")
    changed = tmp_path / "axe.min.js"
    changed.write_bytes(AXE_PATH.read_bytes() + b"\n// changed\n")
    with pytest.raises(AxeFileMismatch, match="sha256"):
        axe_source(changed)


# --- the walk ---------------------------------------------------------------------------------


def _open(new_page, signed_in, seeded, visit: Visit, width: str):
    page = new_page(WIDTHS[width], signed_in[visit.who] if visit.who else None)
    url = visit.url(seeded)
    response = page.goto(url)
    assert response is not None and response.status == visit.status, (url, response and response.status)
    page.wait_for_load_state("networkidle")
    if visit.then is not None:
        visit.then(page, seeded)
        page.wait_for_load_state("networkidle")
    return page


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("visit", PAGES, ids=str)
def test_the_page_has_no_serious_accessibility_violation(new_page, signed_in, seeded, visit, width):
    page = _open(new_page, signed_in, seeded, visit, width)
    assert_accessible(page, f"{visit} at {width} width ({page.url})")


# --- the error pages --------------------------------------------------------------------------

# 403 and 500 have no URL a browser can reach on purpose, so the server's own Django renders
# them (the handlers memoryweb/urls.py names) and the browser shows that HTML at the server's
# origin, where its stylesheet loads.
_ERROR_PAGE = """
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory
from django.views.defaults import permission_denied
from memory.api.errors import api_server_error

request = RequestFactory().get("/s/1/overview/")
request.user = get_user_model().objects.get(username="alice")
response = permission_denied(request, PermissionDenied()) if {status} == 403 else api_server_error(request)
assert response.status_code == {status}, response.status_code
print(response.content.decode())
"""


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("who", ["alice", ""], ids=["signed in", "signed out"])
def test_the_404_page_has_no_serious_accessibility_violation(new_page, signed_in, seeded, who, width):
    page = new_page(WIDTHS[width], signed_in[who] if who else None)
    response = page.goto("/no/such/page/")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    assert_accessible(page, f"the 404 page at {width} width")


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("status", [403, 500])
def test_the_error_pages_have_no_serious_accessibility_violation(new_page, server, seeded, status, width):
    html = server.manage("shell", "-c", _ERROR_PAGE.format(status=status))
    page = new_page(WIDTHS[width])
    page.route(
        "**/error-page/", lambda route: route.fulfill(status=status, body=html, content_type="text/html")
    )
    response = page.goto("/error-page/")
    assert response is not None and response.status == status
    expect(page.locator(f"[data-error='{status}']")).to_be_visible()
    assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui"), (
        "no stylesheet"
    )
    assert_accessible(page, f"the {status} page at {width} width")


# --- the check itself -------------------------------------------------------------------------


@pytest.mark.browser
def test_the_check_finds_a_violation_when_there_is_one(new_page):
    """The check can fail: a page with an unlabelled field and an image without text."""
    page = new_page()
    page.set_content(
        "<!doctype html><html lang='en'><head><title>broken</title></head><body><main>"
        "<h1>Broken</h1><input type='text'><img src='data:,'><button></button></main></body></html>"
    )
    results = run_axe(page)
    found = {violation["id"] for violation in results["violations"]}
    assert {"label", "image-alt", "button-name"} <= found, describe(results["violations"])
    with pytest.raises(AssertionError, match="label"):
        assert_accessible(page, "the broken page")
