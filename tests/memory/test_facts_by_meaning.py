"""Contextual facts found by meaning (issue 15): with embeddings on, a message whose words are
near a fact's keywords gets the fact, though it shares none of them; without, keywords decide."""

import pytest

from memory.config import get_config
from memory.context import context_build
from memory.search.vectors.query import provider_reset
from memory.services import Actor, fact_set
from tests.factories import AppFactory, SubjectFactory

pytestmark = pytest.mark.django_db

LOCAL = {"memory": {"embeddings": {"provider": "local"}}}


@pytest.fixture(autouse=True)
def _fresh_provider_state():
    provider_reset()
    yield
    provider_reset()


def person(config: dict):
    subject = SubjectFactory(app=AppFactory(config=config))
    actor = Actor.system("test")
    fact_set(
        subject=subject,
        key="allergies",
        value="peanuts, severe",
        pinned=False,
        keywords=["food", "eat", "restaurant", "snack"],
        actor=actor,
    )
    fact_set(
        subject=subject, key="editor", value="helix", pinned=False, keywords=["code", "editor"], actor=actor
    )
    return subject


def profile_items(subject, message: str) -> list[dict]:
    built = context_build(subject=subject, message=message, config=get_config(subject.app), record=False)
    return [item for item in built.as_dict(full=True)["items"] if item["section"] == "profile"]


def test_the_dinner_question_brings_the_allergy_with_embeddings_on():
    subject = person(LOCAL)

    items = profile_items(subject, "any dinner ideas for tonight?")

    assert [item["id"] for item in items] == [f"f:{subject.facts.get(key='allergies').pk}"]
    assert items[0]["reason"].startswith("keyword by meaning: dinner ~ ")


def test_a_message_near_none_of_the_keywords_brings_no_contextual_fact():
    subject = person(LOCAL)

    assert profile_items(subject, "how do I rebase a git branch onto main?") == []


def test_a_keyword_hit_is_still_a_keyword_hit_with_embeddings_on():
    subject = person(LOCAL)

    items = profile_items(subject, "where should we eat on friday?")

    assert [item["reason"] for item in items] == ["keyword: eat"]


def test_without_embeddings_keywords_alone_decide():
    subject = person({})

    assert profile_items(subject, "any dinner ideas for tonight?") == []
    assert [item["reason"] for item in profile_items(subject, "what should I eat tonight?")] == [
        "keyword: eat"
    ]


def test_a_similarity_of_one_turns_the_meaning_match_off():
    subject = person({"memory": {"embeddings": {"provider": "local"}, "profile": {"keywordSimilarity": 1.0}}})

    assert profile_items(subject, "any dinner ideas for tonight?") == []
