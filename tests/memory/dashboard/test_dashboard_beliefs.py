"""Dashboard: the Beliefs page (list, detail with versions, evidence and revisions, the revise
form) and the profile history's revisions with their reasons."""

from django.urls import reverse

from memory.config import get_config
from memory.models import BeliefRevision, Evidence, Note, ProfileFact, RevisionAction
from memory.services import Actor
from memory.services.beliefs import revision_apply
from tests.factories import ConversationFactory, FactFactory, MessageFactory, NoteFactory


def _unit(subject, text):
    conversation = ConversationFactory(subject=subject)
    message = MessageFactory(conversation=conversation, text=text)
    unit = Evidence.objects.create(
        subject=subject,
        conversation=conversation,
        message=message,
        role="user",
        text=text,
        occurred_at=message.occurred_at,
    )
    return message, unit


def test_the_list_shows_beliefs_with_confidence_and_evidence(owned_subject, owner_client):
    message, unit = _unit(owned_subject, "I live in Lisbon")
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon", source_message=message)
    note = NoteFactory(subject=owned_subject, content="Alice used to play the cello")
    Note.objects.filter(pk=note.pk).update(confidence=0.3)

    response = owner_client.get(reverse("dashboard:beliefs", args=[owned_subject.pk]))

    body = response.content.decode()
    assert response.status_code == 200
    assert f'id="belief-f:{fact.pk}"' in body and f'id="belief-n:{note.pk}"' in body
    assert f'#evidence-{unit.pk}">e:{unit.pk}</a>' in body
    assert "0.30</span>" in body  # under the mirror threshold, flagged
    only_notes = owner_client.get(reverse("dashboard:beliefs", args=[owned_subject.pk]), {"kind": "note"})
    assert f"belief-f:{fact.pk}" not in only_notes.content.decode()


def test_revising_from_the_detail_page_keeps_the_reason_in_the_history(owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    detail = reverse("dashboard:belief_detail", args=[owned_subject.pk, f"f:{fact.pk}"])
    assert owner_client.get(detail).status_code == 200

    response = owner_client.post(
        reverse("dashboard:belief_revise", args=[owned_subject.pk, f"f:{fact.pk}"]),
        {"action": "SUPERSEDE", "reason": "I moved to Porto in May", "value": "Porto"},
    )

    assert response.status_code == 302
    revision = BeliefRevision.objects.get(subject=owned_subject)
    assert (revision.action, revision.decided_by) == ("SUPERSEDE", "person")
    new = ProfileFact.objects.get(subject=owned_subject, key="city", valid_to=None)
    assert new.value == "Porto" and response["Location"].endswith(f"/beliefs/f:{new.pk}/")
    page = owner_client.get(response["Location"]).content.decode()
    assert "I moved to Porto in May" in page and "Written by <strong>SUPERSEDE</strong>" in page
    history = owner_client.get(reverse("dashboard:fact_history", args=[owned_subject.pk, new.pk]))
    text = history.content.decode()
    assert "Written by <strong>SUPERSEDE</strong> (person): I moved to Porto in May" in text
    assert f'data-revision="{revision.pk}"' in text


def test_a_revision_the_service_refuses_shows_the_form_again_naming_the_field(owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon")

    response = owner_client.post(
        reverse("dashboard:belief_revise", args=[owned_subject.pk, f"f:{fact.pk}"]),
        {"action": "SUPERSEDE", "reason": "no value given"},
    )

    assert response.status_code == 400
    assert response.context["form"].errors["value"]
    assert not BeliefRevision.objects.exists()


def test_the_profile_history_shows_revisions_applied_in_place(owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="diet", value="vegetarian")
    revision_apply(
        subject=owned_subject,
        belief=fact,
        action=RevisionAction.WEAKEN,
        reason="said she eats fish sometimes",
        actor=Actor.system("test"),
        config=get_config(owned_subject.app),
    )

    response = owner_client.get(reverse("dashboard:fact_history", args=[owned_subject.pk, fact.pk]))

    assert "<strong>WEAKEN</strong> (rules" in response.content.decode()
    assert "said she eats fish sometimes" in response.content.decode()


def test_another_subjects_belief_is_a_404_and_a_malformed_one_too(
    owned_subject, stranger_subject, owner_client
):
    theirs = FactFactory(subject=stranger_subject, key="city", value="Oslo")

    assert (
        owner_client.get(
            reverse("dashboard:belief_detail", args=[owned_subject.pk, f"f:{theirs.pk}"])
        ).status_code
        == 404
    )
    assert (
        owner_client.get(reverse("dashboard:belief_detail", args=[owned_subject.pk, "x:1"])).status_code
        == 404
    )
