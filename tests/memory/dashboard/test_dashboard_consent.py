"""Dashboard: the consent queue (approve / reject) and the per-category policy."""

import pytest
from django.urls import reverse

from memory.models import AuditEvent, Conversation, Note, PendingStatus, ProfileFact, SubjectConsent
from memory.services.audit import Actor
from memory.services.consent import memory_candidate_route
from tests.dashboard_helpers import hx
from tests.factories import ConversationFactory, MessageFactory


def queue(subject, config, content="Alice has asthma and uses an inhaler", category="health", kind="note"):
    """A candidate routed like reflection does: "ask" (the default) queues it."""
    conversation = Conversation.objects.filter(subject=subject, external_id="chat-7").first()
    message = MessageFactory(
        conversation=conversation or ConversationFactory(subject=subject, external_id="chat-7"),
        text=f"By the way, {str(content).lower()}.",
    )
    payload = {"content": content, "tags": ["health"]} if kind == "note" else content
    outcome = memory_candidate_route(
        subject=subject,
        kind=kind,
        payload=payload,
        category=category,
        source_message=message,
        actor=Actor.task("reflect"),
        config=config,
    )
    assert outcome.action == "pending"
    return outcome.obj


def url(name, subject, **kwargs):
    return reverse(f"dashboard:{name}", kwargs={"subject_id": subject.pk, **kwargs})


@pytest.fixture
def pending(owned_subject, config):
    return queue(owned_subject, config)


# --- the queue -------------------------------------------------------------------------------


def test_the_page_shows_the_pending_item_with_its_source_message(owned_subject, owner_client, pending):
    response = owner_client.get(url("consent", owned_subject))
    body = response.content.decode()
    assert response.status_code == 200
    assert f'id="pending-{pending.pk}"' in body
    assert "Alice has asthma and uses an inhaler" in body
    assert "By the way, alice has asthma and uses an inhaler." in body  # the source message
    assert "chat-7" in body
    assert 'id="consent-queue"' in body and 'hx-trigger="mw:pending from:body"' in body


def test_an_empty_queue_says_what_will_arrive_there(owned_subject, owner_client):
    response = owner_client.get(url("consent", owned_subject))
    assert b"Nothing is waiting for you." in response.content


def test_the_queue_fragment_refreshes_alone_and_by_status(owned_subject, owner_client, pending, config):
    other = queue(owned_subject, config, content="Alice earns 4000 euros a month", category="finances")
    owner_client.post(url("pending_reject", owned_subject, pending_id=other.pk))
    fresh = hx(owner_client, "GET", url("consent_queue", owned_subject))
    rejected = hx(owner_client, "GET", url("consent_queue", owned_subject), {"status": "rejected"})
    assert fresh.content.lstrip().startswith(b'<div id="consent-queue"')
    assert f"pending-{pending.pk}" in fresh.content.decode()
    assert f"pending-{other.pk}" not in fresh.content.decode()
    assert f"pending-{other.pk}" in rejected.content.decode()
    assert [c for v, _, c in rejected.context["tabs"] if v in ("pending", "rejected")] == [1, 1]


def test_the_sidebar_badge_reloads_itself_on_a_pending_event(owned_subject, owner_client, pending):
    body = owner_client.get(url("notes", owned_subject)).content.decode()

    badge_src = url("consent_badge", owned_subject)
    assert (
        f'<span class="nav-badge" hx-get="{badge_src}" hx-trigger="mw:pending from:body" hx-swap="innerHTML">'
        '<span class="badge badge-warn">1</span></span>'
    ) in body


def test_the_badge_fragment_counts_only_this_subjects_waiting_items(
    owned_subject, stranger_subject, owner_client, pending, config
):
    decided = queue(owned_subject, config, content="Alice earns 4000 euros a month", category="finances")
    owner_client.post(url("pending_reject", owned_subject, pending_id=decided.pk))
    queue(owned_subject, config, content="Alice sees a physiotherapist for her knee")
    queue(stranger_subject, config, content="Bob has hay fever")

    response = hx(owner_client, "GET", url("consent_badge", owned_subject))

    assert response.status_code == 200
    assert response.content.decode().strip() == '<span class="badge badge-warn">2</span>'


def test_the_badge_fragment_is_empty_when_nothing_waits(owned_subject, owner_client, pending):
    owner_client.post(url("pending_reject", owned_subject, pending_id=pending.pk))

    response = hx(owner_client, "GET", url("consent_badge", owned_subject))

    assert response.status_code == 200 and response.content.decode().strip() == ""


def test_an_unknown_status_is_a_400_naming_the_field(owned_subject, owner_client):
    response = hx(owner_client, "GET", url("consent_queue", owned_subject), {"status": "maybe"})
    assert response.status_code == 400
    assert b'data-field="status"' in response.content


def test_the_queue_shows_nobody_elses_items(owned_subject, stranger_subject, owner_client, config):
    queue(stranger_subject, config, content="Bob is in debt")
    response = owner_client.get(url("consent", owned_subject))
    assert b"Bob is in debt" not in response.content


# --- decisions -------------------------------------------------------------------------------


def test_approving_stores_the_note_with_its_category_and_answers_the_decided_item(
    owned_subject, owner_client, pending
):
    response = hx(owner_client, "POST", url("pending_approve", owned_subject, pending_id=pending.pk))
    pending.refresh_from_db()
    note = Note.objects.get(subject=owned_subject)
    assert response.status_code == 200
    assert pending.status == PendingStatus.APPROVED
    assert pending.result_id == note.pk
    assert pending.decided_by == "user:alice-login"
    assert (note.content, note.category) == ("Alice has asthma and uses an inhaler", "health")
    body = response.content.decode()
    assert body.lstrip().startswith(f'<li class="pending-item is-decided" id="pending-{pending.pk}"')
    assert reverse("dashboard:note_detail", args=[owned_subject.pk, note.pk]) in body
    assert "Approved: the note is stored" in body  # the toast


