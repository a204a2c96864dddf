"""Selection by applicability (issue 12): which of the ranked candidates a mode's context
shows, and in which order. Similarity generates the candidates (the other modules of
memory/ranking/); this module decides.

**Policy, before scoring** (`policy_allows`), for every kind the builder places: an item
qualified with a mode (`ProfileFact.mode`, `Note.mode`) renders only in that mode; an item's
scope must be within reach (`Mode.scope_allowed(item, conversation)`; without a conversation
no scope is out of reach); an item of a consent category above the mode's privacy ceiling
(`Mode.category_allowed`) never renders, approved or not. Superseded or expired facts, archived
notes and hidden evidence never reach this point (the rankers read active rows only).

**Score** of each candidate, every part in [0, 1] (weights `applicability.weights.*`, a mode's
`retrieval.weights` overriding them):

    final = w_a·applicability + w_r·retrieval + w_v·vitality + w_c·confirmation
            − privacy_penalty − contradiction_penalty

- `retrieval` = the ranker's score ÷ the best score of its list (facts, notes and evidence,
  lessons, procedures are ranked separately).
- knobs: a mode's `applicability` knobs are centred on the balanced 0.5: `k' = 2·(knob − 0.5)`
  in [−1, 1], so a knob at 0.5 (general_qa, the default) changes nothing.
- `task_fit` = r^e × overlap^x, with a = `association`, e = 2·(1 − a) (how steeply the
  retrieval rank counts: a = 1 makes every candidate fit, a = 0.5 leaves r as it is), x =
  2·max(0, 1 − 2a) (how much of the message the item must cover: nothing from the balanced
  0.5 up, so there task_fit = r and general_qa's order is the ranker's), r = retrieval ÷
  (1 + rank/10) (rank 0-based in its list; a pinned fact, not retrieved for this message, has
  r = 0.5), overlap = the share of the message's terms that the item holds (a term matches a
  word of the item when their crude stems agree: memory.text.stem).
- `mode_fit` = clamp(0.25 + 0.5·p + 0.25·(k'_personalization·[fact] +
  k'_emotionalSensitivity·[emotional] + k'_evidenceFirst·[first-hand])), p = 1 − i/n for a kind
  at index i of the n `preferredKinds`, 0 for a kind they leave out, 0.5 when they are empty
  (a kind listed nowhere is weighed, not excluded). emotional: feelings, relationships or
  wellbeing words, or a health/relationships/sexual_life category; first-hand: a user turn
  (evidence), a fact the person confirmed, a note said more than once.
- `temporal` = 1, except an item about a plan (memory.temporal.sentence_tense "future") whose
  dates are all past, or that has no date and is older than 30 days: 1 − 0.4·max(0,
  −k'_uncertaintyTolerance) (a past plan is less valid than a current state, in a mode less
  tolerant of uncertainty than the balanced default).
- `epistemic` = t + (1 − t)·q, t = `uncertaintyTolerance`, q = clamp(confidence (facts; 1
  otherwise) × origin trust (api and dashboard 1.0, import 0.9, task 0.85, reflection 0.75) +
  0.1·min(confirmations, 2)).
- `risk` = 1 when the message is about a risk topic (food, medicine) and the item holds that
  topic's risk words (an allergy, a diet, a medication, a condition); else 0.
- `applicability` = temporal × epistemic × max(0.7·task_fit + 0.3·mode_fit, risk).
- `vitality` = 0.5·0.5^(age / `scoring.recencyHalfLifeDays`) + 0.25·(1 − 0.5^(recall_count/3))
  + 0.25·clamp(0.5 + 0.5·vote_score / `voting.maxVotePerItem`).
- `confirmation` = clamp(0.7·min(confirmations, 3)/3 + 0.3·max(vote_score, 0) / maxVote).
- `privacy_penalty` = `applicability.privacyPenalty` × max(0, 0.5 − personalization) for an
  item of a (allowed) consent category.
- `contradiction_penalty` = `applicability.contradictionPenalty` for a note contradicted by a
  newer one: a `contradicts` link to a later note, or an active fact set after it whose value
  the note negates (the note holds the value's words and a negation).

Items whose applicability is under `applicability.minApplicability` are not placed (in the
default mode pinned facts always are); a section places its items by `final`, skipping one whose
word Jaccard with an item it already holds reaches `applicability.diversityThreshold`.

**LLM judge** (`llm.applicability`): one batched call per build over the best
`applicability.llmMaxCandidates` candidates (prompt `applicability`), on a worker thread bounded
by `applicability.timeoutMs`; the sub-scores it returns replace the heuristic's for the items it
answers; a timeout, an error or an unusable answer (whole or per item) keeps the heuristic's,
counted (`llm.fallback.applicability.*`) and logged.
"""

