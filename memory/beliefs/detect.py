"""Conflict detection: which stored beliefs a new claim bears on, and what the two differ in.

A **claim** is what new evidence says (a fact's key and value, or a note's content) with the
words it was said in and where (the mode and scope of its conversation). `conflicts_find`
returns the beliefs it bears on, each with the *signals* detection found (the words of
BeliefRevision.signals), for memory/beliefs/decide.py to choose the revision:

- facts: every active version of the same key, whatever its qualifiers — ``same_key``, then
  ``same_value`` or ``changed_value``; ``number`` (the numbers differ), ``place`` (a place key,
  or capitalised names that differ), ``date`` (the dates differ), ``negation`` (the claim ends
  the fact: no value, or the words deny the stored value), ``mode`` / ``scope`` (said in another
  mode or scope than the belief was learned in);
- notes: the subject's live notes whose words overlap the claim's (full-text candidates,
  Jaccard ≥ NOTE_OVERLAP) or that a ``contradicts`` link joins to the claim's stored note —
  ``overlap``, ``contradicts_link``, ``same_content`` (a near duplicate), and the same
  ``negation`` / ``number`` / ``place`` / ``date`` / ``mode`` / ``scope`` cues.

The cues of the claim's own words (doubt, correction, change, exception, ending) are read by
`cues` and recorded as signals too (``cue:doubt`` …). Pure reads: nothing is written here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from memory.models import Message, Note, NoteLink, ProfileFact, Subject
from memory.search.lexical import note_search
from memory.text import query_terms, word_set

# a note whose words overlap the claim's at least this much (Jaccard) bears on it
NOTE_OVERLAP = 0.3
NOTE_SHARED = 2
SAME_CONTENT = 0.6  # a note overlapping this much, with nothing contradicting, says the same  # stems in common before the belief's share counts
NOTE_CANDIDATES = 20
# keys whose values are places / numbers / dates by nature
PLACE_KEYS = frozenset(
    {"location", "hometown", "birthplace", "address", "city", "country", "school", "employer", "office"}
)
NUMBER_KEYS = frozenset({"age", "income", "height", "weight", "salary", "children_count"})
DATE_KEYS = frozenset({"birthday", "anniversary", "start_date", "deadline"})


@dataclass
class Claim:
    """What new evidence says. `kind` "fact" (key, value; an empty value ends the fact) or
    "note" (content; `note_id` once stored). `text` is the evidence's own words (the message),
    where the cues are read. `mode` / `scope`: the qualifiers the claim states itself ("" = none);
    `said_mode` / `said_scope`: where it was said (belief_revise fills them from the message).
    `at`: when it was said. The rest is what a plain store writes (pinned, keywords, tags …)."""

    kind: str = "fact"
    key: str = ""
    value: str = ""
    content: str = ""
    text: str = ""
    mode: str = ""
    scope: str = ""
    said_mode: str = ""
    said_scope: str = ""
    at: datetime | None = None
    note_id: int | None = None
    pinned: bool = True
    keywords: list[str] = field(default_factory=list)
    confidence: float = 1.0
    category: str = ""
    tags: list[str] = field(default_factory=list)

    @property
    def words(self) -> str:
        """The words the cues are read in: the evidence text, else the claim itself."""
        return self.text or self.content or f"{self.key} {self.value}"

    @property
    def where_mode(self) -> str:
        return self.mode or self.said_mode

    @property
    def where_scope(self) -> str:
        return self.scope or self.said_scope


@dataclass
class Conflict:
    """One belief the claim bears on, with what detection found (`signals`) and, for notes, how
    much their words overlap."""

    belief: ProfileFact | Note
    signals: list[str]
    overlap: float = 1.0

    @property
    def kind(self) -> str:
        return "fact" if isinstance(self.belief, ProfileFact) else "note"


# --- the cues of the claim's own words ----------------------------------------------------------
def _rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


DOUBT = _rx(
    r"\bnot\s+(?:so\s+|that\s+|too\s+|entirely\s+|completely\s+|totally\s+|100%\s+)?(?:sure|certain|convinced)\b",
    r"\b(?:unsure|uncertain|doubt|doubtful|questioning|wondering\s+(?:if|whether))\b",
    r"\bi\s+(?:think|guess|suppose|believe)\b",
    r"\b(?:i\s+)?(?:do\s+not|don'?t)\s+know\s+(?:if|whether|what|anymore|any\s+more|about)\b",
    r"\b(?:maybe|perhaps|possibly|probably|might|may\s+not|could\s+be|kind\s+of|sort\s+of|i'?m\s+torn)\b",
    r"\bno\s+longer\s+(?:sure|certain|convinced)\b",
    r"\bhaving\s+second\s+thoughts\b|\bon\s+the\s+fence\b|\bnot\s+as\s+(?:keen|into|sure)\b",
    r"\bless\s+(?:sure|keen|into)\b|\bstarting\s+to\s+(?:doubt|question|wonder)\b",
)
CORRECTION = _rx(
    r"^\s*(?:no|nope|nah)\b[,.!]?",
    r"\bactually\b|\bcorrection\b|\bi\s+meant\b|\bi\s+misspoke\b|\bi\s+was\s+wrong\b|\bmy\s+mistake\b",
    r"\bthat'?s\s+(?:wrong|not\s+right|incorrect|not\s+true)\b|\bto\s+be\s+clear\b|\bto\s+clarify\b",
    r"\bsorry,?\s+(?:it'?s|i\s+meant|i\s+said|that\s+was)\b|\b(?:my|a|that\s+was\s+a)\s+typo\b|\btypo\s+on\s+my\b",
    r"\b(?:the\s+|was\s+|got\s+(?:it\s+)?|had\s+(?:that|it)\s+|spelling\s+it\s+)wrong\b|\bby\s+mistake\b|\bmis(?:read|heard|typed|spoke)\b",
    r"\bnot\s+\w+(?:\s+\w+)?,\s+(?:but\s+)?\w+",
    r"\bnever\s+(?:was|said|lived|worked|had)\b|\bi\s+(?:said|told\s+you)\s+\w+.{0,20}\bbut\b",
)
CHANGE = _rx(
    r"\b(?:moved|relocated|switched|changed|became|become|started|begun|began|joined|left|quit|"
    r"retired|graduated|got\s+(?:a\s+)?(?:new|married|divorced|promoted|engaged)|turned|upgraded|"
    r"transferred|converted|took\s+up|picked\s+up|gave\s+up|stopped|now\s+(?:that|i)|these\s+days|"
    r"nowadays|since\s+(?:last|the|january|february|march|april|may|june|july|august|september|"
    r"october|november|december|\d)|as\s+of|from\s+now\s+on|anymore|any\s+more|no\s+longer|"
    r"used\s+to|recently|lately|this\s+year|new\s+job|rescheduled|postponed|pushed\s+back|"
    r"brought\s+forward|moved\s+(?:to|up)|got\s+rid\s+of|sold)\b",
    r"\bnow\b",
)
EXCEPTION_WEAK = _rx(
    r"\b(?:for|in|to|with)\s+this\s+one\b|\bthis\s+one\s+(?:is|needs)\b|\bthis\s+(?:monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|weekend|week)\b|\bthis\s+time\b|\btoday\b|\btonight\b",
    r"\bbut\s+(?:normally|usually|generally|otherwise|in\s+general|as\s+a\s+rule)\b|\bnormally\s+i\b",
)
EXCEPTION = _rx(
    r"\bjust\s+(?:this|that)\s+(?:once|time)\b|\bfor\s+once\b|\bthis\s+one\s+time\b|\bone[- ]off\b",
    r"\b(?:made|making)\s+an\s+exception\b|\bexcept(?:ion)?\b|\bspecial\s+occasion\b|\bcheat\s+day\b",
    r"\bonly\s+(?:today|tonight|this\s+(?:once|time|week|weekend))\b|\bjust\s+for\s+(?:today|tonight|"
    r"this\s+(?:trip|week|weekend|occasion|once))\b|\bjust\s+once\b|\bonce\s+in\s+a\s+while\b",
    r"\b(?:this\s+time|today|tonight)\s+(?:only|though|i\s+(?:had|did|made|went|will))\b",
    r"\bbroke\s+my\s+(?:rule|diet|streak)\b|\ban\s+exception\b|\bother\s+than\s+that\b",
)
ENDING_HARD = _rx(
    r"\b(?:died|passed\s+away|sold|broke\s+up|split\s+up|divorced|cancel(?:l?ed)|called\s+off|retired|abandoned|"
    r"scrapped|shut\s+down|quit|gave\s+up|given\s+up|got\s+rid\s+of|tapering\s+off|tapered\s+off|drop\s+the|"
    r"dropped|finished\s+(?:tapering|with)|no\s+more|(?:is|was)\s+off|not\s+taking\s+anything|single\s+now|"
    r"car-free|no\s+\w+\s+at\s+the\s+moment|is\s+over|are\s+over|ended)\b",
)
ENDING = _rx(
    r"\b(?:no\s+longer|not\s+any\s*more|anymore|any\s+more|stopped|quit|gave\s+up|given\s+up|"
    r"cancel(?:l?ed)?|called\s+off|(?:is|was)\s+off|dropped|abandoned|scrapped|ended|over\s+now|"
    r"finished\s+with|done\s+with|sold|got\s+rid\s+of|broke\s+up|passed\s+away|died|forget\s+(?:it|that|about))\b",
    r"\bdon'?t\s+(?:have|own|use|do|play|take|need)\b.{0,40}\b(?:anymore|any\s+more)\b",
)
MODE_WORDS = _rx(
    r"\bwhen\s+(?:i'?m\s+|we'?re\s+)?(?:debugging|coding|fixing|programming|researching|writing|chatting|"
    r"studying|working|learning|exploring|planning)\b",
    r"\b(?:for|in|during)\s+(?:debugging|research|coding|code|chat|casual\s+chat|deep\s+dives?|"
    r"brainstorming|this\s+mode)\b|\bin\s+(?:the\s+)?(?:heat|middle)\s+of\b",
    r"\bjust\s+(?:give\s+me\s+)?the\s+(?:command|code|fix|answer)\b",
    r"\bwhen\s+(?:i'?m|we'?re|i\s+am|we\s+are)\s+\w+ing\b",
    r"\b(?:in|for|during)\s+(?:the\s+|our\s+|my\s+)?(?:[\w-]+\s+){0,2}(?:sessions?|interviews?|chats?|mode|conversations?)\b",
    r"\bfor\s+(?:quick|simple|small|casual|scheduling|planning|everyday|\w+ing)\s+(?:questions?|stuff|things|tasks?)\b",
)
SCOPE_WORDS = _rx(
    r"\b(?:for|in|on)\s+(?:this|that|the|my)\s+(?:\w+\s+)?(?:project|repo|repository|codebase|client|"
    r"team|job|workspace|app|service|monorepo|paper|thesis|article|book|chapter|site|package|module)\b",
    r"\b(?:this|that)\s+(?:repo|repository|codebase|project|service|one)\b|\b(?:tests?|code|we)\s+here\b|\bhere\s+(?:we|it)\b",
    r"\b(?:in|for|on)\s+the\s+[\w-]+\s+(?:repo|repository|project|service|codebase)\b",
    r"\bat\s+work\b|\bat\s+home\b|\bfor\s+work\b|\bin\s+this\s+one\b|\bhere\s+we\b",
)
NEGATION = re.compile(
    r"\b(?:not|no|never|don'?t|doesn'?t|didn'?t|isn'?t|aren'?t|wasn'?t|won'?t|can'?t|cannot|none|nobody|"
    r"nothing|neither|nor|without)\b|n't\b",
    re.IGNORECASE,
)
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)?(?:\s*(?:am|pm|k|%))?", re.IGNORECASE)
MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
DATE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|(?:{MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTHS})\b|monday|tuesday|wednesday|thursday|friday|saturday|"
    rf"sunday|tomorrow|yesterday|tonight|next\s+(?:week|month|year|\w+day)|last\s+(?:week|month|year|\w+day)|"
    rf"(?:{MONTHS})\b|(?:19|20)\d{{2}})",
    re.IGNORECASE,
)
NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zà-ÿ]+(?:\s+[A-Z][a-zà-ÿ]+)*)")


def cues(text: str) -> list[str]:
    """The cues in the claim's own words, as signals: ``cue:doubt``, ``cue:correction``,
    ``cue:change``, ``cue:exception``, ``cue:ending``, ``cue:mode``, ``cue:scope``."""
    found = []
    for name, pattern in (
        ("doubt", DOUBT),
        ("correction", CORRECTION),
        ("change", CHANGE),
        ("exception", EXCEPTION),
        ("exception_weak", EXCEPTION_WEAK),
        ("ending", ENDING),
        ("ending_hard", ENDING_HARD),
        ("mode", MODE_WORDS),
        ("scope", SCOPE_WORDS),
    ):
        if pattern.search(text or ""):
            found.append(f"cue:{name}")
    return found


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s%:.-]", " ", (text or "").lower()).split()).strip(" .")


def _numbers(text: str) -> set[str]:
    return {re.sub(r"\s+", "", m.lower()) for m in NUMBER.findall(text or "")}


def _dates(text: str) -> set[str]:
    return {" ".join(m.lower().split()) for m in DATE.findall(text or "")}


def _names(text: str) -> set[str]:
    months = set(MONTHS.split("|"))
    days = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "i"}
    return {m.lower() for m in NAME.findall(text or "") if m.lower() not in months | days}


def _differences(old: str, new: str, *, key: str = "") -> list[str]:
    """What two texts (values or contents) differ in: number, date, place."""
    signals = []
    old_n, new_n = _numbers(old), _numbers(new)
    if old_n and new_n and old_n != new_n:
        signals.append("number")
    elif key in NUMBER_KEYS and _norm(old) != _norm(new):
        signals.append("number")
    old_d, new_d = _dates(old), _dates(new)
    if (old_d and new_d and old_d != new_d) or (key in DATE_KEYS and _norm(old) != _norm(new)):
        signals.append("date")
    old_p, new_p = _names(old) - _names(new), _names(new) - _names(old)
    if (old_p and new_p) or (key in PLACE_KEYS and _norm(old) != _norm(new)):
        signals.append("place")
    return signals


def _value_words(value: str) -> set[str]:
    return set(query_terms(value or "")) or {_norm(value)}


def _denies(text: str, value: str) -> bool:
    """Whether `text` negates `value`: a negation shortly before one of the value's words."""
    words = _value_words(value)
    lowered = (text or "").lower()
    for match in NEGATION.finditer(lowered):
        window = lowered[match.end() : match.end() + 40]
        if words & set(query_terms(window)):
            return True
    return False


