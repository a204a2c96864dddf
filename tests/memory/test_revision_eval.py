"""The belief-revision evaluator (memory/beliefs/evaluation/) and its labelled set
(tests/data/revisions/): the set's shape, the counting on a synthetic mini-set, the history
check, the per-case rollback and the command. The engine itself (belief_revise) is replaced by
small deciders written here, each applying its choice through revision_apply, so the harness
is tested on its own: no accuracy floor, the set measures the engine, it does not gate it."""

import copy
import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import pytest
from django.core.management import CommandError, call_command

from memory.beliefs.evaluation import (
    ACTIONS,
    ALL_SPLITS,
    NONE,
    SPLITS,
    case_errors,
    claim_of,
    format_misses,
    format_table,
    history_problems,
    history_snapshot,
    load_cases,
    load_split,
    measure,
    runner,
    scores,
    set_errors,
)
from memory.models import App, BeliefRevision, Note, NoteVersion, ProfileFact, RevisionAction, Subject
from memory.services import fact_set, note_store
from memory.services.beliefs import revision_apply
from memory.services.conversations import conversation_get_or_create, message_add

# --- the set -------------------------------------------------------------------------------


def test_splits_load_with_their_sizes():
    dev, test = load_split("dev"), load_split("test")
    assert len(dev) >= 60
    assert len(test) >= 40
    assert [c["id"] for c in load_cases("all")] == [
        c["id"] for split in ALL_SPLITS for c in load_split(split)
    ]
    assert load_cases("dev") == dev
    for split in SPLITS:
        assert all(c["split"] == split for c in load_split(split))
    with pytest.raises(ValueError):
        load_cases("heldout")


@pytest.mark.django_db
def test_every_case_validates_against_the_format():
    cases = load_cases("all")
    assert set_errors(cases) == []
    for case in cases:
        assert list(case) == ["id", "split", "belief", "evidence", "expected", "why"], case["id"]


def test_every_action_is_covered_in_facts_and_notes():
    cases = load_cases("all")
    per_action = Counter(c["expected"] for c in cases)
    assert set(per_action) == set(ACTIONS)
    assert min(per_action.values()) >= 8, per_action
    for action in ACTIONS:
        kinds = {c["belief"]["kind"] for c in cases if c["expected"] == action}
        assert kinds == {"fact", "note"}, action
    notes = sum(1 for c in cases if c["belief"]["kind"] == "note")
    assert notes / len(cases) >= 0.2
    for split in SPLITS:  # each split alone measures every action
        assert {c["expected"] for c in load_split(split)} == set(ACTIONS)


def test_the_splits_do_not_share_wording():
    words = {
        split: {c["evidence"]["text"] for c in load_split(split)}
        | {c["belief"]["said"] for c in load_split(split)}
        for split in SPLITS
    }
    for one in SPLITS:
        for other in SPLITS:
            assert one == other or not words[one] & words[other], (one, other)
    ids = [c["id"] for c in load_cases("all")]
    assert len(set(ids)) == len(ids)


@pytest.mark.django_db
def test_the_heldout2_split_loads_whole_and_stays_out_of_all():
    """heldout2 (written apart from the rules and from dev/test) loads on its own, measures every
    action at least 12 times in facts and notes alike, and is never part of "all"."""
    heldout = load_split("heldout2")
    assert load_cases("heldout2") == heldout
    assert set_errors(heldout) == []
    assert all(c["split"] == "heldout2" for c in heldout)
    ids = [c["id"] for c in heldout]
    assert len(set(ids)) == len(ids)
    assert ids == [f"h2-{i:03d}" for i in range(1, len(ids) + 1)]
    per_action = Counter(c["expected"] for c in heldout)
    assert set(per_action) == set(ACTIONS) and min(per_action.values()) >= 12, per_action
    for action in ACTIONS:
        kinds = Counter(c["belief"]["kind"] for c in heldout if c["expected"] == action)
        assert kinds["fact"] >= 4 and kinds["note"] >= 4, (action, kinds)
    assert not set(ids) & {c["id"] for c in load_cases("all")}
    known = {c["id"]: c for c in load_split("dev") + load_split("test")}
    known_words = {c["evidence"]["text"] for c in known.values()} | {
        c["belief"]["said"] for c in known.values()
    }
    assert not known_words & (
        {c["evidence"]["text"] for c in heldout} | {c["belief"]["said"] for c in heldout}
    )


