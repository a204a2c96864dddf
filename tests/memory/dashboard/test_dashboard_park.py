"""The person writes too: add a note from the dashboard, park a note or a fact (kept, never in
any context, search or tool; reversible), and bulk actions on the selected notes (park, unpark,
vote, re-tag, forget with confirmation)."""

import pytest
from django.urls import reverse

from memory.config import get_config
from memory.context import context_build
from memory.models import AuditEvent, Note, NoteVersion, ProfileFact, VoteEvent
from memory.search.lexical import NoteFilter
from memory.selectors import fact_list, note_recall
from memory.services import Actor, fact_set, notes_evict_overflow, person_vote
from tests.dashboard_helpers import hx
from tests.factories import FactFactory, NoteFactory

pytestmark = pytest.mark.django_db

MESSAGE = "Any tips for my marathon training?"


def _context_text(subject) -> str:
    """Everything the model would get for MESSAGE (stable prefix and every tail section)."""
    context = context_build(subject=subject, message=MESSAGE, config=get_config(subject.app), record=False)
    return "\n".join([context.stable_prefix.text, *(block.text for block in context.sections)])


def _bulk(client, subject, action, ids, **extra):
    url = reverse("dashboard:notes_bulk", args=[subject.pk])
    return hx(client, "POST", url, {"action": action, "ids": ids, **extra})


@pytest.fixture
def marathon(owned_subject):
    return NoteFactory(
        subject=owned_subject, content="Alice trains for the Lisbon marathon", tags=["running"]
    )


# --- add a note -----------------------------------------------------------------------------
def test_the_person_adds_a_note_stored_as_the_api_stores_one(owned_subject, owner_client):
    url = reverse("dashboard:note_add", args=[owned_subject.pk])
    response = owner_client.post(
        url, {"content": "Alice trains for a marathon in May", "tags": "Running, goals"}
    )

    assert response.status_code == 302
    note = Note.objects.get(subject=owned_subject)
    assert (note.content, note.tags, note.origin) == (
        "Alice trains for a marathon in May",
        ["running", "goals"],
        "dashboard",
    )
    assert NoteVersion.objects.filter(note=note, version=1).exists()
    event = AuditEvent.objects.get(action="note.stored", object_id=str(note.pk))
    assert (event.actor_kind, event.actor_id) == ("user", "alice-login")
    assert "marathon in May" in _context_text(owned_subject)  # stored, not queued for consent

    # the same again is merged into it, as through the API
    owner_client.post(url, {"content": "Alice trains for a marathon in May", "tags": "running"})
    assert Note.objects.filter(subject=owned_subject).count() == 1


def test_an_empty_note_is_refused_naming_the_field(owned_subject, owner_client):
    url = reverse("dashboard:note_add", args=[owned_subject.pk])
    response = owner_client.post(url, {"content": "   ", "tags": ""})
    assert response.status_code == 400
    assert b'data-field="content"' in response.content
    assert not Note.objects.exists()


def test_a_bad_tag_on_a_new_note_is_refused(owned_subject, owner_client):
    url = reverse("dashboard:note_add", args=[owned_subject.pk])
    response = owner_client.post(url, {"content": "Alice likes tea", "tags": "no spaces!"})
    assert response.status_code == 400
    assert not Note.objects.exists()


def test_nobody_adds_a_note_to_another_persons_memory(owned_subject, stranger_client):
    url = reverse("dashboard:note_add", args=[owned_subject.pk])
    assert stranger_client.post(url, {"content": "Alice likes tea"}).status_code == 404
    assert not Note.objects.exists()


