"""The applicability evaluator (memory/applicability_eval.py): its checks on contexts laid out by
hand, the loader on a tiny hand-made persona, the command, and the labelled set's own shape.
No pass-rate floor: the set measures the selection, it does not gate it."""

import copy
import json
from collections import Counter

import pytest
from django.core.management import call_command

from memory.applicability_eval import (
    CATEGORIES,
    DEFAULT_DATA,
    Label,
    LoadedPersona,
    label_statuses,
    load_set,
    measure,
    persona_load,
    question_check,
    set_errors,
)
from memory.context import Block, Context, Item
from memory.models import Evidence, Note, PendingMemory, PendingStatus, ProfileFact
from memory.services import note_store

TINY = {
    "personas": [
        {
            "id": "ada",
            "consent": {"finances": "deny", "health": "ask"},
            "conversations": [{"id": "work", "mode": "coding_debug", "scope": "engine"}],
            "facts": [
                {"label": "name", "key": "name", "value": "Ada Lovelace", "pinned": True},
                {
                    "label": "city_old",
                    "key": "city",
                    "value": "Marylebone",
                    "pinned": False,
                    "keywords": ["city", "live"],
                },
                {
                    "label": "tone",
                    "key": "tone",
                    "value": "warm and brief",
                    "pinned": True,
                    "mode": "companion",
                },
                {
                    "label": "salary",
                    "key": "salary",
                    "value": "900 guineas",
                    "pinned": False,
                    "keywords": ["salary"],
                    "category": "finances",
                },
                {
                    "label": "migraine",
                    "key": "migraine",
                    "value": "migraines after long proofs",
                    "pinned": False,
                    "keywords": ["migraine", "headache"],
                    "category": "health",
                    "decision": "approved",
                },
                {
                    "label": "laudanum",
                    "key": "medicine",
                    "value": "laudanum drops",
                    "pinned": False,
                    "keywords": ["medicine"],
                    "category": "health",
                },
                {
                    "label": "city",
                    "key": "city",
                    "value": "St James's Square",
                    "pinned": False,
                    "keywords": ["city", "live"],
                },
            ],
            "turns": [
                {
                    "label": "said",
                    "conversation": "work",
                    "role": "user",
                    "text": "I punched the Bernoulli cards myself on Tuesday.",
                },
                {
                    "label": "fever",
                    "conversation": "work",
                    "role": "user",
                    "text": "I had a fever all week.",
                    "category": "health",
                },
            ],
            "notes": [
                {
                    "label": "loop",
                    "content": "The engine's loop card for Bernoulli numbers skips the fourth operation.",
                    "conversation": "work",
                },
                {
                    "label": "sad",
                    "content": "Ada felt low after the Bernoulli table was criticised.",
                    "mode": "companion",
                },
            ],
        }
    ],
    "questions": [
        {
            "id": "ada-passes",
            "persona": "ada",
            "category": "exact_recall",
            "conversation": {"mode": "general_qa", "scope": ""},
            "message": "Where do I live now? Which city?",
            "must_include": ["name", "city"],
            "must_exclude": ["city_old", "salary"],
            "exact": ["St James's Square"],
        },
        {
            "id": "ada-fails",
            "persona": "ada",
            "category": "exact_recall",
            "conversation": {"mode": "general_qa", "scope": ""},
            "message": "Where do I live now? Which city?",
            "must_exclude": ["salary"],
            "exact": ["Zanzibar"],
        },
    ],
}


def _context(lines: dict[str, list[tuple[str, str]]]) -> Context:
    """A context laid out by hand: section → [(item id, its line)]."""
    sections, items = [], []
    for name, placed in lines.items():
        text = f"### {name}\n" + "\n".join(line for _, line in placed)
        sections.append(Block(name, text, 1000))
        kinds = {"f": "fact", "n": "note", "e": "evidence", "l": "lesson"}
        items += [Item(id=i, kind=kinds[i[0]], section=name, score=1.0, reason="") for i, _ in placed]
    return Context(
        query="q",
        rewritten_query="q",
        stable_prefix=Block("stable_prefix", "", 100),
        sections=sections,
        items=items,
    )


PERSONA = LoadedPersona(
    "ada",
    subject=None,  # type: ignore[arg-type]  # the checks read labels only
    labels={
        "name": Label("name", "fact", "Ada Lovelace", "stored", "f:1"),
        "tone": Label("tone", "fact", "warm and brief", "stored", "f:2"),
        "salary": Label("salary", "fact", "900 guineas", "denied"),
        "loop": Label("loop", "note", "The engine's loop card for Bernoulli num", "stored", "n:7"),
    },
)