@pytest.mark.django_db
def test_every_heldout2_label_can_be_applied_with_history_intact():
    """The oracle (the expected action, never the engine) on heldout2: every case runs and each
    label is one its belief can take — a split's two sides differ, an ending has its value."""
    cases = load_split("heldout2")
    report = measure(cases, split="heldout2", reviser=oracle(cases), claim_class=dict)
    assert [(r.id, r.error) for r in report.results if r.error] == []
    assert report.scores()["accuracy"] == 1.0
    assert report.history_broken() == []


def _good_case() -> dict:
    return copy.deepcopy(load_split("dev")[0])


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change, where",
    [
        (lambda c: c.update(expected="OVERWRITE"), "expected"),
        (lambda c: c["belief"].update(mode="pirate"), "belief.mode"),
        (lambda c: c["evidence"].update(mode="karaoke"), "evidence.mode"),
        (lambda c: c["belief"].update(kind="opinion"), "belief.kind"),
        (lambda c: c.pop("why"), "keys"),
        (lambda c: c.update(why="  "), "why"),
        (lambda c: c["evidence"].pop("scope"), "evidence keys"),
        (lambda c: c["belief"].update(extra="x"), "belief keys"),
        (lambda c: c["evidence"].update(at="yesterday"), "evidence.at"),
        (lambda c: c["evidence"].update(at="2001-01-01T00:00:00Z"), "evidence.at"),
        (lambda c: c["belief"].update(value=""), "belief.value"),
        (lambda c: c["evidence"].update(key=""), "evidence.key"),
        (lambda c: c.update(split="train"), "split"),
        (lambda c: c["belief"].update(said=""), "belief.said"),
        (lambda c: c["evidence"].update(value=3), "evidence.value"),
    ],
)
def test_a_malformed_case_is_named(change, where):
    case = _good_case()
    assert case_errors(case) == []
    change(case)
    errors = case_errors(case)
    assert errors and any(where in e for e in errors), errors
    assert all(e.startswith(f"{case['id']}:") for e in errors)


@pytest.mark.django_db
def test_a_note_case_needs_content_and_no_key():
    case = next(c for c in load_split("dev") if c["belief"]["kind"] == "note")
    case = copy.deepcopy(case)
    case["evidence"]["content"] = ""
    case["belief"]["key"] = "diet"
    errors = case_errors(case)
    assert any("evidence.content" in e for e in errors)
    assert any("belief.key" in e for e in errors)


@pytest.mark.django_db
def test_repeated_ids_are_refused():
    case = _good_case()
    assert any("id repeats" in e for e in set_errors([case, copy.deepcopy(case)]))


# --- counting ------------------------------------------------------------------------------

R, W, S, A = "REINFORCE", "WEAKEN", "SUPERSEDE", "ARCHIVE"


def test_precision_recall_and_f1_are_counted_per_action():
    pairs = [
        (R, R),
        (R, R),
        (R, W),  # a reinforce taken as a weaken
        (W, W),
        (W, NONE),  # a missed conflict
        (S, R),  # a correction taken as a reinforce
        (S, S),
        (A, S),
    ]
    data = scores(pairs)
    per = data["per_action"]
    assert per[R] == {"tp": 2, "predicted": 3, "support": 3, "precision": 0.667, "recall": 0.667, "f1": 0.667}
    assert per[W]["precision"] == 0.5 and per[W]["recall"] == 0.5
    assert per[S]["tp"] == 1 and per[S]["predicted"] == 2 and per[S]["support"] == 2
    assert per[A] == {"tp": 0, "predicted": 0, "support": 1, "precision": None, "recall": 0.0, "f1": None}
    assert per[NONE] == {"tp": 0, "predicted": 1, "support": 0, "precision": 0.0, "recall": None, "f1": None}
    assert "SPLIT_BY_MODE" not in per  # neither expected nor taken
    assert data["cases"] == 8 and data["correct"] == 4 and data["accuracy"] == 0.5
    assert data["confusion"][R] == {R: 2, W: 1}
    assert data["confusion"][A] == {S: 1}
    # macro over the actions expected (R, W, S, A), an undefined precision counting as 0
    assert data["macro"]["recall"] == round((0.667 + 0.5 + 0.5 + 0.0) / 4, 3)
    assert data["macro"]["precision"] == round((0.667 + 0.5 + 0.5 + 0.0) / 4, 3)


