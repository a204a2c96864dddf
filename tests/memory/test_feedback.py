"""Feedback closes the loop (docs/feedback.md): "stale" weakens a belief through a revision,
"used"/"useful" add confidence, "intrusive" lowers an item in the mode it was given in."""

import pytest

from memory.context import context_build
from memory.models import BeliefRevision, Lesson, RevisionAction, VoteEvent
from memory.modes import mode_get
from memory.ranking.applicability.candidate import Candidate
from memory.ranking.applicability.score import _intrusive
from memory.services import fact_set, note_store, vote_cast
from memoryweb.errors import InvalidInput
from tests.factories import ConversationFactory

API = "/api/v1"


def vote(subject, actor, config, item, signal, mode=""):
    kind = "fact" if hasattr(item, "key") else "note" if hasattr(item, "archived_at") else "lesson"
    return vote_cast(
        subject=subject, item_kind=kind, item_id=item.pk, signal=signal, actor=actor, config=config, mode=mode
    )


@pytest.fixture
def fact(subject, actor):
    return fact_set(subject=subject, key="city", value="Lisbon", actor=actor)[0]


# --- stale ---------------------------------------------------------------------------------------
def test_stale_on_a_fact_is_a_weaken_revision_decided_by_feedback(subject, actor, config, fact):
    event, _ = vote(subject, actor, config, fact, "stale", mode="companion")

    fact.refresh_from_db()
    assert fact.confidence == pytest.approx(1.0 - config["beliefs.revision.weakenStep"])
    assert fact.valid_to is None  # weakened, still active
    revision = BeliefRevision.objects.get()
    assert (revision.action, revision.decided_by, revision.belief_kind, revision.belief_id) == (
        RevisionAction.WEAKEN,
        "feedback",
        "fact",
        fact.pk,
    )
    assert "stale" in revision.reason and "companion" in revision.reason
    assert revision.signals == [f"vote:{event.pk}", "stale"]
    assert revision.before["confidence"] == 1.0
    assert event.mode == "companion" and event.signal == "stale"


def test_repeated_stale_archives_the_fact_once_under_archive_below(subject, actor, config, fact):
    floor = config["beliefs.revision.archiveBelow"]
    step = config["beliefs.revision.weakenStep"]
    casts = 0
    while fact.valid_to is None:
        vote(subject, actor, config, fact, "stale")
        fact.refresh_from_db()
        casts += 1
        assert casts < 20
    actions = list(BeliefRevision.objects.order_by("pk").values_list("action", flat=True))
    assert actions == [RevisionAction.WEAKEN] * (casts - 1) + [RevisionAction.ARCHIVE]
    assert fact.confidence < floor <= fact.confidence + step
    # archived: a further "stale" moves the score only
    vote(subject, actor, config, fact, "stale")
    assert BeliefRevision.objects.count() == casts
    assert VoteEvent.objects.filter(signal="stale").count() == casts + 1


def test_repeated_stale_archives_a_note(subject, actor, config):
    note = note_store(subject=subject, content="Alice works at Acme in Porto", actor=actor, config=config)[0]
    while note.archived_at is None:
        vote(subject, actor, config, note, "stale")
        note.refresh_from_db()
    last = BeliefRevision.objects.order_by("pk").last()
    assert (last.action, last.belief_kind, last.decided_by) == (RevisionAction.ARCHIVE, "note", "feedback")
    assert note.confidence < config["beliefs.revision.archiveBelow"]


def test_with_stale_weakens_off_stale_moves_the_score_only(subject, actor, config, fact):
    off = config.with_overrides({"feedback": {"staleWeakens": False}})
    _, score = vote(subject, actor, off, fact, "stale")

    fact.refresh_from_db()
    assert (fact.confidence, score) == (1.0, -0.5)
    assert not BeliefRevision.objects.exists()


def test_stale_on_a_lesson_has_no_revision_only_the_score(subject, actor, config):
    lesson = Lesson.objects.create(subject=subject, text="Alice prefers restaurants with a terrace.")
    _, score = vote(subject, actor, config, lesson, "stale")

    assert score == -0.5 and not BeliefRevision.objects.exists()


# --- used / useful -------------------------------------------------------------------------------
def test_useful_raises_confidence_clamped_at_one(subject, actor, config, fact):
    step = config["feedback.usefulConfidence"]
    fact.confidence = 0.9
    fact.save(update_fields=["confidence"])

    vote(subject, actor, config, fact, "useful")
    fact.refresh_from_db()
    assert fact.confidence == pytest.approx(0.9 + step)

    for _ in range(5):
        vote(subject, actor, config, fact, "used")
    fact.refresh_from_db()
    assert fact.confidence == 1.0
    assert not BeliefRevision.objects.exists()  # confidence, not a revision


def test_useful_raises_a_notes_confidence(subject, actor, config):
    note = note_store(subject=subject, content="Alice swims on Sundays", actor=actor, config=config)[0]
    note.confidence = 0.5
    note.save(update_fields=["confidence"])
    vote(subject, actor, config, note, "useful")
    note.refresh_from_db()
    assert note.confidence == pytest.approx(0.5 + config["feedback.usefulConfidence"])


def test_up_and_irrelevant_leave_confidence_alone(subject, actor, config, fact):
    vote(subject, actor, config, fact, "up")
    vote(subject, actor, config, fact, "irrelevant")
    fact.refresh_from_db()
    assert fact.confidence == 1.0


