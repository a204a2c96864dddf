"""Parking lessons and procedures from the dashboard (their cards' Park/Unpark, the "Show"
filter) and the bulk actions on the selected ones (park, unpark, vote, delete with
confirmation); the search page's "include parked" covers them too."""

import pytest
from django.urls import reverse

from memory.config import get_config
from memory.context import context_build
from memory.models import AuditEvent, Lesson, Procedure, VoteEvent
from memory.services import Actor, person_vote
from tests.dashboard_helpers import hx

pytestmark = pytest.mark.django_db

MESSAGE = "How should I deploy the billing service on Friday?"


def _lesson(subject, text="Never deploy the billing service on a Friday.") -> Lesson:
    return Lesson.objects.create(subject=subject, text=text)


def _procedure(subject, title="Deploy the billing service") -> Procedure:
    return Procedure.objects.create(
        subject=subject, title=title, steps=["Run the billing tests", "Deploy billing to staging first"]
    )


# page name, singular, the maker, the prefix the context names one with
KINDS = {
    "lessons": ("lesson", _lesson, "l"),
    "procedures": ("procedure", _procedure, "p"),
}


def _context_text(subject) -> str:
    context = context_build(subject=subject, message=MESSAGE, config=get_config(subject.app), record=False)
    return "\n".join([context.stable_prefix.text, *(block.text for block in context.sections)])


def _bulk(client, subject, page, action, ids, **extra):
    url = reverse(f"dashboard:{page}_bulk", args=[subject.pk])
    return hx(client, "POST", url, {"action": action, "ids": ids, **extra})


def _listed(client, subject, page, **params) -> list[int]:
    response = client.get(reverse(f"dashboard:{page}", args=[subject.pk]), params)
    assert response.status_code == 200
    return [item.pk for item, _ in response.context["results"]]


@pytest.mark.parametrize("page", KINDS)
def test_the_cards_park_button_takes_it_out_of_the_context_and_unpark_brings_it_back(
    page, owned_subject, owner_client
):
    singular, make, prefix = KINDS[page]
    item = make(owned_subject)
    ref = f"[{prefix}:{item.pk}]"
    assert ref in _context_text(owned_subject)
    url = reverse(f"dashboard:{singular}_park", args=[owned_subject.pk, item.pk])

    response = hx(owner_client, "POST", url, {"parked": "1"})

    assert response.status_code == 200
    assert f'id="{singular}-{item.pk}"'.encode() in response.content  # the card, answered again
    assert b">Parked</span>" in response.content and b">Unpark</button>" in response.content
    item.refresh_from_db()
    assert item.parked_at is not None
    assert AuditEvent.objects.filter(action=f"{singular}.parked", object_id=str(item.pk)).exists()
    assert ref not in _context_text(owned_subject)
    # the list leaves it out; "Parked" shows it, with its badge
    assert _listed(owner_client, owned_subject, page) == []
    assert _listed(owner_client, owned_subject, page, q="billing") == []
    assert _listed(owner_client, owned_subject, page, parked="parked") == [item.pk]
    assert _listed(owner_client, owned_subject, page, parked="parked", q="billing") == [item.pk]
    assert _listed(owner_client, owned_subject, page, parked="all") == [item.pk]
    shown = owner_client.get(reverse(f"dashboard:{page}", args=[owned_subject.pk]), {"parked": "parked"})
    assert b">Parked</span>" in shown.content

    response = owner_client.post(url, {"parked": "0"})  # without JavaScript: back to the list

    assert response.status_code == 302
    item.refresh_from_db()
    assert item.parked_at is None
    assert ref in _context_text(owned_subject)
    assert _listed(owner_client, owned_subject, page) == [item.pk]


@pytest.mark.parametrize("page", KINDS)
def test_a_bad_park_value_or_show_filter_is_refused(page, owned_subject, owner_client):
    singular, make, _ = KINDS[page]
    item = make(owned_subject)
    url = reverse(f"dashboard:{singular}_park", args=[owned_subject.pk, item.pk])
    assert hx(owner_client, "POST", url, {"parked": "maybe"}).status_code == 400
    item.refresh_from_db()
    assert item.parked_at is None
    listed = owner_client.get(reverse(f"dashboard:{page}", args=[owned_subject.pk]), {"parked": "hidden"})
    assert listed.status_code == 400 and b'data-field="parked"' in listed.content


