"""Access to every dashboard URL.

ROUTES lists every URL of the "dashboard" namespace that takes a subject: how to build its
other URL arguments (creating the item it points to in the given subject) and, for a POST,
a body the owner's request would accept. `test_every_dashboard_url_is_in_the_table` fails
when a URL is added without a row here. For each row:

- not logged in → redirected to the login page, nothing written;
- the owner → served (2xx/3xx);
- staff → served;
- another person (owner of another subject) → 404, nothing written;
- the owner asking for another subject's item under their own subject id → 404;
- a POST route refuses GET (405) and a POST without a CSRF token (403).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import get_resolver, reverse

from memory.models import NoteLink, Subject
from tests.dashboard_helpers import hx, logged_in
from tests.factories import FactFactory, NoteFactory
from tests.support import database_rows


def _note(subject: Subject) -> dict:
    return {"note_id": NoteFactory(subject=subject, content="Alice runs on Sundays", tags=["running"]).pk}


def _fact(subject: Subject) -> dict:
    return {"fact_id": FactFactory(subject=subject, key="city", value="Lisbon").pk}


def _bulk_notes(subject: Subject) -> dict:
    """Bulk actions name their notes in the body, not the URL."""
    return {"body": {"ids": [_note(subject)["note_id"], _note(subject)["note_id"]]}}


def _linked_note(subject: Subject) -> dict:
    note = NoteFactory(subject=subject, content="Alice trains for a half marathon")
    other = NoteFactory(subject=subject, content="Alice runs on Sundays")
    NoteLink.objects.create(src=note, dst=other, kind="related", weight=0.5)
    return {"note_id": note.pk}


def _focus(subject: Subject) -> dict:
    """The graph takes the note to centre on as a query parameter."""
    return {"query": {"focus": _linked_note(subject)["note_id"]}}


def _pending(subject: Subject) -> dict:
    from memory.models import ConsentCategory, PendingMemory

    pending = PendingMemory.objects.create(
        subject=subject,
        kind="note",
        payload={"content": "Alice has asthma"},
        category=ConsentCategory.objects.get(slug="health"),
        content_hash=f"test-{subject.pk}",
    )
    return {"pending_id": pending.pk}


def _evidence(subject: Subject) -> dict:
    from memory.models import Conversation, Evidence, Message

    conversation = Conversation.objects.create(subject=subject)
    message = Message.objects.create(
        conversation=conversation, role="user", text="the shed key is under the pot"
    )
    unit = Evidence.objects.create(
        subject=subject,
        conversation=conversation,
        message=message,
        role="user",
        text=message.text,
        occurred_at=message.occurred_at,
    )
    return {"evidence_id": unit.pk}


def _lesson(subject: Subject) -> dict:
    from memory.models import Lesson

    return {"item_id": Lesson.objects.create(subject=subject, text="Deploy on Fridays with care.").pk}


def _procedure(subject: Subject) -> dict:
    from memory.models import Procedure

    procedure = Procedure.objects.create(subject=subject, title="Release", steps=["Test it", "Ship it"])
    return {"item_id": procedure.pk}


def _bulk_facts(subject: Subject) -> dict:
    first = FactFactory(subject=subject, key="city", value="Lisbon").pk
    return {"body": {"ids": [first, FactFactory(subject=subject, key="diet", value="vegetarian").pk]}}


def _bulk_lessons(subject: Subject) -> dict:
    return {"body": {"ids": [_lesson(subject)["item_id"], _lesson(subject)["item_id"]]}}


def _bulk_procedures(subject: Subject) -> dict:
    return {"body": {"ids": [_procedure(subject)["item_id"], _procedure(subject)["item_id"]]}}


def _document(subject: Subject) -> dict:
    from memory.services import Actor
    from memory.services.documents import document_write

    document, _ = document_write(
        subject=subject,
        path="MEMORY.md",
        content="# Memory\n\n- Alice deploys on Tuesdays.\n",
        actor=Actor.system("test"),
    )
    return {"document_id": document.pk}


def _mental_model(subject: Subject) -> dict:
    from memory.services import Actor
    from memory.services.documents import document_write

    document, _ = document_write(
        subject=subject,
        path="mental_models/working-style.md",
        content="- Alice reviews code before lunch.\n",
        actor=Actor.system("test"),
        name="working-style",
    )
    return {"document_id": document.pk}


def _belief(subject: Subject) -> dict:
    return {"ref": f"f:{FactFactory(subject=subject, key='city', value='Lisbon').pk}"}


def _note_belief(subject: Subject) -> dict:
    return {"ref": f"n:{NoteFactory(subject=subject, content='Alice runs on Sundays').pk}"}


def _consequence(subject: Subject) -> dict:
    from memory.models import Consequence, Conversation, Message

    conversation = Conversation.objects.create(subject=subject)
    advice = Message.objects.create(
        conversation=conversation, role="assistant", text="Run black on everything."
    )
    report = Message.objects.create(conversation=conversation, role="user", text="that broke the build")
    chain = Consequence.objects.create(
        subject=subject,
        conversation=conversation,
        advice_message=advice,
        outcome_message=report,
        action="Run black on everything.",
        outcome="failure",
        outcome_text="that broke the build",
        tendency="fragile to sweeping changes",
    )
    return {"consequence_id": chain.pk}


def _app(subject: Subject) -> dict:
    """The subject's App (another subject's, in the test of other subjects' items: an app
    that is not this memory's)."""
    return {"app_id": subject.app_id}