# --- park a note ----------------------------------------------------------------------------
def test_a_parked_note_is_kept_but_never_in_the_context_nor_recalled(owned_subject, owner_client, marathon):
    assert "Lisbon marathon" in _context_text(owned_subject)

    response = _bulk(owner_client, owned_subject, "park", [marathon.pk])

    assert response.status_code == 200
    marathon.refresh_from_db()
    assert marathon.parked_at is not None
    assert AuditEvent.objects.filter(action="note.parked", object_id=str(marathon.pk)).exists()
    assert "Lisbon marathon" not in _context_text(owned_subject)
    assert note_recall(subject=owned_subject, query="marathon") == []
    assert note_recall(subject=owned_subject, query="") == []  # the MCP list, GET …/notes

    # listed under "Parked" with its badge, not among the live notes
    notes_url = reverse("dashboard:notes", args=[owned_subject.pk])
    assert owner_client.get(notes_url).context["results"] == []
    parked = owner_client.get(notes_url, {"archived": "parked"})
    assert [note.pk for note, _ in parked.context["results"]] == [marathon.pk]
    assert b">Parked</span>" in parked.content
    searched = owner_client.get(notes_url, {"archived": "parked", "q": "marathon"})
    assert [note.pk for note, _ in searched.context["results"]] == [marathon.pk]

    _bulk(owner_client, owned_subject, "unpark", [marathon.pk])
    marathon.refresh_from_db()
    assert marathon.parked_at is None
    assert "Lisbon marathon" in _context_text(owned_subject)
    assert [n.pk for n, _ in note_recall(subject=owned_subject, query="marathon")] == [marathon.pk]


def test_parking_twice_changes_nothing_more(owned_subject, owner_client, marathon):
    _bulk(owner_client, owned_subject, "park", [marathon.pk])
    _bulk(owner_client, owned_subject, "park", [marathon.pk])
    assert AuditEvent.objects.filter(action="note.parked").count() == 1


def test_parked_notes_are_never_evicted(owned_subject, owner_client):
    kept = NoteFactory(subject=owned_subject, content="the oldest note, parked")
    _bulk(owner_client, owned_subject, "park", [kept.pk])
    for n in range(3):
        NoteFactory(subject=owned_subject, content=f"newer note {n}")
    config = get_config(owned_subject.app).with_overrides({"notes": {"maxEntries": 2}})
    assert notes_evict_overflow(subject=owned_subject, config=config, actor=Actor.system("test")) == 1
    assert Note.objects.filter(pk=kept.pk).exists()
    assert Note.objects.filter(subject=owned_subject, parked_at=None).count() == 2