def test_approving_a_fact_stores_it_in_the_profile(owned_subject, owner_client, config):
    item = queue(
        owned_subject,
        config,
        content={"key": "religion", "value": "Buddhist"},
        category="religion",
        kind="fact",
    )
    hx(owner_client, "POST", url("pending_approve", owned_subject, pending_id=item.pk))
    fact = ProfileFact.objects.get(subject=owned_subject, key="religion")
    assert (fact.value, fact.category) == ("Buddhist", "religion")


def test_rejecting_stores_nothing_and_is_not_asked_again(owned_subject, owner_client, pending, config):
    response = hx(owner_client, "POST", url("pending_reject", owned_subject, pending_id=pending.pk))
    pending.refresh_from_db()
    assert response.status_code == 200
    assert pending.status == PendingStatus.REJECTED
    assert not Note.objects.exists()
    assert b"will not be asked again" in response.content
    again = memory_candidate_route(
        subject=owned_subject,
        kind="note",
        payload={"content": "Alice has asthma and uses an inhaler"},
        category="health",
        actor=Actor.task("reflect"),
        config=config,
    )
    assert again.action == "rejected_before"


def test_deciding_twice_is_a_400_saying_it_is_already_decided(owned_subject, owner_client, pending):
    hx(owner_client, "POST", url("pending_reject", owned_subject, pending_id=pending.pk))
    response = hx(owner_client, "POST", url("pending_approve", owned_subject, pending_id=pending.pk))
    pending.refresh_from_db()
    assert response.status_code == 400
    assert b"already rejected" in response.content
    assert pending.status == PendingStatus.REJECTED
    assert not Note.objects.exists()


def test_a_decision_without_javascript_redirects_back_to_the_queue(owned_subject, owner_client, pending):
    response = owner_client.post(url("pending_approve", owned_subject, pending_id=pending.pk))
    assert response.status_code == 302
    assert response["Location"] == url("consent", owned_subject)
    assert Note.objects.filter(subject=owned_subject).count() == 1


def test_another_persons_pending_item_cannot_be_decided(
    owned_subject, stranger_subject, owner_client, config
):
    theirs = queue(stranger_subject, config, content="Bob is in debt", category="finances")
    for name in ("pending_approve", "pending_reject"):
        response = hx(owner_client, "POST", url(name, owned_subject, pending_id=theirs.pk))
        assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == PendingStatus.PENDING
    assert not Note.objects.exists()


def test_staff_can_decide_for_any_subject(owned_subject, staff_client, pending):
    response = hx(staff_client, "POST", url("pending_reject", owned_subject, pending_id=pending.pk))
    pending.refresh_from_db()
    assert response.status_code == 200
    assert pending.decided_by == "user:operator"


# --- policies --------------------------------------------------------------------------------


def test_the_page_lists_every_category_with_its_plain_description(owned_subject, owner_client):
    response = owner_client.get(url("consent", owned_subject))
    body = response.content.decode()
    assert len(response.context["policies"]) == 10
    assert 'id="policy-health"' in body
    assert "Illnesses, conditions, medication, allergies" in body
    assert "never store it" in body


def test_setting_a_policy_saves_it_and_answers_the_row(owned_subject, owner_client):
    response = hx(
        owner_client, "POST", url("consent_policy", owned_subject), {"category": "health", "policy": "allow"}
    )
    assert response.status_code == 200
    assert SubjectConsent.objects.get(subject=owned_subject, category__slug="health").policy == "allow"
    body = response.content.decode()
    assert 'id="policy-health"' in body and "saved" in body
    assert 'value="allow" checked' in body
    assert AuditEvent.objects.filter(action="consent.policy_set", actor_id="alice-login").count() == 1


def test_an_allowed_category_is_stored_straight_away_afterwards(owned_subject, owner_client, config):
    hx(
        owner_client,
        "POST",
        url("consent_policy", owned_subject),
        {"category": "finances", "policy": "allow"},
    )
    outcome = memory_candidate_route(
        subject=owned_subject,
        kind="note",
        payload={"content": "Alice saves 10% of her salary"},
        category="finances",
        actor=Actor.task("reflect"),
        config=config,
    )
    assert outcome.action == "stored"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"category": "health", "policy": "sometimes"}, "policy"),
        ({"category": "astrology", "policy": "deny"}, "category"),
    ],
)
def test_a_bad_policy_or_category_is_a_400_naming_the_field(owned_subject, owner_client, data, field):
    response = hx(owner_client, "POST", url("consent_policy", owned_subject), data)
    assert response.status_code == 400
    assert f'data-field="{field}"'.encode() in response.content
    assert not SubjectConsent.objects.exists()
    assert not AuditEvent.objects.filter(action="consent.policy_set").exists()


def test_a_policy_without_javascript_redirects_to_its_row(owned_subject, owner_client):
    response = owner_client.post(
        url("consent_policy", owned_subject), {"category": "politics", "policy": "deny"}
    )
    assert response.status_code == 302
    assert response["Location"] == url("consent", owned_subject) + "#policy-politics"
    assert SubjectConsent.objects.get(subject=owned_subject).policy == "deny"


def test_another_persons_policy_cannot_be_set(owned_subject, stranger_client):
    response = hx(
        stranger_client,
        "POST",
        url("consent_policy", owned_subject),
        {"category": "health", "policy": "allow"},
    )
    assert response.status_code == 404
    assert not SubjectConsent.objects.exists()