def _paused_app(subject: Subject) -> dict:
    from memory.models import SubjectAppPause

    SubjectAppPause.objects.get_or_create(subject=subject, app=subject.app)
    return _app(subject)


@dataclass(frozen=True)
class Route:
    name: str
    method: str = "GET"
    make: Callable[[Subject], dict] = lambda subject: {}
    data: dict = field(default_factory=dict)

    def __str__(self):
        return f"{self.method} {self.name}"

    @property
    def has_item(self) -> bool:
        return self.make is not Route.make


# Other pages add their rows here (one per URL name and method).
ROUTES = [
    Route("dashboard:subject"),
    Route("dashboard:overview"),
    Route("dashboard:overview_counts"),
    Route("dashboard:overview_pending"),
    Route("dashboard:overview_consolidation"),
    # one search across facts, notes, lessons and procedures (memory/dashboard/views/search.py)
    Route("dashboard:search"),
    Route("dashboard:profile"),
    Route("dashboard:fact_add", "POST", data={"key": "diet", "value": "vegetarian", "pinned": "on"}),
    Route("dashboard:fact_row", make=_fact),
    Route("dashboard:fact_edit", make=_fact),
    Route("dashboard:fact_edit", "POST", make=_fact, data={"value": "Porto", "pinned": "on"}),
    Route("dashboard:fact_park", "POST", make=_fact, data={"parked": "1"}),
    Route("dashboard:facts_bulk", "POST", make=_bulk_facts, data={"action": "park"}),
    Route("dashboard:fact_remove", "POST", make=_fact),
    Route("dashboard:fact_history", make=_fact),
    Route("dashboard:notes"),
    Route("dashboard:note_add", "POST", data={"content": "Alice swims on Mondays", "tags": "sport"}),
    Route("dashboard:notes_bulk", "POST", make=_bulk_notes, data={"action": "park"}),
    Route("dashboard:note_detail", make=_linked_note),
    Route("dashboard:note_vote", "POST", make=_note, data={"signal": "up"}),
    Route("dashboard:note_edit", make=_note),
    Route("dashboard:note_edit", "POST", make=_note, data={"content": "Alice runs on Saturdays", "tags": ""}),
    Route("dashboard:note_forget", "POST", make=_note),
    Route("dashboard:evidence"),
    # beliefs (memory/dashboard/views/beliefs.py)
    Route("dashboard:beliefs"),
    Route("dashboard:belief_detail", make=_belief),
    Route("dashboard:belief_detail", make=_note_belief),
    Route(
        "dashboard:belief_revise", "POST", make=_belief, data={"action": "REINFORCE", "reason": "said again"}
    ),
    Route("dashboard:evidence_forget", "POST", make=_evidence),
    Route("dashboard:playground"),
    Route("dashboard:playground_send", "POST", data={"message": "I live in Lisbon"}),
    # lessons and procedures (pages helper)
    Route("dashboard:lessons"),
    Route("dashboard:lesson_card", make=_lesson),
    Route("dashboard:lesson_edit", make=_lesson),
    Route("dashboard:lesson_edit", "POST", make=_lesson, data={"text": "Deploy with a rollback plan."}),
    Route("dashboard:lesson_vote", "POST", make=_lesson, data={"signal": "up"}),
    Route("dashboard:lesson_park", "POST", make=_lesson, data={"parked": "1"}),
    Route("dashboard:lessons_bulk", "POST", make=_bulk_lessons, data={"action": "park"}),
    Route("dashboard:lesson_delete", "POST", make=_lesson),
    Route("dashboard:procedures"),
    Route("dashboard:procedure_card", make=_procedure),
    Route("dashboard:procedure_edit", make=_procedure),
    Route(
        "dashboard:procedure_edit", "POST", make=_procedure, data={"title": "Release", "steps": "Test\nShip"}
    ),
    Route("dashboard:procedure_vote", "POST", make=_procedure, data={"signal": "down"}),
    Route("dashboard:procedure_park", "POST", make=_procedure, data={"parked": "1"}),
    Route("dashboard:procedures_bulk", "POST", make=_bulk_procedures, data={"action": "up"}),
    Route("dashboard:procedure_delete", "POST", make=_procedure),
    Route("dashboard:graph"),
    Route("dashboard:graph", make=_focus),
    Route("dashboard:graph_data"),
    Route("dashboard:graph_data", make=_focus),
    Route("dashboard:consent"),
    Route("dashboard:consent_queue"),
    Route("dashboard:consent_badge"),
    Route("dashboard:pending_approve", "POST", make=_pending),
    Route("dashboard:pending_reject", "POST", make=_pending),
    Route("dashboard:consent_policy", "POST", data={"category": "health", "policy": "allow"}),
    # your data: download and delete (memory/dashboard/views/portable.py)
    Route("dashboard:subject_data"),
    Route("dashboard:subject_data_export"),
    Route("dashboard:subject_data_delete", "POST", data={"confirm": "alice"}),
    # the interaction contract (memory/dashboard/views/contract.py)
    Route("dashboard:contract"),
    Route("dashboard:contract_edit", "POST", data={"mode": "coding_debug", "depth": "brief", "reason": ""}),
    Route("dashboard:contract_reset", "POST", data={"mode": "coding_debug", "dimension": "depth"}),
    Route("dashboard:preview"),
    # consequence chains and the conversations' state (memory/dashboard/views/consequences.py)
    Route("dashboard:consequences"),
    Route(
        "dashboard:consequence_edit",
        "POST",
        make=_consequence,
        data={
            "action": "Run black on one file.",
            "outcome": "failure",
            "outcome_text": "the build broke",
            "tendency": "fragile to sweeping changes",
        },
    ),
    Route("dashboard:consequence_delete", "POST", make=_consequence),
    Route("dashboard:jobs"),
    Route("dashboard:jobs_list"),
    Route("dashboard:jobs_consolidate", "POST"),
    # session-summary documents (chat/documents_views.py)
    Route("dashboard:documents"),
    Route("dashboard:documents_panel"),
    Route("dashboard:documents_rebuild", "POST"),
    Route("dashboard:documents_enqueue", "POST"),
    Route("dashboard:document_history", make=_document),
    Route("dashboard:mental_model_refresh", "POST", make=_mental_model),
    Route("dashboard:mental_models_seed", "POST"),
    # the apps using this memory and the access log (memory/dashboard/views/apps.py)
    Route("dashboard:apps"),
    Route("dashboard:app_pause", "POST", make=_app),
    Route("dashboard:app_resume", "POST", make=_paused_app),
    Route("dashboard:access"),
]

