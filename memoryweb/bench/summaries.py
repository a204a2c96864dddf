"""`bench locomo --summaries`: session extractions as extra retrieval units.

After the harness has scored every conversation (so nothing here shifts its figures), the
harness App's backend is turned on (`memory.backend` "local", no idle wait, no age limit) and
the session-summary pipeline runs once per LoCoMo conversation (`summaries_run`, force): one
SessionExtraction per session, on the heuristic path unless `llm.summaries`/`llm.default` say
otherwise in the environment.

Units: every item of every section of an extraction's raw memory (`blocks.parse_block`), and
its synopsis, is one retrieval unit. A unit maps back to turns explicitly, by words: to the
turns (messages) of its own session sharing the most distinct word tokens with it (the BM25
tokens: lower-case, stop words out), at most MAP_TURNS of them, ties broken by the earlier
turn; a unit sharing no word with any turn maps to none.

Scoring, one ranker for both figures so the only difference is the units: BM25 (bm25.py's
tokens, rank_bm25) over the subject's notes alone ("without", the harness's baseline) and over
the notes plus the units ("with"); a question's top k items count for their turns (a note for
its source turns, a unit for its mapped turns); recall@k and hit@k as the harness computes them.
"""

from collections import defaultdict
from dataclasses import dataclass

from chat.summaries.blocks import parse_block
from chat.summaries.pipeline import summaries_run
from memory.models import Message, SessionExtraction
from memory.services import Actor
from memory.services.apps import app_config_set
from memoryweb.bench.bm25 import document_tokens, question_tokens
from memoryweb.bench.locomo_data import Question, canonical_dia_id

MAP_TURNS = 2
BACKEND = {"backend": "local", "memories": {"minRolloutIdleHours": 0, "maxRolloutAgeDays": 36500}}


def backend_on(app, *, actor: Actor) -> None:
    config = dict(app.config or {})
    memory = dict(config.get("memory", {}))
    memory.update(BACKEND)
    config["memory"] = memory
    app_config_set(app=app, config=config, actor=actor)


@dataclass
class Unit:
    text: str
    turns: frozenset[str]  # canonical dia_ids
    origin: str  # "note" or "summary:<section>"


def turns_of(text: str, turns: list[tuple[str, set[str]]]) -> frozenset[str]:
    """The dia_ids of the (at most MAP_TURNS) turns sharing the most words with `text`."""
    words = set(document_tokens(text))
    scored = [(len(words & turn_words), index, dia) for index, (dia, turn_words) in enumerate(turns)]
    best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))[:MAP_TURNS]
    return frozenset(dia for _, _, dia in best)


def summary_units(subject) -> list[Unit]:
    """The subject's extraction items as units, each mapped to turns of its own session."""
    units = []
    for extraction in SessionExtraction.objects.filter(subject=subject).order_by("pk"):
        turns = [
            (canonical, set(document_tokens(text)))
            for external_id, text in Message.objects.filter(conversation_id=extraction.conversation_id)
            .order_by("occurred_at", "pk")
            .values_list("external_id", "text")
            if (canonical := canonical_dia_id(external_id)) is not None
        ]
        items = [("synopsis", extraction.synopsis)] if extraction.synopsis.strip() else []
        items += [
            (key, item) for key, values in parse_block(extraction.raw_memory).items() for item in values
        ]
        for section, text in items:
            units.append(Unit(text=text, turns=turns_of(text, turns), origin=f"summary:{section}"))
    return units


class UnitIndex:
    def __init__(self, units: list[Unit]):
        from rank_bm25 import BM25Okapi  # the bench extra, as bm25.py

        self.units = units
        self.model = BM25Okapi([document_tokens(u.text) for u in units] or [[]])

    def top(self, question: str, k: int) -> list[Unit]:
        terms = question_tokens(question)
        if not terms or not self.units:
            return []
        scores = self.model.get_scores(terms)
        order = sorted(range(len(self.units)), key=lambda i: (-scores[i], i))
        return [self.units[i] for i in order[:k] if scores[i] > 0]


def note_units(subject, note_dia: dict[int, set[str]]) -> list[Unit]:
    from memory.models import Note

    rows = Note.objects.filter(subject=subject, archived_at__isnull=True).order_by("pk")
    return [
        Unit(text=c, turns=frozenset(note_dia.get(pk, ())), origin="note")
        for pk, c in rows.values_list("pk", "content")
    ]


def score(question: Question, index: UnitIndex, ks: list[int]) -> dict:
    """A row shaped like the harness's (locomo._aggregate reads it)."""
    evidence = set(question.evidence)
    best = index.top(question.text, max(ks))
    row: dict = {"question": question.text, "category": question.category, "by_k": {}}
    for k in ks:
        covered = set().union(*(u.turns for u in best[:k])) & evidence
        row["by_k"][k] = {"recall": len(covered) / len(evidence), "hit": 1.0 if covered else 0.0}
        row["by_k"][k]["summary_units"] = sum(1 for u in best[:k] if u.origin != "note")
    return row


def run_sample(
    sample, subject, note_dia, *, actor: Actor, ks: list[int]
) -> tuple[list[dict], list[dict], dict]:
    """Run the pipeline for one conversation's subject; rows without and with the units, stats."""
    job = summaries_run(subject=subject, actor=actor, force=True)
    notes = note_units(subject, note_dia)
    extra = summary_units(subject)
    without, with_units = UnitIndex(notes), UnitIndex(notes + extra)
    questions = [q for q in sample.questions if q.evidence]
    stats: dict = defaultdict(int)
    stats["extractions"] = SessionExtraction.objects.filter(subject=subject).count()
    stats["units"] = len(extra)
    stats["unmapped_units"] = sum(1 for u in extra if not u.turns)
    stats["run_status"] = job.status if job is not None else "skipped"
    return (
        [score(q, without, ks) for q in questions],
        [score(q, with_units, ks) for q in questions],
        dict(stats),
    )