import logging
import re
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q

from memory.config import MemoryConfig
from memory.models import Evidence, Lesson, LinkKind, Note, NoteLink, ProfileFact, Procedure
from memory.modes import DEFAULT_MODE, Mode
from memory.ranking.notes import said_times
from memory.temporal import resolve_dates, sentence_tense
from memory.text import jaccard, query_terms, stem, word_set
from memoryweb.counters import counter_add
from memoryweb.llm import client_for, prompt_schema

logger = logging.getLogger(__name__)
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="applicability")

SUB_SCORES = ("task_fit", "mode_fit", "temporal", "epistemic", "risk")
ORIGIN_TRUST = {"api": 1.0, "dashboard": 1.0, "import": 0.9, "task": 0.85, "reflection": 0.75}
SENSITIVE_FEELINGS = {"health", "relationships", "sexual_life"}
EMOTIONAL = re.compile(
    r"\b(?:feel|felt|feeling|sad|happy|anxious|anxiety|stress|stressed|lonely|love|loved|angry|upset|"
    r"grief|griev|depress\w*|worried|worry|afraid|scared|relationship|partner|wife|husband|girlfriend|"
    r"boyfriend|family|mother|father|mom|dad|breakup|divorce|therap\w*|wellbeing|well-being|mood|"
    r"cry|cried|hurt|miss|missing|heartbroken|overwhelmed|burn(?:ed|t)? out|burnout)\b",
    re.IGNORECASE,
)
NEGATION = re.compile(r"\b(?:not|no longer|never|stopped|quit|don't|doesn't|isn't|anymore|no more)\b", re.I)
# risk topics: (words of a message about it, words of an item that matter then)
RISK_TOPICS = {
    "food": (
        r"eat|food|cook|dinner|lunch|breakfast|recipe|restaurant|meal|snack|bake|menu|dish|dessert|cuisine",
        r"allerg|intoleran|vegan|vegetarian|gluten|celiac|coeliac|lactose|peanut|nut|shellfish|diet|"
        r"kosher|halal|diabet",
    ),
    "medicine": (
        r"medic|drug|pill|dose|prescri|pharmac|painkiller|ibuprofen|aspirin|antibiotic|treatment|doctor|"
        r"symptom|sick|headache|fever|vaccin",
        r"allerg|medic|prescri|condition|diabet|asthma|pregnan|blood|pressure|dose|warfarin|insulin|"
        r"penicillin",
    ),
}
_RISK = {name: (re.compile(rf"\b(?:{m})", re.I), re.compile(rf"\b(?:{i})", re.I)) for name, (m, i) in RISK_TOPICS.items()}
PLAN_STALE_DAYS = 30


@dataclass
class Candidate:
    """One ranked item as the judge sees it. `section` is the list it competes in: "profile",
    "notes" (recalled and memory-index), "lessons" or "procedures"."""

    kind: str  # fact | note | evidence | lesson | procedure
    obj: Any
    section: str
    retrieval: float
    rank: int
    reason: str
    pinned: bool = False
    scores: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.kind[0]}:{self.obj.pk}"

    @property
    def text(self) -> str:
        return item_text(self.obj)

    @property
    def applicability(self) -> float:
        return self.scores.get("applicability", 0.0)

    @property
    def final(self) -> float:
        return self.scores.get("final", 0.0)


def item_text(obj) -> str:
    if isinstance(obj, ProfileFact):
        return f"{obj.key}: {obj.value}"
    if isinstance(obj, Evidence):
        return obj.text
    if isinstance(obj, Procedure):
        return " ".join([obj.title, *obj.steps])
    if isinstance(obj, Lesson):
        return obj.text
    return obj.content