def test_a_perfect_and_an_empty_run():
    perfect = scores([(a, a) for a in ACTIONS])
    assert perfect["accuracy"] == 1.0
    assert all(row["f1"] == 1.0 for row in perfect["per_action"].values())
    empty = scores([])
    assert empty["accuracy"] is None and empty["per_action"] == {} and empty["macro"]["f1"] is None


# --- deciders standing in for belief_revise ------------------------------------------------


def _belief_of(subject, claim):
    kind = claim["kind"]
    if kind == "fact":
        return (
            ProfileFact.objects.filter(subject=subject, key=claim["key"], valid_to=None)
            .order_by("pk")
            .first()
        )
    return Note.objects.filter(subject=subject).order_by("pk").first()


def _apply(action, *, subject, claim, message, actor, config):
    """Apply `action` to the case's belief the way an engine would, through revision_apply."""
    belief = _belief_of(subject, claim)
    revision_claim: dict = {}
    if claim["kind"] == "fact":
        revision_claim = {"value": claim["value"], "text": claim["text"]}
    else:
        newer, created = note_store(
            subject=subject,
            content=claim["content"],
            conversation=message.conversation,
            source_message=message,
            actor=actor,
            config=config,
        )
        if newer.pk != belief.pk:
            revision_claim = {"note_id": newer.pk}
    return [
        revision_apply(
            subject=subject,
            belief=belief,
            action=action,
            reason=f"test decider: {action}",
            claim=revision_claim,
            message=message,
            actor=actor,
            config=config,
        )
    ]


def oracle(cases):
    """Takes the expected action of every case: what a perfect engine would do."""
    expected = {f"revision-eval:{c['id']}": c["expected"] for c in cases}

    def revise(*, subject, claim, message, actor, config):
        return _apply(
            expected[subject.external_id],
            subject=subject,
            claim=claim,
            message=message,
            actor=actor,
            config=config,
        )

    return revise


def always(action):
    def revise(*, subject, claim, message, actor, config):
        return _apply(action, subject=subject, claim=claim, message=message, actor=actor, config=config)

    return revise


def plain_store(*, subject, claim, message, actor, config):
    """No conflict seen: the claim stored as it comes, no revision."""
    if claim["kind"] == "fact" and claim["value"]:
        fact_set(subject=subject, key=claim["key"], value=claim["value"], source_message=message, actor=actor)
    elif claim["kind"] == "note":
        note_store(
            subject=subject, content=claim["content"], source_message=message, actor=actor, config=config
        )
    return []


def vandal(*, subject, claim, message, actor, config):
    """Revises, then destroys the history: deletes the fact's version or the note's versions."""
    revisions = _apply(
        RevisionAction.REINFORCE, subject=subject, claim=claim, message=message, actor=actor, config=config
    )
    if claim["kind"] == "fact":
        ProfileFact.objects.filter(subject=subject).delete()
    else:
        NoteVersion.objects.filter(note__subject=subject).delete()
    return revisions


def broken(*, subject, claim, message, actor, config):
    raise RuntimeError("the engine fell over")


def _mini():
    """A synthetic mini-set: the first fact case and the first note case of each action in dev."""
    dev = load_split("dev")
    return [
        next(c for c in dev if c["expected"] == action and c["belief"]["kind"] == kind)
        for action in ACTIONS
        for kind in ("fact", "note")
    ]


# --- running -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_oracle_scores_perfectly_on_every_case_with_history_intact():
    """Every labelled action can be applied to its case (the split has its two qualifiers, the
    values are there) and leaves the history intact."""
    cases = load_cases("all")
    report = measure(cases, reviser=oracle(cases), claim_class=dict)
    errors = [(r.id, r.error) for r in report.results if r.error]
    assert errors == []
    assert [r.id for r in report.results if not r.correct] == []
    assert report.history_broken() == []
    data = report.scores()
    assert data["accuracy"] == 1.0
    assert all(data["per_action"][a]["recall"] == 1.0 for a in ACTIONS)
    assert report.as_dict()["history_intact"] == len(cases)