def test_a_context_meeting_every_expectation_passes():
    context = _context(
        {
            "profile": [("f:1", "- name: Ada Lovelace")],
            "recalled": [("n:7", "- [n:7] The engine's loop card")],
        }
    )
    question = {
        "must_include": ["name", "loop"],
        "must_exclude": ["tone", "salary"],
        "exact": ["Ada Lovelace"],
    }
    assert question_check(question, context, PERSONA) == []


def test_a_missing_item_a_rendered_excluded_item_and_a_missing_exact_string_are_each_named():
    context = _context({"profile": [("f:2", "- tone: warm and brief")]})
    question = {"must_include": ["name"], "must_exclude": ["tone"], "exact": ["Ada Lovelace"]}
    assert question_check(question, context, PERSONA) == [
        "must include name (f:1): not rendered",
        "must exclude tone (stored): rendered in profile",
        "exact 'Ada Lovelace': not in the tail",
    ]


def test_an_excluded_item_with_no_row_fails_when_its_text_shows_in_the_tail():
    context = _context({"profile": [("f:1", "- name: Ada Lovelace, salary 900 Guineas")]})
    assert question_check({"must_exclude": ["salary"]}, context, PERSONA) == [
        "must exclude salary (denied): its text '900 guineas' is in the tail"
    ]


def test_abstaining_allows_only_the_declared_exceptions_and_ignores_lessons():
    context = _context(
        {"profile": [("f:1", "- name: Ada Lovelace")], "lessons": [("l:3", "- [l:3] test first")]}
    )
    assert question_check({"abstain": True, "allowed": ["name"]}, context, PERSONA) == []
    assert question_check({"abstain": True}, context, PERSONA) == ["abstain: 1 item(s) rendered: name"]
    context = _context({"profile": [("f:1", "- name: Ada Lovelace")], "recalled": [("n:9", "- [n:9] other")]})
    assert question_check({"abstain": True, "allowed": ["name"]}, context, PERSONA) == [
        "abstain: 1 item(s) rendered: n:9"
    ]


def test_the_tiny_set_loads_through_the_services_as_its_labels_say(db, app, actor, config):
    persona = persona_load(TINY["personas"][0], app=app, actor=actor, config=config)
    labels = persona.labels
    assert {name: label.status for name, label in labels.items()} == label_statuses(TINY["personas"][0])
    assert labels["salary"].status == "denied" and labels["salary"].item_id == ""
    assert labels["laudanum"].status == "pending"
    pending = PendingMemory.objects.get(subject=persona.subject, status=PendingStatus.PENDING, kind="fact")
    assert pending.payload["value"] == "laudanum drops" and pending.category.slug == "health"
    approved = ProfileFact.objects.get(pk=labels["migraine"].item_id[2:])
    assert approved.category == "health" and approved.valid_to is None
    old, new = (ProfileFact.objects.get(pk=labels[n].item_id[2:]) for n in ("city_old", "city"))
    assert (
        old.valid_to is not None
        and old.superseded_by_id == new.pk
        and labels["city_old"].status == "superseded"
    )
    assert ProfileFact.objects.get(pk=labels["tone"].item_id[2:]).mode == "companion"
    loop, sad = (Note.objects.get(pk=labels[n].item_id[2:]) for n in ("loop", "sad"))
    assert (loop.scope, loop.mode, sad.scope, sad.mode) == ("engine", "", "", "companion")
    assert loop.source_message is not None and loop.source_message.conversation.mode == "coding_debug"
    said, fever = (Evidence.objects.get(pk=labels[n].item_id[2:]) for n in ("said", "fever"))
    assert (said.status, said.scope, fever.status) == ("visible", "engine", "pending")
    assert labels["fever"].status == "pending" and labels["fever"].text == "I had a fever all week."


def test_set_errors_refuse_a_decision_nobody_is_asked_for_and_a_qualifier_the_gate_would_drop():
    broken = copy.deepcopy(TINY)
    facts = {f["label"]: f for f in broken["personas"][0]["facts"]}
    facts["salary"]["decision"] = "approved"  # finances is denied: nothing waits for a decision
    facts["migraine"]["mode"] = "companion"  # the consent gate stores no qualifier
    errors = set_errors(broken)
    assert "persona ada fact salary: a decision needs a category whose policy is ask" in errors
    assert (
        "persona ada fact migraine: a categorised item passes the consent gate, which keeps no qualifier"
        in errors
    )


