"""The offline decision: which revision a conflict calls for, by rules over its signals.

`decide_rules(conflict, claim)` reads what detection found (memory/beliefs/detect.py) and
chooses one of the eight actions (memory/beliefs/__init__.py says what each means), with the
reason in plain words and the claim revision_apply needs. A scored choice, not a cascade:
each signal votes for the actions it speaks for with a weight (W_*), the action with the most
wins (ties to the earlier of ORDER), and the reason names the votes. The structure first: the
same value → REINFORCE (2) unless doubt (3) or a named exception (3) outweighs it; no value (a
note that says it ended) → ARCHIVE unless soft doubt; a new value → SPLIT_BY_TIME (1), plus a
correction (2.5, "X, not Y" 1.5, a key that never changes 1.5) for SUPERSEDE, a change (1.5,
one that happened +1) for SPLIT_BY_TIME, another mode or scope (2, the words saying when or
naming the mode/project +1.5/+1) for the splits, for keys that can differ there.

`llm.revision`, when configured, decides instead (memory/beliefs/llm.py) and falls back here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory.beliefs.detect import (
    DATE_KEYS,
    DOUBT,
    ENDING,
    ENDING_HARD,
    NUMBER_KEYS,
    PLACE_KEYS,
    Claim,
    Conflict,
)
from memory.models import Note, ProfileFact, RevisionAction

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
# facts that do not change over time: a new value means the old one was wrong
FIXED_KEYS = frozenset(
    {"name", "birthday", "birthplace", "hometown", "birth_year", "eye_colour", "eye_color", "native_language"}
)
# facts about the person's life, never split by mode or scope
PERSONAL_KEYS = frozenset(
    {
        "diet",
        "pets",
        "allergies",
        "medications",
        "job_title",
        "job",
        "partner",
        "children",
        "politics",
        "religion",
    }
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


def _mode_sensitive(claim: Claim, named: bool = False) -> bool:
    """Whether the claim's key can differ by mode: a note, a style or preference key, or any
    key but a fact about the world when the words name the mode."""
    if claim.kind == "note":
        return True
    return claim.key not in WORLD_KEYS | PERSONAL_KEYS and (named or bool(MODE_KEY.match(claim.key)))


def _scope_sensitive(claim: Claim, named: bool = False) -> bool:
    """Whether the claim's key can differ by scope: a note, a convention or tool key, or any key
    but a fact about the world when the words or two named projects say so."""
    if claim.kind == "note":
        return True
    return claim.key not in WORLD_KEYS | PERSONAL_KEYS and (named or bool(SCOPE_KEY.match(claim.key)))


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


# how much each signal speaks for each action (`_scores`); the action with the most wins, ties
# going to the earlier of ORDER
W_BASE = 1.0  # what a changed value is without any other word: the world changed
W_CORRECTION, W_CORRECTION_WEAK = 2.5, 1.5
W_DOUBT, W_DOUBT_WEAK = 3.0, 1.5
W_CHANGE, W_CHANGE_EVENT = 1.5, 1.0
W_EXCEPTION, W_EXCEPTION_WEAK = 3.0, 1.5
W_HOLDS = 2.0  # the evidence says the belief still holds beside what is new
W_WHERE, W_WHERE_CUE, W_WHERE_NAMED = 2.0, 1.5, 1.0
W_ENDS, W_ARCHIVE = 2.5, 3.0
W_SAID_AGAIN = 2.0
W_FIXED = 1.5  # a changed value of a key that does not change over time (a birthday): it was wrong
ORDER = (
    A.SUPERSEDE,
    A.MARK_EXCEPTION,
    A.SPLIT_BY_SCOPE,
    A.SPLIT_BY_MODE,
    A.WEAKEN,
    A.ARCHIVE,
    A.SPLIT_BY_TIME,
    A.REINFORCE,
)
REASONS = {
    A.REINFORCE: "said again",
    A.WEAKEN: "the new evidence doubts it",
    A.SUPERSEDE: "corrected by the new evidence",
    A.SPLIT_BY_TIME: "changed: held until now, the new from now",
    A.SPLIT_BY_MODE: "both hold, each in its own mode",
    A.SPLIT_BY_SCOPE: "both hold, each in its own scope",
    A.MARK_EXCEPTION: "holds, with a named exception",
    A.ARCHIVE: "no longer holds, nothing replaces it",
}


def _scores(conflict: Conflict, claim: Claim) -> dict[str, list[tuple[float, str]]]:
    """For each action, the signals that speak for it with their weights."""
    s = set(conflict.signals)
    note = conflict.kind == "note"
    votes: dict[str, list[tuple[float, str]]] = {action: [] for action in ORDER}

    def vote(action: str, weight: float, why: str) -> None:
        votes[action].append((weight, why))

    doubt, correction = "cue:doubt" in s, "cue:correction" in s
    same = "same_value" in s or ("same_content" in s and "negation" not in s)
    ends = (not note and not claim.value.strip()) or (note and _ends(claim))
    if ends and not same or (same and note and ends):
        vote(A.ARCHIVE, W_ENDS, "it ends")
        if "cue:ending_hard" in s:
            vote(A.ARCHIVE, 1.0, "a hard ending")
        if doubt and "cue:ending_hard" not in s:
            vote(A.WEAKEN, W_DOUBT + 0.5, "doubt, no hard ending")
        return votes
    if "cue:archive" in s:
        vote(A.ARCHIVE, W_ARCHIVE, "asked to drop it")
    if doubt:
        vote(A.WEAKEN, W_DOUBT, "doubt")
    elif "cue:doubt_weak" in s:
        vote(A.WEAKEN, W_DOUBT_WEAK, "a hedge")
    if "cue:doubt_contrast" in s and not doubt:
        vote(A.WEAKEN, 1.0, "the next words undercut it")
    if "cue:exception" in s:
        vote(A.MARK_EXCEPTION, W_EXCEPTION, "a named exception")
    elif "cue:exception_weak" in s:
        vote(A.MARK_EXCEPTION, W_EXCEPTION_WEAK if not same else 0.5, "a one-off")
    if "belief_holds" in s and not same:
        vote(A.MARK_EXCEPTION, W_HOLDS, "the rest still holds")
    # a note in other words (`same_content` is a near duplicate, not the same words) that says it
    # was wrong or has changed is weighed like a new value
    reworded = isinstance(conflict.belief, Note) and _words(claim.content) != _words(conflict.belief.content)
    if same and not (reworded and {"cue:correction", "cue:change"} & s):
        vote(A.REINFORCE, W_SAID_AGAIN, "the same again")
        return votes
    # a different value (content)
    vote(A.SPLIT_BY_TIME, W_BASE, "a new value")
    if correction:
        vote(A.SUPERSEDE, W_CORRECTION, "a correction")
    if "cue:correction_weak" in s:
        vote(A.SUPERSEDE, W_CORRECTION_WEAK, "X, not Y")
    if "cue:change" in s:
        vote(A.SPLIT_BY_TIME, W_CHANGE, "the world changed")
    if "cue:change_event" in s:
        vote(A.SPLIT_BY_TIME, W_CHANGE_EVENT, "it happened")
    if not note and claim.key in FIXED_KEYS:
        vote(A.SUPERSEDE, W_FIXED, "a key that does not change")
    if not note and claim.key in WORLD_KEYS:
        vote(A.SPLIT_BY_TIME, 0.5, "a fact about the world")
    mode_usable = bool(claim.where_mode) and "mode" in s or ("mode_unqualified" in s and "cue:mode" in s)
    mode_named = "cue:mode" in s or "mode_named" in s
    if mode_usable and _mode_sensitive(claim, mode_named):
        vote(A.SPLIT_BY_MODE, W_WHERE if not note else W_WHERE - 0.5, "said in another mode")
        if "cue:mode" in s:
            vote(A.SPLIT_BY_MODE, W_WHERE_CUE, "the words say when")
        if "mode_named" in s:
            vote(A.SPLIT_BY_MODE, W_WHERE_NAMED, "the words name the mode")
    scope_usable = "scope" in s or "scope_unqualified" in s
    scope_named = "cue:scope" in s or "scope_named" in s or "scope" in s
    if scope_usable and _scope_sensitive(claim, scope_named):
        vote(A.SPLIT_BY_SCOPE, W_WHERE, "said in another scope")
        if "cue:scope" in s:
            vote(A.SPLIT_BY_SCOPE, W_WHERE_CUE, "the words name the scope")
        if "scope_named" in s:
            vote(A.SPLIT_BY_SCOPE, W_WHERE_NAMED, "the words name the project")
    if note:
        if "negation" in s:
            vote(A.SUPERSEDE, 1.0, "the new evidence contradicts it")
        if {"number", "date", "place"} & s:
            vote(A.SPLIT_BY_TIME, 0.5, "a number, date or place changed")
        if not ({"number", "date", "place", "negation"} & s):
            vote(A.REINFORCE, W_SAID_AGAIN, "the same in other words")
        if DOUBT.search(claim.content):
            vote(A.WEAKEN, 1.5, "the new note is hedged itself")
    return votes


def decide_rules(conflict: Conflict, claim: Claim) -> Decision:
    """The rules' revision for one conflict (module docstring): the action whose signals weigh
    most, the reason naming them."""
    votes = _scores(conflict, claim)
    totals = {action: sum(w for w, _ in votes[action]) for action in ORDER}
    action = max(ORDER, key=lambda a: (totals[a], -ORDER.index(a)))
    if totals[action] <= 0:
        action = A.REINFORCE if conflict.kind == "note" else A.SPLIT_BY_TIME
    because = ", ".join(why for _, why in votes[action]) or "nothing else applies"
    where = ""
    if action == A.SPLIT_BY_MODE:
        where = f" ({claim.where_mode} now)"
    elif action == A.SPLIT_BY_SCOPE:
        where = f" ({claim.where_scope} now)"
    reason = f"{REASONS[action]}{where} ({because}): {_subject_of(conflict)}"
    return _decision(action, reason, conflict, claim)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", (text or "").lower())


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
