"""The heuristic judge: the five sub-scores of one candidate (formulas in
memory/ranking/applicability/__init__.py)."""

import re
from datetime import datetime, timedelta
from functools import lru_cache

from memory.models import Evidence, Note, ProfileFact
from memory.modes import Mode
from memory.ranking.applicability.candidate import Candidate, when
from memory.temporal import resolve_dates, sentence_tense
from memory.text import stem, word_set

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
_RISK = {
    name: (re.compile(rf"\b(?:{m})", re.I), re.compile(rf"\b(?:{i})", re.I))
    for name, (m, i) in RISK_TOPICS.items()
}
PLAN_STALE_DAYS = 30


def clamp(value: float) -> float:
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


def confirmations_of(c: Candidate, said: dict[int, int]) -> int:
    if isinstance(c.obj, ProfileFact):
        return c.obj.confirmations
    if isinstance(c.obj, Note):
        return said.get(c.obj.pk, 0)
    return 0


def _temporal(c: Candidate, mode: Mode, now: datetime) -> float:
    strictness = max(0.0, -_knob(mode, "uncertaintyTolerance"))  # 0 from the balanced 0.5 up
    if strictness == 0.0:
        return 1.0  # a stale plan costs nothing in this mode: the text need not be read
    text = c.text
    if sentence_tense(text) != "future":
        return 1.0
    said_at = when(c.obj)
    dates = resolve_dates(text, said_at)
    if dates:
        stale = all((d.end or d.start) < now.date() for d in dates)
    else:
        stale = now - said_at > timedelta(days=PLAN_STALE_DAYS)
    return 1.0 - 0.4 * strictness if stale else 1.0


@lru_cache(maxsize=256)
def _risk_words(message: str) -> tuple[re.Pattern, ...]:
    """The item patterns of the risk topics `message` is about (read once per message, not
    once per candidate)."""
    return tuple(matters for about, matters in _RISK.values() if about.search(message))


def _risk(message: str, text: str) -> float:
    return 1.0 if any(matters.search(text) for matters in _risk_words(message)) else 0.0


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
    confirmations = confirmations_of(c, said)
    sensitivity = _knob(mode, "emotionalSensitivity")
    # the text is read only where it counts: a balanced mode (knob 0) weighs no feeling
    emotional = sensitivity != 0.0 and (
        bool(EMOTIONAL.search(text)) or getattr(c.obj, "category", "") in SENSITIVE_FEELINGS
    )
    first_hand = (isinstance(c.obj, Evidence) and c.obj.role == "user") or confirmations > 0
    mode_fit = clamp(
        0.25
        + 0.5 * p
        + 0.25
        * (
            _knob(mode, "personalization") * (c.kind == "fact")
            + sensitivity * emotional
            + _knob(mode, "evidenceFirst") * first_hand
        )
    )
    tolerance = mode.applicability.get("uncertaintyTolerance", 0.5)
    confidence = c.obj.confidence if isinstance(c.obj, ProfileFact) else 1.0
    quality = clamp(
        confidence * ORIGIN_TRUST.get(getattr(c.obj, "origin", "api"), 0.8) + 0.1 * min(confirmations, 2)
    )
    return {
        "task_fit": clamp(task_fit),
        "mode_fit": mode_fit,
        "temporal": _temporal(c, mode, now),
        "epistemic": tolerance + (1.0 - tolerance) * quality,
        "risk": _risk(message, text),
    }


# --- the LLM judge ---------------------------------------------------------------------------