# Dashboard URLs without a subject: tested on their own below (the staff-only audit pages in
# test_dashboard_audit.py too).
SUBJECTLESS = {
    "dashboard:home",
    "dashboard:switch",
    "dashboard:audit",
    "dashboard:audit_export",
    "dashboard:modes",
}
STAFF_ONLY = {"dashboard:audit": {}, "dashboard:audit_export": {"fmt": "csv"}}
# subjectless reference pages any logged-in user may read (they show no subject's data)
EVERY_USER = ["dashboard:modes"]


def _target(route: Route, subject: Subject, item_subject: Subject | None = None) -> tuple[str, dict]:
    """The route's URL and POST body (the row's data, plus items named in the body)."""
    kwargs = route.make(item_subject or subject)
    query = kwargs.pop("query", None)  # an item named in the query string (the graph's focus)
    body = {**route.data, **kwargs.pop("body", {})}  # items named in the body (bulk actions' ids)
    url = reverse(route.name, kwargs={"subject_id": subject.pk, **kwargs})
    return (f"{url}?{urlencode(query)}" if query else url), body


def _url(route: Route, subject: Subject, item_subject: Subject | None = None) -> str:
    return _target(route, subject, item_subject)[0]


def _send(client: Client, route: Route, target: tuple[str, dict], *, htmx: bool = False):
    url, body = target
    if htmx:
        return hx(client, route.method, url, body)
    if route.method == "POST":
        return client.post(url, body)
    return client.get(url)


