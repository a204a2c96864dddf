"""Belief revision through reflection (memory/beliefs/, memory.services.beliefs.belief_revise):
what a person says in a later turn revises what was learned from an earlier one — every action
from plain heuristic text, with the history kept — and the issue's example end to end."""

from datetime import UTC, datetime, timedelta

import pytest

from chat.reflect import reflection_enqueue, turn_reflect
from memory.context import context_build
from memory.models import AuditEvent, BeliefRevision, Note, ProfileFact
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create, message_add

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def say(subject, actor):
    """Say `text` in a conversation of `mode` / `scope` and reflect the turn; each call a day later."""
    said = {"n": 0}

    def _say(text: str, *, mode: str = "", scope: str = ""):
        said["n"] += 1
        conversation, _ = conversation_get_or_create(
            subject=subject, external_id=f"{mode}|{scope}", mode=mode, scope=scope, actor=actor
        )
        when = START + timedelta(days=said["n"])
        user, _ = message_add(
            conversation=conversation, role="user", text=text, occurred_at=when, actor=actor
        )
        reply, _ = message_add(
            conversation=conversation, role="assistant", text="OK.", occurred_at=when, actor=actor
        )
        run = reflection_enqueue(conversation=conversation, through_message=reply)
        stats = turn_reflect(run_id=run.pk)
        assert stats.get("skipped") is None, stats
        return user

    return _say


def revisions(subject) -> list[BeliefRevision]:
    return list(BeliefRevision.objects.filter(subject=subject).order_by("id"))


def versions(subject, key) -> list[ProfileFact]:
    return list(ProfileFact.objects.filter(subject=subject, key=key).order_by("id"))


def test_saying_it_again_reinforces_it_without_a_new_version(subject, say):
    say("I live in Paris.")
    message = say("I live in Paris.")

    (revision,) = revisions(subject)
    (fact,) = versions(subject, "location")
    assert (revision.action, revision.decided_by, revision.message_id) == ("REINFORCE", "rules", message.pk)
    assert fact.valid_to is None and fact.confirmations == 1
    assert "same_value" in revision.signals and revision.reason.startswith("said again")
    assert AuditEvent.objects.filter(action="belief.revised", object_id=str(fact.pk)).exists()


def test_saying_it_with_doubt_weakens_it(subject, say, config):
    say("I'm vegetarian.")
    say("I'm still vegetarian I guess.")

    (revision,) = revisions(subject)
    (fact,) = versions(subject, "diet")
    assert revision.action == "WEAKEN" and "cue:doubt" in revision.signals
    step = config["beliefs.revision.weakenStep"]
    assert fact.valid_to is None and fact.confidence == pytest.approx(revision.before["confidence"] - step)


def test_a_correction_supersedes_the_old_value_which_stays_in_the_history(subject, say):
    say("I work at Brightwave.")
    say("Actually, I work at Brightline, not Brightwave.")

    (revision,) = revisions(subject)
    old, new = versions(subject, "employer")
    assert revision.action == "SUPERSEDE" and "cue:correction" in revision.signals
    assert (old.value, old.confidence, old.superseded_by_id) == ("Brightwave", 0.0, new.pk)
    assert (new.value, new.valid_to) == ("Brightline", None)
    assert revision.result_ids == [new.pk] and revision.before["value"] == "Brightwave"


def test_a_change_in_the_world_splits_by_time_and_the_old_value_keeps_its_confidence(subject, say):
    say("I live in Munich.")
    moved = say("I moved to Berlin.")

    (revision,) = revisions(subject)
    old, new = versions(subject, "location")
    assert revision.action == "SPLIT_BY_TIME" and "place" in revision.signals
    assert old.valid_to == moved.occurred_at and old.confidence > 0
    assert (new.value, new.valid_from, new.valid_to) == ("Berlin", moved.occurred_at, None)


def test_a_different_project_splits_by_scope(subject, say):
    say("I use Vim.", scope="kernel")
    say("For this project I use Emacs.", scope="webapp")

    (revision,) = revisions(subject)
    assert revision.action == "SPLIT_BY_SCOPE" and "scope" in revision.signals
    active = {
        (f.scope, f.value) for f in ProfileFact.objects.filter(subject=subject, key="editor", valid_to=None)
    }
    assert active == {("kernel", "Vim"), ("webapp", "Emacs")}
    assert ProfileFact.objects.filter(
        subject=subject, key="editor", scope="", valid_to__isnull=False
    ).exists()


