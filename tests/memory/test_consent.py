from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import ConsentCategory, Note, PendingMemory, ProfileFact
from memory.services.consent import (
    consent_policy,
    consent_policy_set,
    memory_candidate_route,
    pending_approve,
    pending_expire,
    pending_reject,
)
from memoryweb.errors import InvalidInput

pytestmark = pytest.mark.postgres

FACT = {"key": "condition", "value": "type 1 diabetes", "pinned": True, "keywords": []}


def route(subject, actor, config, *, kind="fact", payload=FACT, category="health"):
    return memory_candidate_route(
        subject=subject, kind=kind, payload=payload, category=category, actor=actor, config=config
    )


def test_the_sensitive_categories_are_seeded_with_ask(db):
    slugs = set(ConsentCategory.objects.values_list("slug", flat=True))

    assert slugs == {
        "health",
        "sexual_life",
        "religion",
        "politics",
        "finances",
        "precise_location",
        "government_ids",
        "credentials",
        "relationships",
        "minors",
    }
    assert set(ConsentCategory.objects.values_list("default_policy", flat=True)) == {"ask"}
    assert all(ConsentCategory.objects.values_list("description", flat=True))


def test_an_uncategorised_candidate_is_stored(subject, actor, config):
    outcome = route(subject, actor, config, payload={"key": "city", "value": "Lisbon"}, category="")

    assert outcome.action == "stored"
    assert ProfileFact.objects.get(subject=subject).value == "Lisbon"


def test_ask_queues_a_pending_memory_and_stores_nothing(subject, actor, config):
    outcome = route(subject, actor, config)

    assert outcome.action == "pending"
    pending = PendingMemory.objects.get(subject=subject)
    assert (pending.status, pending.category.slug, pending.payload["value"]) == (
        "pending",
        "health",
        "type 1 diabetes",
    )
    assert not ProfileFact.objects.exists()


def test_the_same_candidate_is_not_queued_twice(subject, actor, config):
    route(subject, actor, config)

    assert route(subject, actor, config).action == "already_pending"
    assert PendingMemory.objects.count() == 1


def test_approving_stores_the_memory_with_its_category(subject, actor, config):
    pending = route(subject, actor, config).obj

    fact = pending_approve(pending=pending, actor=actor, config=config)

    pending.refresh_from_db()
    assert (fact.key, fact.value, fact.category) == ("condition", "type 1 diabetes", "health")
    assert pending.status == "approved" and pending.result_id == fact.pk


def test_approving_a_note_keeps_its_date(subject, actor, config):
    when = timezone.now() - timedelta(days=3)
    payload = {"content": "Alice had a panic attack at work", "tags": ["health"], "occurred_at": when}
    pending = route(subject, actor, config, kind="note", payload=payload).obj

    note = pending_approve(pending=pending, actor=actor, config=config)

    assert isinstance(note, Note) and note.category == "health"
    assert abs((note.occurred_at - when).total_seconds()) < 1


def test_a_decision_cannot_be_made_twice(subject, actor, config):
    pending = route(subject, actor, config).obj
    pending_reject(pending=pending, actor=actor)

    with pytest.raises(InvalidInput):
        pending_approve(pending=pending, actor=actor, config=config)
    assert not ProfileFact.objects.exists()


def test_a_rejected_candidate_is_not_asked_again(subject, actor, config):
    pending_reject(pending=route(subject, actor, config).obj, actor=actor)

    again = route(subject, actor, config, payload={**FACT, "value": "Type 1  Diabetes"})

    assert again.action == "rejected_before"
    assert PendingMemory.objects.count() == 1


def test_deny_drops_the_candidate(subject, actor, config):
    consent_policy_set(subject=subject, category="health", policy="deny", actor=actor)

    assert route(subject, actor, config).action == "denied"
    assert not PendingMemory.objects.exists() and not ProfileFact.objects.exists()


def test_allow_stores_the_candidate_with_its_category(subject, actor, config):
    consent_policy_set(subject=subject, category="health", policy="allow", actor=actor)

    outcome = route(subject, actor, config)

    assert outcome.action == "stored" and outcome.obj.category == "health"


def test_policies_are_per_subject(subject, actor):
    from tests.factories import SubjectFactory

    other = SubjectFactory(app=subject.app)
    consent_policy_set(subject=subject, category="finances", policy="allow", actor=actor)

    assert consent_policy(subject=subject, category="finances") == "allow"
    assert consent_policy(subject=other, category="finances") == "ask"


def test_an_unknown_category_or_policy_is_refused(subject, actor):
    with pytest.raises(InvalidInput) as error:
        consent_policy_set(subject=subject, category="hobbies", policy="allow", actor=actor)
    assert error.value.field == "category"
    with pytest.raises(InvalidInput) as error:
        consent_policy_set(subject=subject, category="health", policy="maybe", actor=actor)
    assert error.value.field == "policy"


def test_old_pending_items_expire(subject, actor, config):
    pending = route(subject, actor, config).obj
    PendingMemory.objects.filter(pk=pending.pk).update(created_at=timezone.now() - timedelta(days=40))

    assert pending_expire(older_than=timedelta(days=30)) == 1
    assert pending_expire(older_than=timedelta(days=30)) == 0
    pending.refresh_from_db()
    assert pending.status == "expired"


def test_the_extractor_knows_exactly_the_seeded_categories(db):
    from memory.categories import CATEGORY_PRIORITY

    assert set(CATEGORY_PRIORITY) == set(ConsentCategory.objects.values_list("slug", flat=True))
