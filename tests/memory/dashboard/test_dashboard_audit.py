"""The audit trail for staff: filters, pagination, CSV and JSON Lines export; 404 for others."""

import csv
import io
import json
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from memory.models import AuditEvent
from memory.services import Actor, audit_record
from tests.factories import SubjectFactory

URL = reverse("dashboard:audit")


SYSTEM = Actor.system("test")


def _event(action, *, subject=None, actor=SYSTEM, when=None, **fields):
    event = audit_record(
        actor=actor, action=action, subject=subject, app=subject.app if subject else None, **fields
    )
    if when:
        AuditEvent.objects.filter(pk=event.pk).update(created_at=when)
    return event


@pytest.fixture
def trail(subject):
    bob = SubjectFactory(app=subject.app, external_id="bob")
    return {
        "stored": _event(
            "note.stored",
            subject=subject,
            actor=Actor.task("reflect"),
            object_kind="note",
            object_id=1,
            when=datetime(2026, 1, 5, 10, tzinfo=UTC),
        ),
        "forgot": _event(
            "note.forgotten",
            subject=subject,
            actor=Actor(kind="user", id="alice-login"),
            when=datetime(2026, 1, 9, 23, 59, tzinfo=UTC),
        ),
        "bob": _event(
            "fact.set",
            subject=bob,
            actor=Actor(kind="user", id="alice-login"),
            when=datetime(2026, 1, 12, tzinfo=UTC),
        ),
        "key": _event(
            "api_key.rotated", actor=Actor.system("rotatekey"), when=datetime(2026, 2, 1, tzinfo=UTC)
        ),
    }


def _listed(response) -> list[int]:
    return [event.pk for event in response.context["page_obj"].object_list]


def test_staff_see_every_event_newest_first(staff_client, trail):
    response = staff_client.get(URL)
    assert response.status_code == 200
    assert _listed(response) == [trail[k].pk for k in ("key", "bob", "forgot", "stored")]
    assert b"api_key.rotated" in response.content


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"subject": "alice"}, ["forgot", "stored"]),
        ({"actor": "user:alice-login"}, ["bob", "forgot"]),
        ({"actor": "reflect"}, ["stored"]),
        ({"action": "note."}, ["forgot", "stored"]),
        ({"action": "api_key.rotated"}, ["key"]),
        ({"since": "2026-01-09", "until": "2026-01-12"}, ["bob", "forgot"]),
        ({"until": "2026-01-05"}, ["stored"]),
        ({"subject": "alice", "actor": "user:alice-login", "since": "2026-01-06"}, ["forgot"]),
    ],
)
def test_the_filters_narrow_the_list(staff_client, trail, query, expected):
    assert _listed(staff_client.get(URL, query)) == [trail[k].pk for k in expected]


def test_a_subject_id_filters_too(staff_client, trail, subject):
    assert _listed(staff_client.get(URL, {"subject": subject.pk})) == [trail["forgot"].pk, trail["stored"].pk]


def test_bad_dates_are_a_400_naming_the_field(staff_client, trail):
    response = staff_client.get(URL, {"since": "last tuesday"})
    assert response.status_code == 400
    assert b'data-field="since"' in response.content
    reversed_range = staff_client.get(URL, {"since": "2026-02-01", "until": "2026-01-01"})
    assert reversed_range.status_code == 400 and b"until is before since" in reversed_range.content


def test_the_list_comes_in_pages_that_keep_the_filters(staff_client, subject):
    for i in range(120):
        _event("note.stored", subject=subject, object_id=i)
    first = staff_client.get(URL, {"action": "note."})
    third = staff_client.get(URL, {"action": "note.", "page": 3})

    assert len(_listed(first)) == 50 and len(_listed(third)) == 20
    assert first.context["page_obj"].paginator.count == 120
    assert b'href="?action=note.&amp;page=2"' in first.content
    assert set(_listed(first)).isdisjoint(_listed(third))


def test_csv_export_holds_the_filtered_events_and_is_audited(staff_client, trail, staff_user):
    response = staff_client.get(
        reverse("dashboard:audit_export", kwargs={"fmt": "csv"}), {"subject": "alice"}
    )

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [int(r["id"]) for r in rows] == [trail["forgot"].pk, trail["stored"].pk]
    assert rows[1]["actor_kind"] == "task" and rows[1]["actor_id"] == "reflect"
    assert rows[1]["subject"] == "alice" and rows[1]["object_id"] == "1"
    assert json.loads(rows[1]["data"]) == {}
    export = AuditEvent.objects.get(action="audit.exported")
    assert (export.actor_kind, export.actor_id) == ("user", staff_user.username)
    assert export.data == {"format": "csv", "subject": "alice"}


def test_jsonl_export_is_one_event_per_line(staff_client, trail):
    response = staff_client.get(
        reverse("dashboard:audit_export", kwargs={"fmt": "jsonl"}), {"action": "api_key."}
    )

    lines = b"".join(response.streaming_content).decode().splitlines()
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert [json.loads(line)["id"] for line in lines] == [trail["key"].pk]
    assert json.loads(lines[0])["created_at"] == "2026-02-01T00:00:00+00:00"


def test_an_unknown_export_format_is_404_and_bad_filters_400(staff_client, trail):
    assert staff_client.get(reverse("dashboard:audit_export", kwargs={"fmt": "xml"})).status_code == 404
    bad = staff_client.get(reverse("dashboard:audit_export", kwargs={"fmt": "csv"}), {"until": "soon"})
    assert bad.status_code == 400 and bad.json()["error"]["fields"].keys() == {"until"}
    assert not AuditEvent.objects.filter(action="audit.exported").exists()


def test_a_person_who_is_not_staff_gets_404_and_no_export(owner_client, stranger_client, trail):
    before = AuditEvent.objects.count()
    for client in (owner_client, stranger_client):
        assert client.get(URL).status_code == 404
        assert client.get(reverse("dashboard:audit_export", kwargs={"fmt": "jsonl"})).status_code == 404
    assert AuditEvent.objects.count() == before


def test_the_sidebar_links_the_audit_trail_for_staff_only(staff_client, owner_client, owned_subject):
    assert URL.encode() in staff_client.get(reverse("dashboard:home")).content
    assert (
        URL.encode() not in owner_client.get(reverse("dashboard:overview", args=[owned_subject.pk])).content
    )