def _qualifier(belief, name: str) -> str:
    """Where a belief holds or was learned: its own qualifier, else its source's conversation."""
    own = getattr(belief, name) or ""
    if own:
        return own
    message = belief.source_message
    if message is None:
        return ""
    return getattr(message.conversation, name) or ""


def _where(belief, claim: Claim) -> list[str]:
    signals = []
    for name, said in (("mode", claim.where_mode), ("scope", claim.where_scope)):
        learned = _qualifier(belief, name)
        if said and learned and said != learned:
            signals.append(name)
        elif said and not learned and name == "mode":
            signals.append("mode_unqualified")
    return signals


def _fact_conflicts(subject: Subject, claim: Claim) -> list[Conflict]:
    found = []
    facts = ProfileFact.objects.filter(subject=subject, key=claim.key, valid_to=None).select_related(
        "source_message__conversation"
    )
    claim_cues = cues(claim.words)
    for fact in facts.order_by("mode", "scope", "id"):
        signals = ["same_key"]
        if not claim.value.strip():
            signals.append("negation")
        elif _norm(fact.value) == _norm(claim.value):
            signals.append("same_value")  # the claim read this value from the words: they assert it
        else:
            signals.append("changed_value")
            signals += _differences(fact.value, claim.value, key=claim.key)
            if _denies(claim.text, fact.value):
                signals.append("negation")
        signals += _where(fact, claim)
        found.append(Conflict(fact, [*signals, *claim_cues]))
    return found