def policy_allows(obj, *, mode: Mode, conversation_scope: str | None) -> bool:
    """Whether `obj` may render in `mode` at all (module docstring, *Policy*). With
    `conversation_scope` None (no conversation) no scope is out of reach."""
    item_mode = getattr(obj, "mode", "")
    if item_mode and item_mode != mode.name:
        return False
    if not mode.category_allowed(getattr(obj, "category", "")):
        return False
    if conversation_scope is None:
        return True
    return mode.scope_allowed(getattr(obj, "scope", ""), conversation_scope)


def note_scopes(mode: Mode, conversation) -> list[str] | None:
    """The note scopes a build's search reaches (None: every scope; the policy filter then
    drops what the mode keeps out)."""
    if conversation is None or "other" in mode.scopes:
        return None
    scopes = set()
    if "unscoped" in mode.scopes:
        scopes.add("")
    if "same" in mode.scopes:
        scopes.add(conversation.scope)
    return sorted(scopes)


def candidates_of(section: str, kind_of, ranked: list[tuple]) -> list[Candidate]:
    """(item, score, reason) of one ranker → Candidates with the list-normalised retrieval."""
    top = max((score for _, score, _ in ranked), default=0.0)
    out = []
    for rank, (obj, score, reason) in enumerate(ranked):
        pinned = isinstance(obj, ProfileFact) and reason == "pinned"
        retrieval = score / top if top > 0 else 0.0
        out.append(Candidate(kind_of(obj), obj, section, max(retrieval, 0.0), rank, reason, pinned=pinned))
    return out


# --- the heuristic judge ---------------------------------------------------------------------


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def _knob(mode: Mode, name: str) -> float:
    return 2.0 * (mode.applicability.get(name, 0.5) - 0.5)


def _overlap(terms: list[str], text: str) -> float:
    if not terms:
        return 0.0
    words = word_set(text)
    item_stems = {stem(w) for w in words}
    hits = sum(1 for t in terms if t in words or stem(t) in item_stems)
    return hits / len(terms)


def _when(obj) -> datetime:
    if isinstance(obj, ProfileFact):
        return obj.valid_from
    return getattr(obj, "occurred_at", None) or obj.created_at


def _confirmations(c: Candidate, said: dict[int, int]) -> int:
    if isinstance(c.obj, ProfileFact):
        return c.obj.confirmations
    if isinstance(c.obj, Note):
        return said.get(c.obj.pk, 0)
    return 0


def _temporal(c: Candidate, mode: Mode, now: datetime) -> float:
    text = c.text
    if sentence_tense(text) != "future":
        return 1.0
    when = _when(c.obj)
    dates = resolve_dates(text, when)
    if dates:
        stale = all((d.end or d.start) < now.date() for d in dates)
    else:
        stale = now - when > timedelta(days=PLAN_STALE_DAYS)
    strictness = max(0.0, -_knob(mode, "uncertaintyTolerance"))  # 0 from the balanced 0.5 up
    return 1.0 - 0.4 * strictness if stale else 1.0


def _risk(message: str, text: str) -> float:
    for about, matters in _RISK.values():
        if about.search(message) and matters.search(text):
            return 1.0
    return 0.0


def heuristic_scores(
    c: Candidate, *, message: str, terms: list[str], mode: Mode, now: datetime, said: dict[int, int]
) -> dict[str, float]:
    """The five sub-scores of the module docstring for one candidate."""
    a = mode.applicability.get("association", 0.5)
    cover, steep = 2.0 * max(0.0, 1.0 - 2.0 * a), 2.0 * (1.0 - a)
    r = 0.5 if c.pinned else c.retrieval / (1.0 + c.rank / 10.0)
    text = c.text
    task_fit = (r**steep if steep > 0 else 1.0) * (_overlap(terms, text) ** cover if cover > 0 else 1.0)
    kinds = mode.preferred_kinds
    if not kinds:
        p = 0.5
    else:
        p = 1.0 - kinds.index(c.kind) / len(kinds) if c.kind in kinds else 0.0
    confirmations = _confirmations(c, said)
    emotional = bool(EMOTIONAL.search(text)) or getattr(c.obj, "category", "") in SENSITIVE_FEELINGS
    first_hand = (isinstance(c.obj, Evidence) and c.obj.role == "user") or confirmations > 0
    mode_fit = _clamp(
        0.25
        + 0.5 * p
        + 0.25
        * (
            _knob(mode, "personalization") * (c.kind == "fact")
            + _knob(mode, "emotionalSensitivity") * emotional
            + _knob(mode, "evidenceFirst") * first_hand
        )
    )
    tolerance = mode.applicability.get("uncertaintyTolerance", 0.5)
    confidence = c.obj.confidence if isinstance(c.obj, ProfileFact) else 1.0
    quality = _clamp(confidence * ORIGIN_TRUST.get(getattr(c.obj, "origin", "api"), 0.8) + 0.1 * min(confirmations, 2))
    return {
        "task_fit": _clamp(task_fit),
        "mode_fit": mode_fit,
        "temporal": _temporal(c, mode, now),
        "epistemic": tolerance + (1.0 - tolerance) * quality,
        "risk": _risk(message, text),
    }