@pytest.mark.django_db
def test_one_decider_for_everything_counts_as_it_should():
    cases = _mini()
    report = measure(cases, reviser=always(RevisionAction.REINFORCE), claim_class=dict)
    per = report.scores()["per_action"]
    assert per["REINFORCE"]["precision"] == round(2 / 16, 3)
    assert per["REINFORCE"]["recall"] == 1.0
    assert all(per[a]["recall"] == 0.0 and per[a]["precision"] is None for a in ACTIONS if a != "REINFORCE")
    assert report.scores()["confusion"]["SUPERSEDE"] == {"REINFORCE": 2}
    assert report.scores()["accuracy"] == round(2 / 16, 3)


@pytest.mark.django_db
def test_no_revision_is_none():
    cases = _mini()
    report = measure(cases, reviser=plain_store, claim_class=dict)
    assert {r.got for r in report.results} == {NONE}
    assert report.scores()["accuracy"] == 0.0
    assert report.scores()["per_action"][NONE]["predicted"] == len(cases)
    # a plain store closes the old fact row, never deletes it
    assert report.history_broken() == []


@pytest.mark.django_db
def test_the_history_check_fails_when_a_version_is_deleted():
    cases = _mini()
    report = measure(cases, reviser=vandal, claim_class=dict)
    broken_ids = {r.id for r in report.history_broken()}
    fact_cases = {c["id"] for c in cases if c["belief"]["kind"] == "fact"}
    assert fact_cases and fact_cases <= broken_ids
    fact_result = next(r for r in report.results if r.kind == "fact")
    assert any("was deleted" in p and p.startswith("fact row") for p in fact_result.history)
    note_result = next(r for r in report.results if r.kind == "note")
    assert any("version 1 of note" in p for p in note_result.history)
    assert "history intact: 0/" in format_table(report, "t")
    assert "history: fact row" in format_misses(report)


@pytest.mark.django_db
def test_history_problems_catch_a_fact_rewritten_in_place(subject, actor, config):
    fact, _ = fact_set(subject=subject, key="location", value="Munich", actor=actor)
    note, _ = note_store(subject=subject, content="Cycles to work", actor=actor, config=config)
    before = history_snapshot(subject)
    assert history_problems(before, history_snapshot(subject)) == []
    fact_set(subject=subject, key="location", value="Berlin", actor=actor)  # a new version: fine
    assert history_problems(before, history_snapshot(subject)) == []
    ProfileFact.objects.filter(pk=fact.pk).update(value="Berlin")
    NoteVersion.objects.filter(note=note).update(content="Takes the bus")
    problems = history_problems(before, history_snapshot(subject))
    assert any(f"f:{fact.pk} was rewritten in place" in p for p in problems)
    assert any(f"note n:{note.pk} was rewritten" in p for p in problems)
    Note.objects.filter(pk=note.pk).delete()
    assert any(
        f"note n:{note.pk} was deleted" in p for p in history_problems(before, history_snapshot(subject))
    )


@pytest.mark.django_db
def test_an_engine_error_is_reported_and_the_run_goes_on():
    cases = _mini()
    report = measure(cases, reviser=broken, claim_class=dict)
    assert len(report.results) == len(cases)
    assert all(r.error == "RuntimeError: the engine fell over" and r.got == NONE for r in report.results)
    assert "engine errors: 16" in format_table(report, "t")


@pytest.mark.django_db
def test_each_case_is_rolled_back_and_isolated():
    seen = []

    def peek(*, subject, claim, message, actor, config):
        # only this case's belief is there: no other case's memory leaks in
        seen.append(
            (
                ProfileFact.objects.filter(subject__app=subject.app).count(),
                Note.objects.filter(subject__app=subject.app).count(),
            )
        )
        return plain_store(subject=subject, claim=claim, message=message, actor=actor, config=config)

    apps, subjects = App.objects.count(), Subject.objects.count()
    cases = _mini()
    measure(cases, reviser=peek, claim_class=dict)
    assert seen == [(1, 0) if c["belief"]["kind"] == "fact" else (0, 1) for c in cases]
    assert App.objects.count() == apps and Subject.objects.count() == subjects
    assert not App.objects.filter(name__startswith="revision-eval-").exists()
    assert not BeliefRevision.objects.exists()