def _stem(word: str) -> str:
    """A light stem, so "citations" meets "citation" and "pushing" meets "push"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in re.split(r"[\s/-]+", " ".join(word_set(text))) if w}


def note_overlap(belief_text: str, claim_words: set[str]) -> float:
    """How much of the belief the claim's words address: Jaccard of the stems, or — when at
    least NOTE_SHARED of them are shared — the share of the belief's stems the claim holds."""
    other = _stems(belief_text)
    if not other or not claim_words:
        return 0.0
    shared = len(claim_words & other)
    jaccard = shared / len(claim_words | other)
    if shared >= NOTE_SHARED:
        return max(jaccard, shared / len(other))
    return jaccard


def _note_conflicts(subject: Subject, claim: Claim) -> list[Conflict]:
    content = claim.content
    words = _stems(content)
    if not words:
        return []
    # the evidence's own words help find what it bears on ("no more flatmates")
    said = words | _stems(claim.text)
    live = Note.objects.filter(subject=subject, archived_at=None).select_related(
        "source_message__conversation"
    )
    if claim.note_id:
        live = live.exclude(pk=claim.note_id)
    terms = list(dict.fromkeys([*query_terms(content), *query_terms(claim.text)]))
    hits = note_search(subject.pk, terms, limit=NOTE_CANDIDATES)
    overlaps = {}
    for note in live.filter(pk__in=[h.id for h in hits]):
        overlap = max(note_overlap(note.content, words), note_overlap(note.content, said) * 0.9)
        if overlap >= NOTE_OVERLAP:
            overlaps[note.pk] = (note, overlap)
    linked: set[int] = set()
    if claim.note_id:
        pairs = NoteLink.objects.filter(kind="contradicts").filter(src_id=claim.note_id).values_list("dst_id")
        pairs_in = NoteLink.objects.filter(kind="contradicts", dst_id=claim.note_id).values_list("src_id")
        linked = {pk for (pk,) in pairs} | {pk for (pk,) in pairs_in}
        for note in live.filter(pk__in=linked).exclude(pk__in=list(overlaps)):
            overlaps[note.pk] = (note, note_overlap(note.content, words))
    claim_cues = cues(claim.words)
    found = []
    for note, overlap in sorted(overlaps.values(), key=lambda pair: (-pair[1], pair[0].pk)):
        signals = ["overlap"]
        if note.pk in linked:
            signals.append("contradicts_link")
        differences = _differences(note.content, content)
        denies = _negations(content) != _negations(note.content)
        if denies:
            signals.append("negation")
        signals += differences
        if overlap >= SAME_CONTENT and not differences and not denies:
            signals.append("same_content")
        signals += _where(note, claim)
        found.append(Conflict(note, [*signals, *claim_cues], overlap=round(overlap, 4)))
    return found


def _negations(text: str) -> int:
    return len(NEGATION.findall(text or "")) % 2


def conflicts_find(subject: Subject, claim: Claim) -> list[Conflict]:
    """The beliefs `claim` bears on, most relevant first (module docstring)."""
    if claim.kind == "fact":
        return _fact_conflicts(subject, claim)
    return _note_conflicts(subject, claim)


def claim_where(claim: Claim, message: Message | None) -> Claim:
    """The claim with where it was said filled in from its message's conversation."""
    if message is not None:
        conversation = message.conversation
        claim.said_mode = claim.said_mode or conversation.mode or ""
        claim.said_scope = claim.said_scope or conversation.scope or ""
        if claim.at is None:
            claim.at = message.occurred_at
        if not claim.text:
            claim.text = message.text
    return claim