# --- mode ----------------------------------------------------------------------------------------
def test_an_unknown_mode_is_refused_naming_mode_and_nothing_is_written(subject, actor, config, fact):
    with pytest.raises(InvalidInput) as refused:
        vote(subject, actor, config, fact, "stale", mode="nightclub")

    assert refused.value.field == "mode"
    fact.refresh_from_db()
    assert (fact.vote_score, fact.confidence) == (0.0, 1.0)
    assert not VoteEvent.objects.exists() and not BeliefRevision.objects.exists()


def test_the_votes_api_records_the_mode(client, subject, fact):
    response = client.post(
        f"{API}/subjects/alice/votes",
        {"item": f"f:{fact.pk}", "signal": "intrusive", "mode": "companion"},
        format="json",
    )

    assert response.status_code == 201
    assert response.json()["mode"] == "companion"
    assert VoteEvent.objects.get().mode == "companion"


@pytest.mark.parametrize("mode", ["nightclub", 3, None])
def test_the_votes_api_refuses_a_bad_mode_with_400_naming_mode(client, subject, fact, mode):
    response = client.post(
        f"{API}/subjects/alice/votes",
        {"item": f"f:{fact.pk}", "signal": "stale", "mode": mode},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["field"] == "mode"
    assert not VoteEvent.objects.exists() and not BeliefRevision.objects.exists()


def test_the_votes_api_without_a_mode_records_none(client, subject, fact):
    response = client.post(
        f"{API}/subjects/alice/votes", {"item": f"f:{fact.pk}", "signal": "up"}, format="json"
    )

    assert response.status_code == 201 and response.json()["mode"] == ""
    assert VoteEvent.objects.get().mode == ""


# --- intrusive -----------------------------------------------------------------------------------
MESSAGE = "the deploy pipeline of billing fails again"


@pytest.fixture
def conversations(subject):
    return {
        mode: ConversationFactory(subject=subject, scope="billing-api", mode=mode)
        for mode in ("companion", "coding_debug")
    }


def scored(subject, config, conversation, note) -> dict:
    context = context_build(
        subject=subject, message=MESSAGE, config=config, conversation=conversation, record=False
    )
    items = {item["id"]: item for item in context.as_dict()["items"]}
    return items[f"n:{note.pk}"]["applicability"]


def test_intrusive_in_companion_lowers_the_item_in_companion_not_in_coding_debug(
    subject, actor, config, conversations
):
    note = note_store(
        subject=subject, content="Alice keeps the billing deploy pipeline notes", actor=actor, config=config
    )[0]
    before = {mode: scored(subject, config, c, note) for mode, c in conversations.items()}
    assert before["companion"]["intrusive_penalty"] == before["coding_debug"]["intrusive_penalty"] == 0.0

    vote(subject, actor, config, note, "intrusive", mode="companion")
    after = {mode: scored(subject, config, c, note) for mode, c in conversations.items()}

    penalty = config["feedback.intrusivePenalty"]
    assert after["companion"]["intrusive_penalty"] == pytest.approx(penalty)
    assert after["coding_debug"]["intrusive_penalty"] == 0.0
    for mode, extra in (("companion", penalty), ("coding_debug", 0.0)):
        # the vote's score moves vitality a little in every mode; the penalty only in companion
        w_v = mode_get(mode).apply(config)["applicability.weights"]["vitality"]
        vitality_drop = w_v * (before[mode]["vitality"] - after[mode]["vitality"])
        drop = before[mode]["final"] - after[mode]["final"]
        assert drop == pytest.approx(vitality_drop + extra, abs=2e-4), mode
    assert before["companion"]["final"] - after["companion"]["final"] > penalty


def test_intrusive_signals_add_up_to_the_vote_limit_and_without_a_mode_count_nowhere(
    subject, actor, config, conversations
):
    note = note_store(
        subject=subject, content="Alice keeps the billing deploy pipeline notes", actor=actor, config=config
    )[0]
    vote(subject, actor, config, note, "intrusive")  # no mode: the score only
    assert scored(subject, config, conversations["companion"], note)["intrusive_penalty"] == 0.0

    for _ in range(7):
        vote(subject, actor, config, note, "intrusive", mode="companion")
    cap = config["voting.maxVotePerItem"]
    assert scored(subject, config, conversations["companion"], note)["intrusive_penalty"] == pytest.approx(
        config["feedback.intrusivePenalty"] * cap
    )


def test_the_intrusive_counts_of_a_whole_build_are_one_query(
    subject, actor, config, django_assert_num_queries
):
    notes = [
        note_store(subject=subject, content=f"note {word}", actor=actor, config=config)[0]
        for word in ("alpha", "beta", "gamma")
    ]
    fact = fact_set(subject=subject, key="city", value="Lisbon", actor=actor)[0]
    lesson = Lesson.objects.create(subject=subject, text="a lesson")
    for item in (notes[0], notes[0], notes[2], fact, lesson):
        vote(subject, actor, config, item, "intrusive", mode="companion")
    vote(subject, actor, config, notes[1], "intrusive", mode="coding_debug")
    candidates = [Candidate("note", n, "notes", 1.0, i, "") for i, n in enumerate(notes)]
    candidates += [
        Candidate("fact", fact, "profile", 1.0, 0, ""),
        Candidate("lesson", lesson, "lessons", 1.0, 0, ""),
    ]

    with django_assert_num_queries(1):
        counts = _intrusive(candidates, mode_get("companion"))

    assert counts == {
        ("note", notes[0].pk): 2,
        ("note", notes[2].pk): 1,
        ("fact", fact.pk): 1,
        ("lesson", lesson.pk): 1,
    }