# --- park a fact ----------------------------------------------------------------------------
def test_a_parked_fact_leaves_the_context_and_comes_back(owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon", pinned=True)
    assert "Lisbon" in _context_text(owned_subject)
    url = reverse("dashboard:fact_park", args=[owned_subject.pk, fact.pk])

    response = hx(owner_client, "POST", url, {"parked": "1"})

    assert response.status_code == 200
    assert b">Parked</span>" in response.content and b">Unpark</button>" in response.content
    fact.refresh_from_db()
    assert fact.parked_at is not None
    assert "Lisbon" not in _context_text(owned_subject)
    assert fact_list(subject=owned_subject) == []  # the API's GET …/profile, the tools
    page = owner_client.get(reverse("dashboard:profile", args=[owned_subject.pk]))
    assert [f.pk for f in page.context["facts"]] == [fact.pk]  # kept, and listed here
    assert AuditEvent.objects.filter(action="fact.parked", object_id=str(fact.pk)).exists()

    # a new value of a parked fact stays parked
    new, _ = fact_set(subject=owned_subject, key="city", value="Porto", actor=Actor.system("test"))
    assert new.parked_at is not None
    assert "Porto" not in _context_text(owned_subject)

    owner_client.post(reverse("dashboard:fact_park", args=[owned_subject.pk, new.pk]), {"parked": "0"})
    assert ProfileFact.objects.get(pk=new.pk).parked_at is None
    assert "Porto" in _context_text(owned_subject)


def test_a_bad_park_value_is_refused(owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    url = reverse("dashboard:fact_park", args=[owned_subject.pk, fact.pk])
    assert hx(owner_client, "POST", url, {"parked": "maybe"}).status_code == 400
    fact.refresh_from_db()
    assert fact.parked_at is None


def test_nobody_parks_another_persons_fact(owned_subject, stranger_subject, owner_client, stranger_client):
    mine = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    theirs = FactFactory(subject=stranger_subject, key="city", value="Paris")
    assert (
        stranger_client.post(
            reverse("dashboard:fact_park", args=[owned_subject.pk, mine.pk]), {"parked": "1"}
        ).status_code
        == 404
    )
    url = reverse("dashboard:fact_park", args=[owned_subject.pk, theirs.pk])
    assert owner_client.post(url, {"parked": "1"}).status_code == 404
    assert not ProfileFact.objects.exclude(parked_at=None).exists()


# --- bulk actions ---------------------------------------------------------------------------
def test_bulk_forget_asks_first(owned_subject, owner_client, marathon):
    other = NoteFactory(subject=owned_subject, content="Alice swims")
    response = _bulk(owner_client, owned_subject, "forget", [marathon.pk, other.pk])
    assert response.status_code == 200
    assert b"Forget 2 notes for good?" in response.content
    assert Note.objects.count() == 2

    # a note ticked after the question was asked is asked about again
    third = NoteFactory(subject=owned_subject, content="Alice cycles")
    response = _bulk(
        owner_client, owned_subject, "forget", [marathon.pk, other.pk, third.pk], confirmed="on", count=2
    )
    assert b"Forget 3 notes for good?" in response.content
    assert Note.objects.count() == 3

    ids = [marathon.pk, other.pk, third.pk]
    response = _bulk(owner_client, owned_subject, "forget", ids, confirmed="on", count=3)
    assert response.status_code == 200
    assert not Note.objects.exists()
    assert AuditEvent.objects.filter(action="note.forgotten").count() == 3


def test_bulk_forget_without_javascript_asks_on_the_page(owned_subject, owner_client, marathon):
    url = reverse("dashboard:notes_bulk", args=[owned_subject.pk])
    response = owner_client.post(url, {"action": "forget", "ids": [marathon.pk]})
    assert response.status_code == 200
    assert b"Forget 1 note for good?" in response.content
    assert Note.objects.filter(pk=marathon.pk).exists()
    response = owner_client.post(
        url, {"action": "forget", "ids": [marathon.pk], "confirmed": "on", "count": 1}
    )
    assert response.status_code == 302
    assert not Note.objects.exists()


def test_bulk_vote_sets_the_persons_one_vote(owned_subject, owner_client, marathon):
    other = NoteFactory(subject=owned_subject, content="Alice swims")
    actor = Actor.user(owned_subject.owner)
    _bulk(owner_client, owned_subject, "up", [marathon.pk, other.pk])
    _bulk(owner_client, owned_subject, "up", [marathon.pk, other.pk])  # set, never withdrawn
    assert [person_vote(item_kind="note", item_id=n.pk, actor=actor) for n in (marathon, other)] == [1, 1]
    _bulk(owner_client, owned_subject, "down", [marathon.pk])
    assert person_vote(item_kind="note", item_id=marathon.pk, actor=actor) == -1
    marathon.refresh_from_db()
    assert marathon.vote_score < 0


def test_bulk_retag_writes_new_versions(owned_subject, owner_client, marathon):
    other = NoteFactory(subject=owned_subject, content="Alice swims", tags=["sport"])
    _bulk(owner_client, owned_subject, "tag_add", [marathon.pk, other.pk], tag="Sport")
    marathon.refresh_from_db()
    other.refresh_from_db()
    assert (marathon.tags, other.tags) == (["running", "sport"], ["sport"])
    assert (marathon.version, other.version) == (2, 1)  # already tagged: nothing written

    _bulk(owner_client, owned_subject, "tag_remove", [marathon.pk, other.pk], tag="running")
    marathon.refresh_from_db()
    assert marathon.tags == ["sport"]
    assert NoteVersion.objects.filter(note=marathon).count() == 3


@pytest.mark.parametrize(
    "data",
    [
        {"action": "explode"},
        {"action": "park", "ids": []},
        {"action": "park", "ids": ["n1"]},
        {"action": "tag_add", "tag": "no spaces"},
        {"action": "tag_add", "tag": ""},
    ],
    ids=["action", "no-ids", "bad-id", "bad-tag", "no-tag"],
)
def test_bad_bulk_input_is_refused_and_nothing_changes(data, owned_subject, owner_client, marathon):
    body = {"ids": [marathon.pk], **data}
    response = hx(owner_client, "POST", reverse("dashboard:notes_bulk", args=[owned_subject.pk]), body)
    assert response.status_code == 400
    marathon.refresh_from_db()
    assert (marathon.parked_at, marathon.tags, marathon.version) == (None, ["running"], 1)


def test_bulk_with_another_persons_note_is_404_and_changes_nothing(
    owned_subject, stranger_subject, owner_client, stranger_client, marathon
):
    theirs = NoteFactory(subject=stranger_subject, content="Bob likes chess")
    for action in ("park", "forget"):
        ids = [marathon.pk, theirs.pk]
        response = _bulk(owner_client, owned_subject, action, ids, confirmed="on", count=2)
        assert response.status_code == 404
    # their own note under their own subject id is refused to alice's login, too
    assert _bulk(stranger_client, owned_subject, "park", [marathon.pk]).status_code == 404
    assert Note.objects.filter(parked_at=None).count() == 2
    assert not VoteEvent.objects.exists()


def test_parked_notes_stay_out_of_linking_and_tools_filters(owned_subject, owner_client, marathon):
    _bulk(owner_client, owned_subject, "park", [marathon.pk])
    assert (
        note_recall(subject=owned_subject, query="marathon", filters=NoteFilter(include_archived=True)) == []
    )
    assert [
        n.pk
        for n, _ in note_recall(
            subject=owned_subject, query="marathon", filters=NoteFilter(include_parked=True)
        )
    ] == [marathon.pk]


# --- export and import ----------------------------------------------------------------------
def test_parking_travels_with_the_export_and_stays_out_of_the_context(owned_subject, owner_client, marathon):
    from memory.selectors import subject_export
    from memory.services import subject_delete
    from memory.services.portable import export_validate, subject_import

    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon", pinned=True)
    _bulk(owner_client, owned_subject, "park", [marathon.pk])
    owner_client.post(reverse("dashboard:fact_park", args=[owned_subject.pk, fact.pk]), {"parked": "1"})
    document = subject_export(subject=owned_subject)
    export_validate(document)
    assert document["notes"][0]["parked_at"] and document["facts"][0]["parked_at"]

    app, actor = owned_subject.app, Actor.system("test")
    subject_delete(subject=owned_subject, actor=actor)
    subject_import(app=app, external_id="alice", document=document, actor=actor, config=get_config(app))
    imported = Note.objects.get(subject__external_id="alice")
    assert imported.parked_at is not None
    assert ProfileFact.objects.get(subject__external_id="alice").parked_at is not None
    assert "Lisbon" not in _context_text(imported.subject)

    # an export made before parking existed (no parked_at) imports as not parked
    for item in (*document["notes"], *document["facts"]):
        del item["parked_at"]
    subject_delete(subject=imported.subject, actor=actor)
    subject_import(app=app, external_id="alice", document=document, actor=actor, config=get_config(app))
    assert Note.objects.get(subject__external_id="alice").parked_at is None


def test_the_note_page_parks_and_unparks_its_note(owned_subject, owner_client, marathon):
    detail = reverse("dashboard:note_detail", args=[owned_subject.pk, marathon.pk])
    assert b'value="park"' in owner_client.get(detail).content
    url = reverse("dashboard:notes_bulk", args=[owned_subject.pk])

    response = owner_client.post(url, {"action": "park", "ids": [marathon.pk], "next": detail})

    assert response.status_code == 302 and response["Location"] == detail
    page = owner_client.get(detail)
    assert b">Parked</span>" in page.content and b'value="unpark"' in page.content
    elsewhere = owner_client.post(
        url, {"action": "unpark", "ids": [marathon.pk], "next": "https://evil.example/"}
    )
    assert elsewhere["Location"] == reverse("dashboard:notes", args=[owned_subject.pk])
    marathon.refresh_from_db()
    assert marathon.parked_at is None


def test_parked_memories_feed_no_mental_model(owned_subject, owner_client, marathon):
    from chat.summaries.mental_models import _sources

    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    _bulk(owner_client, owned_subject, "park", [marathon.pk])
    owner_client.post(reverse("dashboard:fact_park", args=[owned_subject.pk, fact.pk]), {"parked": "1"})
    sources = _sources(owned_subject)
    assert (sources.notes, sources.facts) == ([], [])


# --- bulk actions on facts ------------------------------------------------------------------
def _facts_bulk(client, subject, action, ids, **extra):
    url = reverse("dashboard:facts_bulk", args=[subject.pk])
    return hx(client, "POST", url, {"action": action, "ids": ids, **extra})


def test_bulk_park_and_unpark_the_selected_facts(owned_subject, owner_client):
    city = FactFactory(subject=owned_subject, key="city", value="Lisbon", pinned=True)
    diet = FactFactory(subject=owned_subject, key="diet", value="vegetarian", pinned=True)
    assert "Lisbon" in _context_text(owned_subject) and "vegetarian" in _context_text(owned_subject)

    response = _facts_bulk(owner_client, owned_subject, "park", [city.pk, diet.pk])

    assert response.status_code == 200
    assert b'id="profile-body"' in response.content
    assert response.content.count(b">Parked</span>") == 2
    assert "Lisbon" not in _context_text(owned_subject) and "vegetarian" not in _context_text(owned_subject)
    assert fact_list(subject=owned_subject) == []
    assert AuditEvent.objects.filter(action="fact.parked").count() == 2

    _facts_bulk(owner_client, owned_subject, "unpark", [city.pk])

    assert [f.key for f in fact_list(subject=owned_subject)] == ["city"]
    assert "Lisbon" in _context_text(owned_subject) and "vegetarian" not in _context_text(owned_subject)


def test_bulk_remove_of_facts_asks_first_and_keeps_their_history(owned_subject, owner_client):
    city = FactFactory(subject=owned_subject, key="city", value="Lisbon", pinned=True)
    diet = FactFactory(subject=owned_subject, key="diet", value="vegetarian", pinned=True)

    response = _facts_bulk(owner_client, owned_subject, "remove", [city.pk, diet.pk])

    assert b"Remove 2 facts?" in response.content
    assert ProfileFact.objects.filter(valid_to=None).count() == 2
    # without JavaScript: the question on the page, then back to the profile
    url = reverse("dashboard:facts_bulk", args=[owned_subject.pk])
    asked = owner_client.post(url, {"action": "remove", "ids": [city.pk]})
    assert asked.status_code == 200 and b"Remove 1 fact?" in asked.content

    response = _facts_bulk(owner_client, owned_subject, "remove", [city.pk, diet.pk], confirmed="on", count=2)

    assert response.status_code == 200
    assert fact_list(subject=owned_subject, include_parked=True) == []
    assert ProfileFact.objects.count() == 2  # closed versions: the history stays
    assert "Lisbon" not in _context_text(owned_subject)


@pytest.mark.parametrize(
    "data",
    [
        {"action": "explode"},
        {"action": "up"},
        {"action": "park", "ids": []},
        {"action": "park", "ids": ["f1"]},
    ],
    ids=["action", "no-vote", "no-ids", "bad-id"],
)
def test_bad_bulk_input_on_facts_is_refused_and_nothing_changes(data, owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    body = {"ids": [fact.pk], **data}
    response = hx(owner_client, "POST", reverse("dashboard:facts_bulk", args=[owned_subject.pk]), body)
    assert response.status_code == 400
    fact.refresh_from_db()
    assert (fact.parked_at, fact.valid_to) == (None, None)


def test_bulk_on_another_persons_or_a_closed_fact_is_404_and_changes_nothing(
    owned_subject, stranger_subject, owner_client, stranger_client, actor
):
    mine = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    theirs = FactFactory(subject=stranger_subject, key="city", value="Oslo")
    fact_set(subject=owned_subject, key="diet", value="vegan", actor=actor)
    fact_set(subject=owned_subject, key="diet", value="vegetarian", actor=actor)  # closes "vegan"
    closed = ProfileFact.objects.get(key="diet", valid_to__isnull=False)
    for ids in ([mine.pk, theirs.pk], [mine.pk, closed.pk]):
        for action in ("park", "remove"):
            response = _facts_bulk(owner_client, owned_subject, action, ids, confirmed="on", count=2)
            assert response.status_code == 404, (ids, action)
    assert _facts_bulk(stranger_client, owned_subject, "park", [mine.pk]).status_code == 404
    assert ProfileFact.objects.filter(parked_at__isnull=False).count() == 0
    assert ProfileFact.objects.filter(valid_to=None).count() == 3
