import pytest

from memory.models import AuditEvent, ProfileFact
from memory.selectors import fact_history, fact_list
from memory.services import fact_remove, fact_set
from memoryweb.errors import InvalidInput, NotFound

pytestmark = pytest.mark.postgres


def test_set_creates_a_pinned_active_fact(subject, actor):
    fact, changed = fact_set(subject=subject, key="name", value="Alice", actor=actor)

    assert changed is True
    assert fact.pinned is True and fact.valid_to is None
    assert AuditEvent.objects.filter(action="fact.set", object_id=str(fact.pk)).exists()


def test_set_supersedes_the_active_fact(subject, actor):
    old, _ = fact_set(subject=subject, key="city", value="Paris", actor=actor)

    new, changed = fact_set(subject=subject, key="city", value="Lisbon", actor=actor)

    old.refresh_from_db()
    assert changed is True
    assert old.valid_to is not None and old.superseded_by_id == new.pk
    assert new.valid_to is None
    assert new.valid_from >= old.valid_from
    assert ProfileFact.objects.filter(subject=subject, key="city", valid_to=None).count() == 1


def test_setting_the_same_value_again_counts_a_confirmation_not_a_version(subject, actor):
    fact_set(subject=subject, key="city", value="Paris", actor=actor)

    fact, changed = fact_set(subject=subject, key="city", value="Paris", actor=actor)

    assert changed is False
    assert fact.confirmations == 1
    assert ProfileFact.objects.filter(subject=subject, key="city").count() == 1


def test_remove_closes_the_fact_and_history_survives(subject, actor):
    fact_set(subject=subject, key="city", value="Paris", actor=actor)
    fact_set(subject=subject, key="city", value="Lisbon", actor=actor)

    fact_remove(subject=subject, key="city", actor=actor)

    assert fact_list(subject=subject) == []
    history = fact_history(subject=subject, key="city")
    assert [f.value for f in history] == ["Paris", "Lisbon"]
    assert all(f.valid_to is not None for f in history)
    assert history[0].superseded_by_id == history[1].pk


def test_removing_a_missing_fact_is_not_found(subject, actor):
    with pytest.raises(NotFound):
        fact_remove(subject=subject, key="nothing", actor=actor)


def test_a_contextual_fact_needs_keywords(subject, actor):
    with pytest.raises(InvalidInput) as error:
        fact_set(subject=subject, key="allergy", value="peanuts", pinned=False, actor=actor)
    assert error.value.field == "keywords"
    assert not ProfileFact.objects.exists()


def test_list_marks_pinned_and_contextual_facts(subject, actor):
    fact_set(subject=subject, key="name", value="Alice", actor=actor)
    fact_set(
        subject=subject, key="allergy", value="peanuts", pinned=False, keywords=["Food", "food"], actor=actor
    )

    facts = {f.key: f for f in fact_list(subject=subject)}

    assert facts["name"].pinned is True
    assert facts["allergy"].pinned is False and facts["allergy"].keywords == ["food"]


def test_mode_and_scope_keep_separate_active_versions(subject, actor):
    fact_set(subject=subject, key="tone", value="casual", actor=actor)
    fact_set(subject=subject, key="tone", value="formal", mode="coding_debug", actor=actor)

    active = ProfileFact.objects.filter(subject=subject, key="tone", valid_to=None)

    assert sorted(active.values_list("mode", "value")) == [("", "casual"), ("coding_debug", "formal")]


@pytest.mark.parametrize("key", ["", " ", "a/b", "x" * 101])
def test_bad_keys_are_refused_naming_the_field(subject, actor, key):
    with pytest.raises(InvalidInput) as error:
        fact_set(subject=subject, key=key, value="v", actor=actor)
    assert error.value.field == "key"
