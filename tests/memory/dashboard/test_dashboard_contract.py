"""The Contract page: each mode's contract with its evidence, the person's correction (which
observation then leaves alone) and the resets, through memory/services/contract.py."""

from django.urls import reverse

from memory.models import AuditEvent, InteractionContract
from memory.services.contract import contract_observe, contract_set
from memory.services.conversations import conversation_get_or_create, message_add
from tests.dashboard_helpers import hx


def _learn(subject, actor, config, text="just the command please, no explanations"):
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id="d", mode="coding_debug", actor=actor
    )
    said, _ = message_add(conversation=conversation, role="user", text=text, actor=actor)
    contract_observe(messages=[said], subject=subject, actor=actor, config=config)
    return said


def test_the_page_shows_what_was_learned_with_its_evidence_and_every_other_mode(
    owner_client, owned_subject, actor, config
):
    said = _learn(owned_subject, actor, config)

    response = owner_client.get(reverse("dashboard:contract", args=[owned_subject.pk]))

    page = response.content.decode()
    assert response.status_code == 200
    cards = response.context["cards"]
    assert cards[0]["mode_name"] == "coding_debug"  # learned first
    assert {c["mode_name"] for c in cards} >= {"brainstorm", "companion", "general_qa"}
    assert "renders ### contract" in page and "not rendered in this mode" in page  # brainstorm
    assert f"m:{said.pk}" in page and "just the command please" in page
    assert "### contract\n- depth: brief" in cards[0]["text"]


def test_saving_a_setting_makes_it_the_persons_and_answers_the_card(
    owner_client, owned_subject, actor, config
):
    _learn(owned_subject, actor, config)
    url = reverse("dashboard:contract_edit", args=[owned_subject.pk])

    response = hx(
        owner_client, "POST", url, {"mode": "coding_debug", "depth": "detailed", "reason": "teach me"}
    )
    _learn(owned_subject, actor, config, text="too long, be brief")

    assert response.status_code == 200
    assert 'id="contract-coding_debug"' in response.content.decode()
    depth = InteractionContract.objects.get(subject=owned_subject).dimensions["depth"]
    assert (depth["value"], depth["source"], depth["reason"]) == ("detailed", "person", "teach me")
    event = AuditEvent.objects.get(action="contract.set")
    assert event.actor_kind == "user"


def test_a_refused_setting_answers_400_with_the_field_and_writes_nothing(owner_client, owned_subject):
    url = reverse("dashboard:contract_edit", args=[owned_subject.pk])

    bad_value = hx(owner_client, "POST", url, {"mode": "coding_debug", "depth": "enormous"})
    nothing = hx(owner_client, "POST", url, {"mode": "coding_debug"})
    unknown_mode = hx(owner_client, "POST", url, {"mode": "karaoke", "depth": "brief"})

    assert bad_value.status_code == 400 and 'data-field="depth"' in bad_value.content.decode()
    assert nothing.status_code == 400 and 'data-field="depth"' in nothing.content.decode()
    assert unknown_mode.status_code == 404
    assert not InteractionContract.objects.exists()


def test_reset_forgets_a_dimension_or_the_whole_mode(owner_client, owned_subject, actor, config):
    contract_set(
        subject=owned_subject,
        mode="coding_debug",
        values={"depth": "brief", "pace": "fast"},
        actor=actor,
        config=config,
    )
    url = reverse("dashboard:contract_reset", args=[owned_subject.pk])

    one = owner_client.post(url, {"mode": "coding_debug", "dimension": "pace"})
    dimensions = InteractionContract.objects.get().dimensions
    whole = hx(owner_client, "POST", url, {"mode": "coding_debug"})

    assert one.status_code == 302 and one["Location"].endswith("#contract-coding_debug")
    assert set(dimensions) == {"depth"}
    assert whole.status_code == 200
    assert not InteractionContract.objects.exists()
