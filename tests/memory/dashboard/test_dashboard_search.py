"""Dashboard: one search box across facts, notes, lessons and procedures (the page and the
fragment htmx asks for as the person types). Access (owner / another person / staff) is in
test_dashboard_access.py's table."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from memory.models import Lesson, Procedure
from tests.dashboard_helpers import hx
from tests.factories import FactFactory, NoteFactory

pytestmark = pytest.mark.postgres


def url(subject, **query) -> str:
    base = reverse("dashboard:search", kwargs={"subject_id": subject.pk})
    return base + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def hits(body: str) -> list[tuple[str, str]]:
    """(kind, ref) of every hit on the page, in order."""
    return re.findall(r'class="search-hit" data-kind="(\w+)" data-ref="([a-z]:\d+)"', body)


def test_the_search_page_has_one_labelled_box_and_is_in_the_nav(owned_subject, owner_client):
    response = owner_client.get(url(owned_subject))
    body = response.content.decode()

    assert response.status_code == 200
    assert '<label for="search-q">Search your memory</label>' in body
    assert 'role="search"' in body and 'aria-live="polite"' in body
    assert 'hx-trigger="input changed delay:250ms, search"' in body
    assert f'href="{url(owned_subject)}" data-page="search" aria-current="page"' in body
    assert "Type to search." in body
    assert "embeddings are off" in body  # the suite runs with embeddings off


def test_typing_a_prefix_finds_every_kind_labelled_and_linked(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Alice moved the billing database to PostgreSQL 16.")
    fact = FactFactory(subject=owned_subject, key="database", value="PostgreSQL")
    lesson = Lesson.objects.create(subject=owned_subject, text="Back up PostgreSQL before a migration.")
    procedure = Procedure.objects.create(
        subject=owned_subject, title="Restore postgresql", steps=["Stop the app", "Run pg_restore"]
    )
    NoteFactory(subject=owned_subject, content="Lunch with Bob")

    response = hx(owner_client, "get", url(owned_subject, q="postg"))
    body = response.content.decode()

    assert response.status_code == 200
    assert not body.lstrip().startswith("<!doctype")  # the fragment
    assert sorted(hits(body)) == sorted(
        [
            ("fact", f"f:{fact.pk}"),
            ("note", f"n:{note.pk}"),
            ("lesson", f"l:{lesson.pk}"),
            ("procedure", f"p:{procedure.pk}"),
        ]
    )
    assert reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk]) in body
    assert reverse("dashboard:profile", args=[owned_subject.pk]) + f"#fact-{fact.pk}" in body
    assert reverse("dashboard:lessons", args=[owned_subject.pk]) + f"#lesson-{lesson.pk}" in body
    assert reverse("dashboard:procedures", args=[owned_subject.pk]) + f"#procedure-{procedure.pk}" in body
    assert "<mark>PostgreSQL</mark> 16." in body and "<mark>postgresql</mark>" in body
    assert ">Note<" in body and ">Fact<" in body and ">Lesson<" in body and ">Procedure<" in body
    assert "Lunch" not in body


def test_every_hit_shows_a_relevance_that_is_not_zero(owned_subject, owner_client):
    for i in range(30):  # the word in every note: raw bm25 would read 0.00
        NoteFactory(subject=owned_subject, content=f"PostgreSQL note {i}")

    body = hx(owner_client, "get", url(owned_subject, q="postgresql")).content.decode()

    shown = re.findall(r"relevance (\S+)</span>", body)
    assert len(shown) == 30
    assert shown[0] == "1.00"
    assert "0.00" not in shown
    assert 'title="Relevance: this hit' in body


def test_memory_text_is_escaped_around_the_marks(owned_subject, owner_client):
    NoteFactory(subject=owned_subject, content="<img src=x onerror=alert(1)> kayak <mark>trip</mark>")

    body = hx(owner_client, "get", url(owned_subject, q="kayak")).content.decode()

    assert "<img" not in body and "<mark>trip" not in body
    assert "&lt;img src=x onerror=alert(1)&gt; <mark>kayak</mark> &lt;mark&gt;trip&lt;/mark&gt;" in body


def test_parked_memories_show_only_with_the_toggle(owned_subject, owner_client):
    live = NoteFactory(subject=owned_subject, content="Kayak trip on Sunday")
    parked = NoteFactory(subject=owned_subject, content="Kayak repair shop", parked_at=timezone.now())

    without = hx(owner_client, "get", url(owned_subject, q="kayak")).content.decode()
    with_parked = hx(owner_client, "get", url(owned_subject, q="kayak", parked="on")).content.decode()

    assert hits(without) == [("note", f"n:{live.pk}")]
    assert sorted(hits(with_parked)) == sorted([("note", f"n:{live.pk}"), ("note", f"n:{parked.pk}")])
    assert "Parked</span>" in with_parked


@pytest.mark.parametrize("query", ['"', "postg*", "-(", "NEAR(a b)", "a:*", "'", "\\", "x' | !y"])
def test_query_syntax_never_breaks_the_page(owned_subject, owner_client, query):
    NoteFactory(subject=owned_subject, content="Alice moved to PostgreSQL.")

    response = owner_client.get(url(owned_subject), {"q": query})

    assert response.status_code == 200


def test_a_query_too_long_is_refused_with_a_clear_400(owned_subject, owner_client):
    response = hx(
        owner_client, "get", reverse("dashboard:search", args=[owned_subject.pk]) + "?q=" + "a" * 501
    )

    assert response.status_code == 400
    assert b'data-field="q"' in response.content


def test_another_persons_memory_is_not_searched(owned_subject, stranger_subject, owner_client):
    NoteFactory(subject=stranger_subject, content="Bob's kayak")

    body = hx(owner_client, "get", url(owned_subject, q="kayak")).content.decode()

    assert hits(body) == [] and "Nothing matches." in body


def test_the_full_page_with_a_query_shows_the_results_too(owned_subject, owner_client):
    note = NoteFactory(subject=owned_subject, content="Kayak trip")

    body = owner_client.get(url(owned_subject, q="kay")).content.decode()

    assert body.lstrip().lower().startswith("<!doctype")
    assert hits(body) == [("note", f"n:{note.pk}")]
    assert 'value="kay"' in body
