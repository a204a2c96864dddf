"""Your data: the person downloads the export of their subject and deletes it after confirming."""

import json

from django.urls import reverse

from memory.models import AuditEvent, Note, Subject
from memory.services import fact_set, note_store
from memory.services.audit import Actor


def _fill(subject):
    actor = Actor.system("test")
    from memory.config import get_config

    note_store(subject=subject, content="Alice grows tomatoes", actor=actor, config=get_config(subject.app))
    fact_set(subject=subject, key="city", value="Lisbon", actor=actor)


def test_the_page_offers_the_download_and_the_confirmed_delete(owned_subject, owner_client):
    response = owner_client.get(reverse("dashboard:subject_data", args=[owned_subject.pk]))

    body = response.content.decode()
    assert reverse("dashboard:subject_data_export", args=[owned_subject.pk]) in body
    assert reverse("dashboard:subject_data_delete", args=[owned_subject.pk]) in body
    assert 'name="csrfmiddlewaretoken"' in body and 'name="confirm"' in body


def test_the_download_is_the_v1_export_as_an_attachment(owned_subject, owner_client):
    _fill(owned_subject)

    response = owner_client.get(reverse("dashboard:subject_data_export", args=[owned_subject.pk]))

    assert response["Content-Disposition"].startswith('attachment; filename="memoryweb-alice-')
    document = json.loads(response.content)
    assert (document["format"], document["version"], document["subject"]) == ("memoryweb.subject", 1, "alice")
    assert [n["content"] for n in document["notes"]] == ["Alice grows tomatoes"]
    assert [f["value"] for f in document["facts"]] == ["Lisbon"]


def test_a_wrong_confirmation_deletes_nothing(owned_subject, owner_client):
    _fill(owned_subject)

    response = owner_client.post(
        reverse("dashboard:subject_data_delete", args=[owned_subject.pk]), {"confirm": "Alice"}
    )

    assert response.status_code == 400
    assert b"Type alice exactly" in response.content
    assert Note.objects.filter(subject=owned_subject).count() == 1


def test_the_owner_deletes_their_subject_and_lands_home(owned_subject, owner_client, owner):
    _fill(owned_subject)
    subject_id = owned_subject.pk

    response = owner_client.post(
        reverse("dashboard:subject_data_delete", args=[subject_id]), {"confirm": "alice"}
    )

    assert response.status_code == 302 and response["Location"] == reverse("dashboard:home")
    assert not Subject.objects.filter(pk=subject_id).exists() and not Note.objects.exists()
    [record] = AuditEvent.objects.filter(action="subject.deleted")
    assert (record.object_id, record.actor_id) == (str(subject_id), owner.get_username())


def test_staff_may_delete_any_subject(owned_subject, staff_client):
    _fill(owned_subject)

    staff_client.post(reverse("dashboard:subject_data_delete", args=[owned_subject.pk]), {"confirm": "alice"})

    assert not Subject.objects.filter(pk=owned_subject.pk).exists()