def test_one_question_of_the_tiny_set_passes_and_the_other_fails_for_its_missing_string(db):
    report = measure(TINY)
    passed, failed = report.results
    assert passed.passed, passed.reasons
    assert failed.reasons == ["exact 'Zanzibar': not in the tail"]
    assert report.counts()["exact_recall"] == {"questions": 2, "passed": 1, "rate": 0.5}
    assert report.counts()["overall"]["passed"] == 1


def test_the_command_prints_the_rate_per_category_lists_failures_and_writes_json(db, tmp_path, capsys):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY))
    out = tmp_path / "out.json"
    call_command("applicability_eval", "--data", str(data), "--verbose", "--json", str(out))
    printed = capsys.readouterr().out
    assert "exact_recall             2       1    50%" in printed
    assert "FAIL ada-fails [exact_recall] (general_qa)" in printed
    assert "- exact 'Zanzibar': not in the tail" in printed
    assert "ada-passes" not in printed
    written = json.loads(out.read_text())
    assert written["counts"]["overall"] == {"questions": 2, "passed": 1, "rate": 0.5}
    assert [q["passed"] for q in written["questions"]] == [True, False]


def test_set_errors_name_unknown_labels_modes_and_items_that_cannot_render():
    broken = copy.deepcopy(TINY)
    broken["questions"][0]["must_include"] = ["nobody", "laudanum"]
    broken["questions"][1]["conversation"]["mode"] = "karaoke"
    errors = set_errors(broken)
    assert "question ada-passes: must_include: no label 'nobody' in persona ada" in errors
    assert "question ada-passes: must_include: 'laudanum' is pending, it cannot render" in errors
    assert any(e.startswith("question ada-fails: unknown mode 'karaoke'") for e in errors)
    with pytest.raises(ValueError, match="malformed"):
        measure(broken)


def test_a_mode_qualified_note_is_not_merged_into_the_same_unqualified_note(db, subject, actor, config):
    text = "Ada keeps the Bernoulli table in the second drawer of the desk"
    plain, _ = note_store(subject=subject, content=text, actor=actor, config=config)
    qualified, created = note_store(
        subject=subject, content=text, mode="companion", actor=actor, config=config
    )
    assert created and qualified.pk != plain.pk and qualified.mode == "companion"
    again, created = note_store(subject=subject, content=text, mode="companion", actor=actor, config=config)
    assert not created and again.pk == qualified.pk


# --- the labelled set -----------------------------------------------------------------------


def test_the_labelled_set_has_sixty_questions_six_personas_and_eight_of_each_category():
    data = load_set(DEFAULT_DATA)
    assert set_errors(data) == []
    assert len(data["questions"]) >= 60
    assert len(data["personas"]) >= 6
    per_category = Counter(q["category"] for q in data["questions"])
    assert all(per_category[c] >= 8 for c in CATEGORIES), per_category


def test_every_label_the_labelled_set_references_exists_in_its_persona():
    data = load_set(DEFAULT_DATA)
    labels = {p["id"]: set(label_statuses(p)) for p in data["personas"]}
    for question in data["questions"]:
        referenced = {
            *question.get("must_include", []),
            *question.get("must_exclude", []),
            *question.get("allowed", []),
        }
        assert referenced <= labels[question["persona"]], question["id"]


def test_the_labelled_set_exercises_every_consent_outcome_and_qualifier():
    data = load_set(DEFAULT_DATA)
    statuses = Counter(s for p in data["personas"] for s in label_statuses(p).values())
    assert all(statuses[s] for s in ("stored", "superseded", "pending", "denied", "rejected", "revoked")), (
        statuses
    )
    items = [i for p in data["personas"] for i in (*p["facts"], *p["notes"])]
    assert any(i.get("mode") for i in items if "content" in i)  # a mode-qualified note
    assert any(p.get("turns") for p in data["personas"])  # evidence units
    assert any(i.get("scope") for i in items) and any(i.get("conversation") for i in items if "content" in i)
    assert any(i.get("decision") == "approved" for i in items) and any(
        not i["pinned"] for i in items if "key" in i
    )


def test_the_whole_labelled_set_loads_as_its_labels_say_and_every_question_is_scored(db):
    data = load_set(DEFAULT_DATA)
    report = measure(data)
    assert len(report.results) == len(data["questions"])
    assert {r.category for r in report.results} == set(CATEGORIES)
    assert [r.id for r in report.results] == [q["id"] for q in data["questions"]]
    assert report.counts()["overall"]["questions"] == len(data["questions"])