def _writes() -> dict:
    return database_rows()


def test_every_dashboard_url_is_in_the_table():
    namespace = get_resolver().namespace_dict["dashboard"][1]
    names = {f"dashboard:{name}" for name in namespace.reverse_dict if isinstance(name, str)}
    covered = {route.name for route in ROUTES} | SUBJECTLESS
    assert names - covered == set(), "add these URLs to ROUTES"
    assert covered - names == set(), "ROUTES lists URLs that do not exist"


@pytest.mark.parametrize("route", ROUTES, ids=str)
def test_anonymous_is_sent_to_login(route, owned_subject, web_client):
    target = _target(route, owned_subject)
    before = _writes()
    response = _send(web_client, route, target)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert _writes() == before


@pytest.mark.parametrize("route", ROUTES, ids=str)
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_owner_is_served(route, htmx, owned_subject, owner_client):
    response = _send(owner_client, route, _target(route, owned_subject), htmx=htmx)
    assert 200 <= response.status_code < 400, response.content[:500]


@pytest.mark.parametrize("route", ROUTES, ids=str)
def test_staff_is_served_any_subject(route, owned_subject, staff_client):
    response = _send(staff_client, route, _target(route, owned_subject))
    assert 200 <= response.status_code < 400, response.content[:500]


@pytest.mark.parametrize("route", ROUTES, ids=str)
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_another_person_gets_404_and_nothing_changes(route, htmx, owned_subject, stranger_client):
    target = _target(route, owned_subject)
    before = _writes()
    response = _send(stranger_client, route, target, htmx=htmx)
    assert response.status_code == 404
    assert _writes() == before


@pytest.mark.parametrize("route", [r for r in ROUTES if r.has_item], ids=str)
def test_another_subjects_item_under_your_own_subject_is_404(
    route, owned_subject, stranger_subject, owner_client
):
    target = _target(route, owned_subject, item_subject=stranger_subject)
    before = _writes()
    response = _send(owner_client, route, target)
    assert response.status_code == 404
    assert _writes() == before


# URLs that only change state (a URL serving GET too, like an editor, is left out)
POST_ONLY = [
    r for r in ROUTES if r.method == "POST" and r.name not in {o.name for o in ROUTES if o.method == "GET"}
]


@pytest.mark.parametrize("route", POST_ONLY, ids=str)
def test_state_changes_refuse_get(route, owned_subject, owner_client):
    assert owner_client.get(_url(route, owned_subject)).status_code == 405