def test_a_named_exception_is_marked_on_the_belief_and_renders_beside_it(subject, say, config):
    say("I'm vegetarian.")
    message = say("I'm vegetarian, but I had fish last night, just this once.")

    (revision,) = [r for r in revisions(subject) if r.belief_kind == "fact"]
    (fact,) = versions(subject, "diet")
    assert revision.action == "MARK_EXCEPTION" and "cue:exception" in revision.signals
    assert fact.valid_to is None and fact.value == "vegetarian"
    assert [e["message_id"] for e in fact.exceptions] == [message.pk]
    assert fact.exceptions[0]["text"].startswith("I had fish last night")
    fact.pinned = True  # rendered whatever the message
    fact.save(update_fields=["pinned"])
    context = context_build(subject=subject, message="dinner ideas?", config=config, record=False)
    assert "- diet: vegetarian (except: I had fish last night" in context.sections[0].text


def test_saying_it_ended_archives_it(subject, say):
    say("I live in Paris.")
    gone = say("I don't live in Paris anymore.")

    (revision,) = revisions(subject)
    (fact,) = versions(subject, "location")
    assert revision.action == "ARCHIVE" and revision.message_id == gone.pk
    assert fact.valid_to == gone.occurred_at  # closed, not deleted


def test_the_issues_example_splits_by_mode_and_each_mode_renders_its_own(subject, say, config):
    say("I like detailed answers.", mode="research_deep_dive")
    say("just give me the command", mode="coding_debug")

    (revision,) = revisions(subject)
    assert revision.action == "SPLIT_BY_MODE" and "mode" in revision.signals
    assert "coding_debug" in revision.reason
    active = {
        (f.mode, f.value)
        for f in ProfileFact.objects.filter(subject=subject, key="answer_style", valid_to=None)
    }
    assert active == {("research_deep_dive", "detailed"), ("coding_debug", "concise")}
    assert len(versions(subject, "answer_style")) == 3  # the unqualified first version is history

    def profile(mode):
        context = context_build(
            subject=subject, message="how do I do this?", config=config, mode=mode, record=False
        )
        return next(b.text for b in context.sections if b.name == "profile")

    assert "answer_style: concise" in profile("coding_debug") and "detailed" not in profile("coding_debug")
    assert "answer_style: detailed" in profile("research_deep_dive")
    assert "concise" not in profile("research_deep_dive")


def test_a_later_turn_in_the_split_mode_reinforces_that_modes_value(subject, say):
    say("I like detailed answers.", mode="research_deep_dive")
    say("just give me the command", mode="coding_debug")
    say("just give me the command", mode="coding_debug")

    last = revisions(subject)[-1]
    fact = ProfileFact.objects.get(pk=last.belief_id)
    assert (last.action, fact.mode, fact.value, fact.confirmations) == (
        "REINFORCE",
        "coding_debug",
        "concise",
        1,
    )


def test_revision_switched_off_stores_plainly(subject, say, app, actor):
    app_config_set(app=app, config={"memory": {"beliefs": {"revision": {"enabled": False}}}}, actor=actor)
    say("I work at Brightwave.")
    say("Actually, I work at Brightline, not Brightwave.")

    assert revisions(subject) == []
    old, new = versions(subject, "employer")
    assert old.confidence > 0 and new.value == "Brightline"  # fact_set as before


def test_a_note_said_again_in_other_words_reinforces_the_note(subject, say):
    say("Remember that the staging database runs on port 5433 behind the VPN.")
    message = say("Remember that the staging database runs on port 5433 behind the VPN, always.")

    notes = list(Note.objects.filter(subject=subject))
    assert len(notes) == 1  # no second note
    (revision,) = revisions(subject)
    assert (revision.action, revision.belief_kind, revision.belief_id) == ("REINFORCE", "note", notes[0].pk)
    assert notes[0].sources.filter(message=message).exists()


def test_a_corrected_note_is_superseded_by_the_new_note_linked_to_it(subject, say):
    say("Remember that the staging database runs on port 5433.")
    say("Remember that, correction, the staging database runs on port 6432, I said 5433 by mistake.")

    (revision,) = revisions(subject)
    old = Note.objects.get(pk=revision.belief_id)
    (new_id,) = [i for i in revision.result_ids if i != old.pk]
    assert revision.action == "SUPERSEDE" and "number" in revision.signals
    assert old.archived_at is not None and old.confidence == 0.0
    assert old.links_in.filter(src_id=new_id, kind="contradicts").exists()
    assert "6432" in Note.objects.get(pk=new_id).content


def test_consent_routing_stays_first(subject, say, app, actor):
    """A health fact the person has not allowed waits for consent; nothing is revised."""
    say("I'm allergic to penicillin.")
    say("Actually, I'm allergic to sulfa drugs, not penicillin.")

    assert revisions(subject) == []
    assert not ProfileFact.objects.filter(subject=subject, key="allergies").exists()