@pytest.mark.django_db
def test_the_belief_is_stored_where_and_when_it_was_said():
    case = next(
        c for c in load_split("dev") if c["expected"] == "SPLIT_BY_MODE" and c["belief"]["kind"] == "fact"
    )
    captured = {}

    def look(*, subject, claim, message, actor, config):
        fact = ProfileFact.objects.get(subject=subject)
        captured.update(
            fact=(
                fact.key,
                fact.value,
                fact.mode,
                fact.scope,
                fact.valid_from,
                fact.source_message.conversation.mode,
            ),
            message=(message.text, message.conversation.mode, message.occurred_at),
            claim=claim,
        )
        return []

    measure([case], reviser=look, claim_class=dict)
    belief, evidence = case["belief"], case["evidence"]
    assert captured["fact"] == (
        belief["key"],
        belief["value"],
        "",  # stored unqualified, as reflection stores it; where it was learned is its message's
        "",
        datetime.fromisoformat(belief["at"]),
        belief["mode"],
    )
    assert captured["message"] == (evidence["text"], evidence["mode"], datetime.fromisoformat(evidence["at"]))
    assert captured["claim"]["said_mode"] == evidence["mode"] and captured["claim"]["mode"] == ""
    assert captured["claim"]["value"] == evidence["value"] and captured["claim"]["kind"] == "fact"


@dataclass
class SmallClaim:
    kind: str = "fact"
    key: str = ""
    value: str = ""
    text: str = ""
    at: datetime | None = None


@pytest.mark.django_db
def test_a_claim_class_gets_only_the_fields_it_has(subject, actor):
    conversation, _ = conversation_get_or_create(
        subject=subject, mode="coding_debug", scope="api", actor=actor
    )
    message, _ = message_add(
        conversation=conversation, role="user", text="just give me the command", actor=actor
    )
    case = next(c for c in load_split("dev") if c["expected"] == "SPLIT_BY_MODE")
    claim = claim_of(case, message, SmallClaim)
    assert claim == SmallClaim(
        kind="fact",
        key=case["evidence"]["key"],
        value=case["evidence"]["value"],
        text=message.text,
        at=message.occurred_at,
    )
    as_dict = claim_of(case, message, dict)
    assert as_dict["said_mode"] == "coding_debug" and as_dict["said_scope"] == "api"


@pytest.mark.django_db
def test_a_malformed_set_is_refused_before_running():
    case = _good_case()
    case["expected"] = "FORGET"
    with pytest.raises(ValueError, match="expected"):
        measure([case], reviser=plain_store, claim_class=dict)


# --- the command ---------------------------------------------------------------------------


@pytest.fixture
def engine(monkeypatch):
    """The command's engine: the oracle over the whole set, claims as dicts."""
    cases = load_cases("all")
    monkeypatch.setattr(runner, "default_reviser", lambda: oracle(cases))
    monkeypatch.setattr(runner, "default_claim_class", lambda: dict)


@pytest.mark.django_db
def test_the_command_prints_the_table(engine, capsys):
    call_command("revision_eval", "--split", "test", "--show-misses")
    out = capsys.readouterr().out
    assert "belief revision · rules · split test" in out
    assert "accuracy 100%" in out
    for action in ACTIONS:
        assert action in out
    assert "MISS" not in out


@pytest.mark.django_db
def test_the_command_writes_json(engine, capsys, tmp_path):
    call_command("revision_eval", "--json")
    document = json.loads(capsys.readouterr().out)
    assert document["split"] == "dev" and document["cases"] == len(load_split("dev"))
    assert document["accuracy"] == 1.0 and document["history_intact"] == document["cases"]
    out = tmp_path / "r.json"
    call_command("revision_eval", "--split", "all", "--json", str(out))
    assert json.loads(out.read_text())["cases"] == len(load_cases("all"))


@pytest.mark.django_db
def test_the_command_without_an_engine(monkeypatch):
    def missing():
        raise LookupError("memory.services.beliefs.belief_revise is not available")

    monkeypatch.setattr(runner, "default_reviser", missing)
    with pytest.raises(CommandError, match="no revision engine"):
        call_command("revision_eval")