@pytest.mark.parametrize("route", [r for r in ROUTES if r.method == "POST"], ids=str)
def test_state_changes_need_the_csrf_token(route, owned_subject, owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    url, body = _target(route, owned_subject)
    before = _writes()
    assert client.post(url, body).status_code == 403
    assert _writes() == before


def test_a_staff_user_who_is_not_logged_in_as_staff_is_a_stranger(owned_subject, stranger):
    """Ownership, not being logged in, is what opens a subject: a plain user owning nothing
    gets 404 on alice's overview."""
    response = logged_in(stranger).get(reverse("dashboard:overview", args=[owned_subject.pk]))
    assert response.status_code == 404


def test_home_sends_the_owner_of_one_subject_to_its_overview(owned_subject, owner_client):
    response = owner_client.get(reverse("dashboard:home"))
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:overview", args=[owned_subject.pk])


def test_home_lists_only_your_own_subjects(owned_subject, owner, stranger_subject):
    from tests.factories import SubjectFactory

    second = SubjectFactory(app=owned_subject.app, external_id="alice-work", owner=owner)
    response = logged_in(owner).get(reverse("dashboard:home"))
    assert response.status_code == 200
    listed = {s.pk for s in response.context["subjects"]}
    assert listed == {owned_subject.pk, second.pk}
    assert stranger_subject.external_id not in response.content.decode()


def test_home_says_what_to_do_when_no_subject_is_yours(stranger, owned_subject):
    user = logged_in(stranger)
    stranger.subjects.all().update(owner=None)
    response = user.get(reverse("dashboard:home"))
    assert response.status_code == 200
    assert b"No memory is linked to your account yet" in response.content


def test_staff_home_lists_every_subject(owned_subject, stranger_subject, staff_client):
    response = staff_client.get(reverse("dashboard:home"))
    listed = {s.pk for s in response.context["subjects"]}
    assert {owned_subject.pk, stranger_subject.pk} <= listed


def test_switch_goes_to_the_same_page_of_another_own_subject(owned_subject, owner):
    from tests.factories import SubjectFactory

    second = SubjectFactory(app=owned_subject.app, external_id="alice-work", owner=owner)
    response = logged_in(owner).get(reverse("dashboard:switch"), {"subject": second.pk, "page": "notes"})
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:notes", args=[second.pk])


def test_switch_to_someone_elses_subject_is_404(owned_subject, stranger_subject, owner_client):
    response = owner_client.get(reverse("dashboard:switch"), {"subject": stranger_subject.pk})
    assert response.status_code == 404


def test_switch_to_an_unknown_page_lands_on_the_overview(owned_subject, owner_client):
    response = owner_client.get(reverse("dashboard:switch"), {"subject": owned_subject.pk, "page": "nope"})
    assert response["Location"] == reverse("dashboard:overview", args=[owned_subject.pk])


def test_subjectless_pages_need_a_login(web_client, db):
    for name in SUBJECTLESS:
        response = web_client.get(reverse(name, kwargs=STAFF_ONLY.get(name)))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name", sorted(STAFF_ONLY))
def test_staff_only_pages_are_404_for_everyone_else_and_write_nothing(name, owner_client, staff_client):
    url = reverse(name, kwargs=STAFF_ONLY[name])
    before = _writes()
    assert owner_client.get(url).status_code == 404
    assert _writes() == before
    assert staff_client.get(url).status_code == 200


@pytest.mark.parametrize("name", EVERY_USER)
@pytest.mark.parametrize("who", ["owner_client", "stranger_client", "staff_client"])
def test_reference_pages_serve_every_logged_in_user_and_write_nothing(name, who, request):
    client = request.getfixturevalue(who)
    before = _writes()
    assert client.get(reverse(name)).status_code == 200
    assert _writes() == before


def test_the_switcher_offers_only_your_subjects(owned_subject, stranger_subject, owner_client):
    response = owner_client.get(reverse("dashboard:overview", args=[owned_subject.pk]))
    offered = {s.pk for s in response.context["switch_subjects"]}
    assert offered == {owned_subject.pk}


def test_login_page_signs_in_and_lands_on_the_dashboard(owned_subject, owner):
    from tests.dashboard_helpers import PASSWORD

    client = Client()
    page = client.get(reverse("login"))
    assert page.status_code == 200
    response = client.post(reverse("login"), {"username": owner.username, "password": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard:home")


def test_wrong_password_shows_the_error(owned_subject, owner):
    response = Client().post(reverse("login"), {"username": owner.username, "password": "nope"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content


def test_logout_is_a_post(owned_subject, owner_client):
    assert owner_client.get(reverse("logout")).status_code == 405
    response = owner_client.post(reverse("logout"))
    assert response.status_code == 302
    assert owner_client.get(reverse("dashboard:home")).status_code == 302  # back to login