# --- the LLM judge ---------------------------------------------------------------------------


def _llm_judge(message: str, mode: Mode, candidates: list[Candidate], config: MemoryConfig) -> dict | None:
    client = client_for("applicability", config)
    if client is None:
        return None
    lines = "\n".join(
        f'- id {c.id} ({c.kind}, {_when(c.obj):%Y-%m-%d}): {" ".join(c.text.split())[:300]}' for c in candidates
    )
    knobs = ", ".join(f"{k} {v:g}" for k, v in sorted(mode.applicability.items()))
    return client.complete_json(
        component="applicability",
        prompt="applicability",
        variables={
            "message": message,
            "mode": f"{mode.name}: {mode.description} (knobs: {knobs})",
            "candidates": lines,
        },
        schema=prompt_schema("applicability"),
    )


def _parsed(answer: dict | None) -> dict[str, dict[str, float]]:
    """The usable per-item sub-scores of the judge's answer, by item id."""
    judged: dict[str, dict[str, float]] = {}
    for entry in (answer or {}).get("items", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        values = {name: entry.get(name) for name in SUB_SCORES}
        if all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1 for v in values.values()):
            judged[entry["id"]] = {name: float(v) for name, v in values.items()}  # type: ignore[arg-type]
    return judged


def llm_scores(message: str, mode: Mode, candidates: list[Candidate], config: MemoryConfig) -> dict:
    """The LLM judge's sub-scores by item id ({} when it is off, slow or unusable)."""
    if config["llm.applicability"] == "none" or not candidates:
        return {}
    future = _pool.submit(_llm_judge, message, mode, candidates, config)
    try:
        answer = future.result(timeout=config["applicability.timeoutMs"] / 1000)
    except FutureTimeout:
        counter_add("llm.fallback.applicability.timeout")
        logger.warning("applicability judge timed out; the heuristic judges this build")
        return {}
    except Exception:  # the hot read never fails because of the judge
        logger.exception("applicability judge failed; the heuristic judges this build")
        counter_add("llm.fallback.applicability.error")
        return {}
    judged = _parsed(answer)
    missed = sum(1 for c in candidates if c.id not in judged)
    if answer is not None and missed:
        counter_add("llm.fallback.applicability.item", missed)
        logger.warning("applicability judge left %d of %d items unjudged", missed, len(candidates))
    return judged


# --- penalties, vitality, the whole score ----------------------------------------------------


def _said(candidates: list[Candidate]) -> dict[int, int]:
    """How many more times than once each candidate note was said (its ranker's reason says)."""
    return {c.obj.pk: said_times(c.reason) - 1 for c in candidates if isinstance(c.obj, Note)}


def _contradicted(candidates: list[Candidate]) -> set[int]:
    """Ids of candidate notes contradicted by a newer note, or by an active fact of this build
    (the facts that matter for the message) set after them."""
    notes = {c.obj.pk: c.obj for c in candidates if isinstance(c.obj, Note)}
    if not notes:
        return set()
    out: set[int] = set()
    links = NoteLink.objects.filter(Q(src_id__in=notes) | Q(dst_id__in=notes), kind=LinkKind.CONTRADICTS)
    others = Note.objects.in_bulk({pk for link in links for pk in (link.src_id, link.dst_id)})
    for link in links:
        for mine, theirs in ((link.src_id, link.dst_id), (link.dst_id, link.src_id)):
            if mine in notes and theirs in others and _when(others[theirs]) > _when(notes[mine]):
                out.add(mine)
    for fact in (c.obj for c in candidates if isinstance(c.obj, ProfileFact)):
        value = word_set(fact.value)
        if not value:
            continue
        for pk, note in notes.items():
            said = word_set(note.content)
            negated_here = bool(NEGATION.search(note.content)) != bool(NEGATION.search(fact.value))
            if value <= said and negated_here and fact.valid_from > _when(note):
                out.add(pk)
    return out


