"""The evidence page: the subject's turns with speaker, date, category and consent state."""

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from memory.models import Conversation, Evidence, Message


def unit(subject, text, *, role="user", status="visible", category="", when=None):
    conversation = Conversation.objects.create(subject=subject)
    when = when or datetime(2024, 3, 14, 9, 0, tzinfo=UTC)
    message = Message.objects.create(conversation=conversation, role=role, text=text, occurred_at=when)
    return Evidence.objects.create(
        subject=subject,
        conversation=conversation,
        message=message,
        role=role,
        text=text,
        occurred_at=when,
        status=status,
        category=category,
    )


@pytest.fixture
def page(owned_subject):
    return reverse("dashboard:evidence", args=[owned_subject.pk])


def test_the_owner_sees_their_turns_with_speaker_date_and_state(owned_subject, owner_client, page):
    unit(owned_subject, "the shed key is under the blue flowerpot")
    unit(owned_subject, "the wifi password is in the binder", status="pending", category="credentials")

    html = owner_client.get(page).content.decode()

    assert "the shed key is under the blue flowerpot" in html and "2024-03-14 09:00" in html
    assert "waiting for approval" in html and "credentials" in html


def test_search_speaker_and_state_filters_narrow_the_list(owned_subject, owner_client, page):
    unit(owned_subject, "the shed key is under the blue flowerpot")
    unit(owned_subject, "Noted, the shed key is under the pot", role="assistant")
    unit(owned_subject, "my sister lives in Porto")

    html = owner_client.get(page, {"q": "shed key", "role": "assistant"}).content.decode()

    assert "Noted, the shed key is under the pot" in html
    assert "blue flowerpot" not in html and "Porto" not in html


def test_dates_filter_the_list(owned_subject, owner_client, page):
    unit(owned_subject, "said in March", when=datetime(2024, 3, 14, tzinfo=UTC))
    unit(owned_subject, "said in May", when=datetime(2024, 5, 2, tzinfo=UTC))

    html = owner_client.get(page, {"since": "2024-04-01"}).content.decode()

    assert "said in May" in html and "said in March" not in html


def test_another_person_gets_404_and_staff_see_every_subject(
    owned_subject, stranger_client, staff_client, page
):
    unit(owned_subject, "the shed key is under the blue flowerpot")

    assert stranger_client.get(page).status_code == 404
    assert "blue flowerpot" in staff_client.get(page).content.decode()


def test_the_owner_does_not_see_another_subjects_turns(owned_subject, stranger_subject, owner_client, page):
    unit(stranger_subject, "bob's secret plan")

    assert "bob&#x27;s secret plan" not in owner_client.get(page).content.decode()
    assert "secret plan" not in owner_client.get(page).content.decode()


def test_forget_removes_the_text(owned_subject, owner_client):
    item = unit(owned_subject, "the shed key is under the blue flowerpot")

    response = owner_client.post(reverse("dashboard:evidence_forget", args=[owned_subject.pk, item.pk]))

    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.status, item.text) == ("forgotten", "")


def test_a_bad_date_is_a_400(owned_subject, owner_client, page):
    assert owner_client.get(page, {"since": "yesterday-ish"}).status_code == 400