@pytest.mark.parametrize("page", KINDS)
def test_nobody_parks_another_persons_lesson_or_procedure(
    page, owned_subject, stranger_subject, owner_client
):
    singular, make, _ = KINDS[page]
    theirs = make(stranger_subject)
    url = reverse(f"dashboard:{singular}_park", args=[owned_subject.pk, theirs.pk])
    assert owner_client.post(url, {"parked": "1"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.parked_at is None


@pytest.mark.parametrize("page", KINDS)
def test_bulk_park_and_unpark_the_selected_ones(page, owned_subject, owner_client):
    singular, make, prefix = KINDS[page]
    first, second = make(owned_subject), make(owned_subject)

    response = _bulk(owner_client, owned_subject, page, "park", [first.pk, second.pk], q="billing")

    assert response.status_code == 200
    assert b'id="distilled-results"' in response.content  # the list, with the page's search
    assert response.context["results"] == []
    assert {i.parked_at is not None for i in type(first).objects.all()} == {True}
    assert f"[{prefix}:" not in _context_text(owned_subject)
    assert AuditEvent.objects.filter(action=f"{singular}.parked").count() == 2

    response = _bulk(owner_client, owned_subject, page, "unpark", [first.pk], parked="parked")

    assert [item.pk for item, _ in response.context["results"]] == [second.pk]
    first.refresh_from_db()
    assert first.parked_at is None
    assert f"[{prefix}:{first.pk}]" in _context_text(owned_subject)


@pytest.mark.parametrize("page", KINDS)
def test_bulk_vote_sets_the_persons_one_vote(page, owned_subject, owner_client):
    singular, make, _ = KINDS[page]
    first, second = make(owned_subject), make(owned_subject)
    actor = Actor.user(owned_subject.owner)

    _bulk(owner_client, owned_subject, page, "up", [first.pk, second.pk])
    _bulk(owner_client, owned_subject, page, "up", [first.pk, second.pk])  # set, never withdrawn

    votes = [person_vote(item_kind=singular, item_id=i.pk, actor=actor) for i in (first, second)]
    assert votes == [1, 1]
    _bulk(owner_client, owned_subject, page, "down", [first.pk])
    assert person_vote(item_kind=singular, item_id=first.pk, actor=actor) == -1
    first.refresh_from_db()
    assert first.vote_score < 0


@pytest.mark.parametrize("page", KINDS)
def test_bulk_delete_asks_first(page, owned_subject, owner_client):
    singular, make, _ = KINDS[page]
    model = type(make(owned_subject))
    ids = sorted(model.objects.values_list("pk", flat=True)) + [make(owned_subject).pk]

    response = _bulk(owner_client, owned_subject, page, "delete", ids)

    assert response.status_code == 200
    assert f"Delete 2 {page} for good?".encode() in response.content
    assert model.objects.count() == 2
    # one more ticked after the question was asked is asked about again
    ids.append(make(owned_subject).pk)
    response = _bulk(owner_client, owned_subject, page, "delete", ids, confirmed="on", count=2)
    assert f"Delete 3 {page} for good?".encode() in response.content
    assert model.objects.count() == 3

    response = _bulk(owner_client, owned_subject, page, "delete", ids, confirmed="on", count=3)

    assert response.status_code == 200
    assert not model.objects.exists()
    assert AuditEvent.objects.filter(action=f"{singular}.deleted").count() == 3


def test_bulk_delete_without_javascript_asks_on_the_page(owned_subject, owner_client):
    lesson = _lesson(owned_subject)
    url = reverse("dashboard:lessons_bulk", args=[owned_subject.pk])
    response = owner_client.post(url, {"action": "delete", "ids": [lesson.pk]})
    assert response.status_code == 200
    assert b"Delete 1 lesson for good?" in response.content
    assert Lesson.objects.filter(pk=lesson.pk).exists()
    response = owner_client.post(url, {"action": "delete", "ids": [lesson.pk], "confirmed": "on", "count": 1})
    assert response.status_code == 302
    assert not Lesson.objects.exists()


@pytest.mark.parametrize(
    "data",
    [
        {"action": "explode"},
        {"action": "tag_add", "tag": "sport"},  # lessons and procedures have no bulk re-tag
        {"action": "park", "ids": []},
        {"action": "park", "ids": ["l1"]},
    ],
    ids=["action", "retag", "no-ids", "bad-id"],
)
@pytest.mark.parametrize("page", KINDS)
def test_bad_bulk_input_is_refused_and_nothing_changes(page, data, owned_subject, owner_client):
    item = KINDS[page][1](owned_subject)
    body = {"ids": [item.pk], **data}
    response = hx(owner_client, "POST", reverse(f"dashboard:{page}_bulk", args=[owned_subject.pk]), body)
    assert response.status_code == 400
    item.refresh_from_db()
    assert (item.parked_at, item.version) == (None, 1)


@pytest.mark.parametrize("page", KINDS)
def test_bulk_with_another_persons_item_is_404_and_changes_nothing(
    page, owned_subject, stranger_subject, owner_client, stranger_client
):
    make = KINDS[page][1]
    mine, theirs = make(owned_subject), make(stranger_subject)
    model = type(mine)
    for action in ("park", "up", "delete"):
        response = _bulk(
            owner_client, owned_subject, page, action, [mine.pk, theirs.pk], confirmed="on", count=2
        )
        assert response.status_code == 404, action
    assert _bulk(stranger_client, owned_subject, page, "park", [mine.pk]).status_code == 404
    assert model.objects.filter(parked_at=None).count() == 2
    assert not VoteEvent.objects.exists()


def test_the_search_pages_include_parked_covers_lessons_and_procedures(owned_subject, owner_client):
    lesson, procedure = _lesson(owned_subject), _procedure(owned_subject)
    for item in (lesson, procedure):
        kind = type(item)._meta.model_name
        hx(
            owner_client,
            "POST",
            reverse(f"dashboard:{kind}_park", args=[owned_subject.pk, item.pk]),
            {"parked": "1"},
        )
    url = reverse("dashboard:search", args=[owned_subject.pk])

    found = owner_client.get(url, {"q": "billing"}).context["results"]
    with_parked = owner_client.get(url, {"q": "billing", "parked": "on"})

    assert found.hits == []
    assert sorted((h.kind, h.item.pk) for h in with_parked.context["results"].hits) == [
        ("lesson", lesson.pk),
        ("procedure", procedure.pk),
    ]
    assert with_parked.content.count(b">Parked</span>") == 2
