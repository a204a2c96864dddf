"""The offline decision: which revision a conflict calls for, by rules over its signals.

`decide_rules(conflict, claim)` reads what detection found (memory/beliefs/detect.py) and
chooses one of the eight actions (memory/beliefs/__init__.py says what each means), with the
reason in plain words and the claim revision_apply needs. In order:

1. The claim says the belief again (same value / a near-duplicate note): doubt in its words →
   WEAKEN; a named exception → MARK_EXCEPTION; else REINFORCE.
2. The claim ends the belief (no new value, or its words deny it / say it stopped) with nothing
   in its place: doubt → WEAKEN; else ARCHIVE.
3. A different value: a named exception ("just this once") → MARK_EXCEPTION (the belief
   holds); doubt without a correction → WEAKEN; a correction ("actually", "I meant") →
   SUPERSEDE; said in another mode than the belief was learned in, for a key that can differ by
   mode (styles, preferences; never a place, a number or a date) → SPLIT_BY_MODE; in another
   scope (project), for a key that can differ by project → SPLIT_BY_SCOPE; else the world
   changed → SPLIT_BY_TIME.

`llm.revision`, when configured, decides instead (memory/beliefs/llm.py) and falls back here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory.beliefs.detect import (
    DATE_KEYS,
    ENDING,
    ENDING_HARD,
    NUMBER_KEYS,
    PLACE_KEYS,
    Claim,
    Conflict,
)
from memory.models import ProfileFact, RevisionAction

A = RevisionAction

# facts whose value can rightly differ between assistant modes / projects
MODE_KEY = re.compile(
    r"^(?:answer|response|reply|explanation|style|tone|verbosity|detail|depth|format|formality|"
    r"language|communication|feedback|preference|pace|humou?r|emoji|code_style|level|pushback|challenge|"
    r"citation|sources|directness|length|examples|jargon)",
    re.IGNORECASE,
)
SCOPE_KEY = re.compile(
    r"^(?:editor|ide|tools?|os|shell|programming_languages|language|framework|stack|runtime|"
    r"database|db|test|testing|package|build|ci|deploy|indent|formatter|linter|style|code_style|"
    r"branch|python|node|version|cloud|preference|naming|license|timezone)",
    re.IGNORECASE,
)
WORLD_KEYS = (
    PLACE_KEYS | NUMBER_KEYS | DATE_KEYS | {"name", "preferred_name", "pronouns", "partner", "children"}
)


@dataclass
class Decision:
    """The revision chosen for one conflict: the action, why, the signals it rests on, who
    decided ("rules" or "llm") and the claim revision_apply is given."""

    action: str
    reason: str
    signals: list[str]
    decided_by: str = "rules"
    claim: dict = field(default_factory=dict)


def _mode_sensitive(claim: Claim) -> bool:
    if claim.kind == "note":
        return True
    return claim.key not in WORLD_KEYS and bool(MODE_KEY.match(claim.key))


def _scope_sensitive(claim: Claim) -> bool:
    if claim.kind == "note":
        return True
    return claim.key not in WORLD_KEYS and bool(SCOPE_KEY.match(claim.key))


def _exception_text(claim: Claim, belief_value: str = "") -> str:
    """What is excepted: the clauses of the evidence that do not restate the belief ("I'm
    vegetarian, but I had fish last night, just this once" → "I had fish last night, just this
    once"), else the claim's value, else all its words."""
    text = " ".join((claim.text or claim.content or claim.value).split())
    clauses = [
        c.strip(" ,;") for c in re.split(r"(?<=[.;!?])\s+|,\s*but\s+|\s+but\s+", text) if c.strip(" ,;")
    ]
    restated = {w for w in re.findall(r"\w+", belief_value.lower()) if len(w) > 2}
    kept = [c for c in clauses if not restated & set(re.findall(r"\w+", c.lower()))]
    if kept and len(kept) < len(clauses):
        return " ".join(kept)[:300]
    return text[:300]


def _subject_of(conflict: Conflict) -> str:
    belief = conflict.belief
    if isinstance(belief, ProfileFact):
        return f"{belief.key}: {belief.value}"
    return " ".join(belief.content.split())[:80]


def revision_claim(action: str, conflict: Conflict, claim: Claim) -> dict:
    """What revision_apply needs for `action` of this claim on this belief."""
    out: dict = {}
    if conflict.kind == "note":
        if claim.note_id:
            out["note_id"] = claim.note_id
        if action == A.SPLIT_BY_MODE and claim.where_mode:
            out["mode"] = claim.where_mode
        if action == A.SPLIT_BY_SCOPE and claim.where_scope:
            out["scope"] = claim.where_scope
        return out
    if action == A.MARK_EXCEPTION:
        value = conflict.belief.value if isinstance(conflict.belief, ProfileFact) else ""
        return {"text": _exception_text(claim, value)}
    if action in (A.SUPERSEDE, A.SPLIT_BY_TIME, A.SPLIT_BY_MODE, A.SPLIT_BY_SCOPE):
        out = {"value": claim.value, "confidence": claim.confidence}
        if claim.at is not None:
            out["valid_from"] = claim.at
        if action == A.SPLIT_BY_MODE:
            out["mode"] = claim.where_mode
        if action == A.SPLIT_BY_SCOPE:
            out["scope"] = claim.where_scope
    return out


def _decision(action: str, reason: str, conflict: Conflict, claim: Claim) -> Decision:
    return Decision(action, reason, list(conflict.signals), "rules", revision_claim(action, conflict, claim))


def decide_rules(conflict: Conflict, claim: Claim) -> Decision:
    """The rules' revision for one conflict (module docstring)."""
    s = set(conflict.signals)
    what = _subject_of(conflict)
    note = conflict.kind == "note"

    def decided(action: str, reason: str) -> Decision:
        return _decision(action, f"{reason}: {what}", conflict, claim)

    doubt, correction, change = "cue:doubt" in s, "cue:correction" in s, "cue:change" in s
    exception, exception_weak = "cue:exception" in s, "cue:exception_weak" in s
    ending_hard = "cue:ending_hard" in s
    same = "same_value" in s or ("same_content" in s and "negation" not in s)
    mode_split = ("mode" in s or ("mode_unqualified" in s and "cue:mode" in s)) and _mode_sensitive(claim)
    scope_split = "scope" in s and _scope_sensitive(claim)
    if same and not (note and _ends(claim)):
        if doubt:
            return decided(A.WEAKEN, "said again with doubt")
        if exception:
            return decided(A.MARK_EXCEPTION, "holds, with a named exception")
        return decided(A.REINFORCE, "said again")
    if not note and not claim.value.strip():  # the fact ends
        if doubt and not ending_hard:
            return decided(A.WEAKEN, "the new evidence doubts it")
        return decided(A.ARCHIVE, "no longer holds, nothing replaces it")
    if exception:
        return decided(A.MARK_EXCEPTION, "holds, except this once")
    if scope_split and ("cue:scope" in s or not (change or correction)):
        return decided(A.SPLIT_BY_SCOPE, f"both hold, each in its own scope ({claim.where_scope} now)")
    if mode_split and ("cue:mode" in s or not (change or correction or note)):
        return decided(A.SPLIT_BY_MODE, f"both hold, each in its own mode ({claim.where_mode} now)")
    if note and _ends(claim):
        return decided(A.ARCHIVE, "no longer holds, nothing replaces it")
    if doubt and not correction:
        return decided(A.WEAKEN, "the new evidence doubts it")
    if correction:
        return decided(A.SUPERSEDE, "corrected by the new evidence")
    if exception_weak:
        return decided(A.MARK_EXCEPTION, "holds, with this one exception")
    if note:
        if change:
            return decided(A.SPLIT_BY_TIME, "changed: held until now, the new from now")
        if "negation" in s:
            return decided(A.SUPERSEDE, "the new evidence contradicts it")
        if {"number", "date", "place"} & s:
            return decided(A.SPLIT_BY_TIME, "changed: held until now, the new from now")
        return decided(A.REINFORCE, "said again in other words")
    return decided(A.SPLIT_BY_TIME, "changed: held until now, the new value from now")


def _ends(claim: Claim) -> bool:
    """A note claim that itself says the belief is over ("the trip was cancelled")."""
    words = claim.content or claim.text
    return bool(ENDING_HARD.search(words) or ENDING.search(words))


def decision_usable(decision: Decision, conflict: Conflict, claim: Claim) -> bool:
    """Whether revision_apply can take this decision for this belief and claim (a split needs
    both sides' qualifiers to differ; a new value needs one)."""
    action = decision.action
    if conflict.kind == "fact":
        if (
            action in (A.SUPERSEDE, A.SPLIT_BY_TIME, A.SPLIT_BY_MODE, A.SPLIT_BY_SCOPE)
            and not claim.value.strip()
        ):
            return False
        if action == A.SPLIT_BY_MODE:
            return bool(claim.where_mode) and claim.where_mode != _learned(conflict.belief, "mode")
        if action == A.SPLIT_BY_SCOPE:
            return bool(claim.where_scope) and claim.where_scope != _learned(conflict.belief, "scope")
    return True


def _learned(belief, name: str) -> str:
    own = getattr(belief, name) or ""
    if own or belief.source_message is None:
        return own
    return getattr(belief.source_message.conversation, name) or ""
