"""The Consequences page: the chains with their turns, correcting and deleting one, and the
current state of the person's conversations."""

import pytest

from memory.models import AuditEvent, Consequence
from memory.services import Actor
from memory.services.consequences import consequence_record
from memory.services.conversations import conversation_get_or_create, message_add


@pytest.fixture
def chain(owned_subject):
    actor = Actor.system("test")
    conversation, _ = conversation_get_or_create(subject=owned_subject, external_id="repo", actor=actor)
    message_add(
        conversation=conversation, role="user", text="ugh, the deploy still doesn't work, asap!!", actor=actor
    )
    advice, _ = message_add(
        conversation=conversation, role="assistant", text="Run black on the whole repository.", actor=actor
    )
    report, _ = message_add(conversation=conversation, role="user", text="that broke the build", actor=actor)
    return consequence_record(
        subject=owned_subject,
        advice_message=advice,
        outcome_message=report,
        action="Run black on the whole repository.",
        outcome="failure",
        outcome_text="that broke the build",
        tendency="fragile to sweeping changes: prefer small, targeted edits one at a time",
        actor=actor,
    )[0]


def url(subject, *parts):
    return f"/s/{subject.pk}/consequences/" + "".join(f"{p}/" for p in parts)


def test_the_page_lists_the_chains_and_the_state(owner_client, owned_subject, chain):
    response = owner_client.get(url(owned_subject))

    html = response.content.decode()
    assert response.status_code == 200
    assert f'id="consequence-{chain.pk}"' in html
    assert "Run black on the whole repository." in html and "fragile to sweeping changes" in html
    assert f'id="state-{chain.conversation_id}"' in html and "- urgency:" in html
    assert f'href="/s/{owned_subject.pk}/consequences/"' in html  # the nav link


def test_correcting_the_tendency(owner_client, owned_subject, chain):
    body = {
        "action": chain.action,
        "outcome": "failure",
        "outcome_text": chain.outcome_text,
        "tendency": "CI pins an older black",
    }

    response = owner_client.post(url(owned_subject, chain.pk, "edit"), body)

    assert response.status_code == 302
    chain.refresh_from_db()
    assert chain.tendency == "CI pins an older black"
    assert AuditEvent.objects.get(action="consequence.edited").actor_kind == "user"


def test_a_bad_correction_shows_the_error_and_writes_nothing(owner_client, owned_subject, chain):
    body = {"action": "", "outcome": "meh", "outcome_text": chain.outcome_text, "tendency": "x"}

    response = owner_client.post(url(owned_subject, chain.pk, "edit"), body)

    assert response.status_code == 400
    chain.refresh_from_db()
    assert chain.tendency.startswith("fragile to sweeping changes")


def test_deleting_a_chain(owner_client, owned_subject, chain):
    response = owner_client.post(url(owned_subject, chain.pk, "delete"))

    assert response.status_code == 302
    assert not Consequence.objects.exists()
