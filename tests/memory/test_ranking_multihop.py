"""Questions about one person across many turns (memory/ranking/notes.py, full mode): the
names of the people who speak are left to the speaker and entity signals
(`retrieve.nameTerms` signals) instead of filling the full-text list with their turns."""

import datetime

import pytest

from memory.config import get_config
from memory.ranking.names import without_names
from memory.text import query_terms
from memoryweb.errors import ConfigError
from tests.memory.ranking_world import rank, session

UTC = datetime.UTC
STATUS = "What is Caroline's relationship status?"


def _name_only_session(subject, actor, config):
    """A turn that answers, the turn before it, and one elsewhere that matches only the name."""
    chatter, status = session(
        subject,
        actor,
        config,
        "s1",
        ["Caroline: Cool, Mel!", "Caroline: My relationship status? Single, and happy that way."],
    )
    (far,) = session(subject, actor, config, "s2", ["Caroline: Cool, so cool!"])
    return chatter, status, far


def test_the_names_leave_the_search_terms_in_lower_case():
    assert without_names(query_terms(STATUS), {"Caroline"}) == ["relationship", "status"]


@pytest.mark.django_db
def test_a_turn_matching_only_the_speakers_name_is_no_full_text_candidate(subject, actor, config):
    chatter, status, far = _name_only_session(subject, actor, config)
    searched = config.with_overrides({"retrieve": {"nameTerms": "search"}})

    by_name = [n.pk for n, _, _ in rank(subject, searched, STATUS)]
    ranked = {n.pk: why for n, _, why in rank(subject, config, STATUS)}

    assert config["retrieve.nameTerms"] == "signals"
    assert far.pk in by_name  # "caroline" alone matched it
    assert far.pk not in ranked
    assert status.pk in ranked and "said by Caroline" in ranked[status.pk]
    assert chatter.pk in ranked  # the turn before the answer: a neighbour, not a match


@pytest.mark.django_db
def test_the_speaker_signal_still_prefers_the_person_named(subject, actor, config):
    (theirs,) = session(subject, actor, config, "s1", ["Melanie: Pottery class again, pottery is my thing."])
    (mine,) = session(subject, actor, config, "s2", ["Caroline: Pottery class again, pottery is my thing."])
    off = config.with_overrides({"scoring": {"speakerMatch": 0.0, "entityMatch": 0.0}})
    question = "Does Melanie like pottery?"

    ranked = {n.pk: s for n, s, _ in rank(subject, config, question)}
    unsigned = {n.pk: s for n, s, _ in rank(subject, off, question)}

    assert unsigned[theirs.pk] == pytest.approx(unsigned[mine.pk])  # the name is no term
    assert ranked[theirs.pk] == pytest.approx(ranked[mine.pk] + config["scoring.speakerMatch"])


@pytest.mark.django_db
def test_a_question_holding_only_a_name_still_searches_the_name(subject, actor, config):
    (note,) = session(subject, actor, config, "s1", ["Melanie: Oliver is my cat."])

    assert [n.pk for n, _, _ in rank(subject, config, "Who is Oliver?")] == [note.pk]


@pytest.mark.django_db
def test_the_name_of_a_thing_nobody_says_stays_a_search_term(subject, actor, config):
    (max_turn,) = session(subject, actor, config, "s1", ["John: Max turned ten, still a good boy."])
    session(subject, actor, config, "s2", ["John: Got a new leash for the dog today."])

    ranked = {n.pk for n, _, _ in rank(subject, config, "When did John get his dog Max?")}

    assert max_turn.pk in ranked  # Max speaks in no turn: searched as a word, like "dog"


@pytest.mark.django_db
def test_a_question_whose_other_words_only_date_searches_the_names(subject, actor, config):
    (helped,) = session(subject, actor, config, "s1", ["Nate: Helped Joanna move her desk."])
    session(subject, actor, config, "s2", ["Joanna: The 25 kittens in May were a handful."])

    ranked = {n.pk for n, _, _ in rank(subject, config, "What did Nate do for Joanna on 25 May?")}

    assert helped.pk in ranked  # found by the names: the date is the date signal's


def test_an_unknown_name_terms_choice_is_refused_with_a_suggestion(app):
    app.config = {"memory": {"retrieve": {"nameTerms": "signal"}}}

    with pytest.raises(ConfigError, match=r"memory\.retrieve\.nameTerms .*did you mean signals"):
        get_config(app)