def _vitality(obj, config: MemoryConfig, now: datetime) -> float:
    half_life = config["scoring.recencyHalfLifeDays"]
    age = max((now - _when(obj)).total_seconds() / 86400, 0.0)
    recency = 0.5 ** (age / half_life) if half_life > 0 else 0.0
    recalls = getattr(obj, "recall_count", 0) or 0
    max_vote = config["voting.maxVotePerItem"] or 1.0
    votes = _clamp(0.5 + 0.5 * obj.vote_score / max_vote)
    return 0.5 * recency + 0.25 * (1.0 - 0.5 ** (recalls / 3)) + 0.25 * votes


def judge(
    candidates: list[Candidate],
    *,
    message: str,
    mode: Mode,
    config: MemoryConfig,
    now: datetime,
) -> None:
    """Score every candidate in place (`Candidate.scores`: the breakdown of the module
    docstring, with `judge` "heuristic" or "llm")."""
    if not candidates:
        return
    terms = query_terms(message)
    said = _said(candidates)
    contradicted = _contradicted(candidates)
    weights = config["applicability.weights"]
    max_vote = config["voting.maxVotePerItem"] or 1.0
    personalization = mode.applicability.get("personalization", 0.5)
    for c in candidates:
        c.scores = heuristic_scores(c, message=message, terms=terms, mode=mode, now=now, said=said)
        c.scores["judge"] = "heuristic"
    best = sorted(candidates, key=lambda c: (-c.retrieval, c.rank))[: config["applicability.llmMaxCandidates"]]
    judged = llm_scores(message, mode, best, config)  # one batched call per build
    for c in best:
        if c.id in judged:
            c.scores.update(judged[c.id], judge="llm")
    for c in candidates:
        s = c.scores
        s["applicability"] = (
            s["temporal"] * s["epistemic"] * max(0.7 * s["task_fit"] + 0.3 * s["mode_fit"], s["risk"])
        )
        s["retrieval"] = c.retrieval
        s["vitality"] = _vitality(c.obj, config, now)
        confirmations = _confirmations(c, said)
        s["confirmation"] = _clamp(0.7 * min(confirmations, 3) / 3 + 0.3 * max(c.obj.vote_score, 0) / max_vote)
        s["privacy_penalty"] = (
            config["applicability.privacyPenalty"] * max(0.0, 0.5 - personalization)
            if getattr(c.obj, "category", "")
            else 0.0
        )
        s["contradiction_penalty"] = (
            config["applicability.contradictionPenalty"] if isinstance(c.obj, Note) and c.obj.pk in contradicted else 0.0
        )
        s["final"] = (
            weights["applicability"] * s["applicability"]
            + weights["retrieval"] * s["retrieval"]
            + weights["vitality"] * s["vitality"]
            + weights["confirmation"] * s["confirmation"]
            - s["privacy_penalty"]
            - s["contradiction_penalty"]
        )


def breakdown(c: Candidate) -> dict:
    """The candidate's scores as every context item carries them (rounded)."""
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in c.scores.items()}


def selected(candidates: list[Candidate], *, mode: Mode, config: MemoryConfig) -> list[Candidate]:
    """The candidates a section may place, best `final` first: applicability at least
    `applicability.minApplicability` (pinned facts in the default mode always). With
    `applicability.enabled` false the ranker's order stands and nothing is cut."""
    if not config["applicability.enabled"]:
        return sorted(candidates, key=lambda c: c.rank)
    floor = config["applicability.minApplicability"]
    kept = [c for c in candidates if c.applicability >= floor or (c.pinned and mode.name == DEFAULT_MODE)]
    return sorted(kept, key=lambda c: (-c.final, c.rank))


class Diversity:
    """Which texts a section holds already, to skip a near-duplicate of one of them."""

    def __init__(self, config: MemoryConfig):
        self.threshold = config["applicability.diversityThreshold"]
        self.held: list[set[str]] = []

    def repeats(self, text: str) -> bool:
        words = word_set(text)
        return any(jaccard(words, other) >= self.threshold for other in self.held)

    def hold(self, text: str) -> None:
        self.held.append(word_set(text))
