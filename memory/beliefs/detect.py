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
from functools import cache

from memory.models import Message, Note, NoteLink, ProfileFact, Subject
from memory.search.lexical import note_search
from memory.temporal import lemmas
from memory.text import one_edit, query_terms, word_set

# a note whose words overlap the claim's at least this much (Jaccard) bears on it
NOTE_OVERLAP = 0.3
NOTE_SHARED = 2  # stems in common before the belief's share counts
# a note overlapping this much both ways (Jaccard), with nothing contradicting, says the same
SAME_CONTENT = 0.6
NOTE_CANDIDATES = 20
# a claim with a "not" and no cue contradicts a note only when it overlaps it this much both
# ways: sharing a part ("the billing service") is not being about the same thing
NOTE_DENIES = 0.4
# a note overlapping less still bears on a claim whose words revise something (a cue) or name
# where they hold, when they share a specific word ("box-7", "deploys", "spelling") and this
# share of the belief's words
NOTE_SHARE_CUED = 0.2
REVISING_CUES = frozenset(
    {
        "cue:correction",
        "cue:change",
        "cue:exception",
        "cue:ending",
        "cue:ending_hard",
        "cue:archive",
        "cue:mode",
        "cue:scope",
    }
)
GENERIC_STEMS = frozenset(
    {"want", "like", "use", "every", "thing", "make", "need", "time", "day", "week", "good"}
)
# words that say how the person stands to something, not what it is about: notes that share
# only these ("prefers dark mode", "prefers tea") are not about the same thing, so overlap
# leaves them out
STANCE_STEMS = frozenset(
    {
        "prefer",
        "love",
        "enjoy",
        "hate",
        "dislike",
        "like",
        "want",
        "use",
        "have",
        "really",
        "always",
        "usually",
        "still",
        "also",
        "much",
        "lot",
    }
)
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
# Each cue is a few patterns read over two forms of the words: as written (lower-cased, so "-ing"
# and word order stay) and as lemmas (`said_lemmas`: "moved" → "move", "misheard" → "mishear",
# a typo of a cue word → the cue word), so that unseen inflections and slips still count.
def _rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
DOUBT = _rx(
    r"\bnot\s+(?:so\s+|that\s+|too\s+|entirely\s+|completely\s+|totally\s+|100%\s+|really\s+)?(?:sure|certain|convinced)\b",
    r"\b(?:unsure|uncertain|doubt|doubtful|dubious|questioning|undecided|ambivalent|waver|second[- ]guess|torn)\b",
    r"\bquestion\s+(?:it|that|this|whether|if)\b|\bwonder(?:ing)?\s+(?:if|whether)\b|\bstart(?:ing)?\s+to\s+(?:doubt|question|wonder)\b",
    r"\bi\s+am\s+not\s+sure\b",
    # a hedge on "still" asks whether it still holds ("still vegetarian I guess")
    r"\bstill\b[^.;!?]{0,40}\b(?:i\s+(?:guess|think|suppose|reckon)|probably)\b",
    r"\b(?:i\s+(?:guess|think|suppose|reckon)|probably)\b[^.;!?]{0,20}\bstill\b",
    r"\b(?:i\s+)?(?:do\s+not|don'?t)\s+know\s+(?:if|whether|what|anymore|any\s+more|about|how\s+long)\b",
    r"\b(?:can\s*not|can'?t)\s+(?:say|tell)\b",
    r"\b(?:maybe|perhaps|possibly|might|may\s+not|could\s+be)\b",
    r"\bno\s+longer\s+(?:sure|certain|convinced)\b|\bhave\s+second\s+thought|\bon\s+the\s+fence\b",
    r"\b(?:less|not\s+as)\s+(?:sure|certain|keen|into|convinced)\b|\bre(?:think|consider)\b",
    r"\bmight\s+have\s+change\b|\bnot\s+\w+\s+(?:i|if\s+i)\s+(?:still|would\s+still)\b",
)
# a hedge ("I suppose", "probably"): doubt only when nothing says the belief again
DOUBT_WEAK = _rx(r"\bi\s+(?:think|guess|suppose|believe|reckon)\b|\b(?:probably|kind\s+of|sort\s+of)\b")
# "…, though I haven't opened it in weeks": a restatement the next clause undercuts
DOUBT_CONTRAST = _rx(
    r"\b(?:though|although|but|except\s+that)\b[^.;!?]{0,40}\b(?:not|haven'?t|hasn'?t|hardly|barely|rarely|never|seldom)\b"
)
CORRECTION = _rx(
    r"^\s*(?:no|nope|nah|wait)\s*[,.!—-]|^\s*(?:oops|whoops)\b|\bsorry,?\s+(?:i\s+meant|it'?s|that\s+was|i\s+said|my\s+bad)\b|\b(?:oops|whoops|no\s+wait|scratch\s+that)\b",
    r"\bactually\b|\bcorrection\b|\bto\s+correct\b|\bi\s+mean\b|\bi\s+meant\b|\bmistake\b|\bmistaken\b",
    r"\b(?:typo|autocorrect|spelt|spelled)\b|\bspell(?:s|ing)?\s+it\b|\bwith\s+an?\s+[a-z]\b",
    r"\bmis(?:speak|spoke|hear|heard|read|type|typed|remember|remembered|understand|understood|label|labelled)\b",
    r"\b(?:be|was|is|get|got|have|had|give|gave|tell|told|say|said|write|wrote|that|the|a)\s+(?:\w+\s+){0,2}wrong\b",
    r"\bwrong\s+(?:day|date|name|number|time|place|city|company|one|way)\b|\bby\s+mistake\b",
    r"\bthat\s*(?:'s|\s+is|\s+be)?\s+(?:not\s+right|incorrect|not\s+true|not\s+what\s+i)\b|\bto\s+(?:be\s+clear|clarify)\b",
    r"\b(?:small|quick|one)\s+(?:fix|correction)\b|\bmix(?:ed)?\s+up\b",
    r"\bnever\s+(?:was|be|said|say|lived|live|worked|work|had|have)\b",
    r"\bi\s+(?:said|say|told\s+you|tell\s+you)\s+\w+.{0,20}\bbut\b",
    r"\byou(?:'ve|\s+have)?\s+been\s+(?:using|calling|saying|writing|getting)\b|\byou\s+(?:have|got)\s+(?:it|that|me)\s+wrong\b",
)
# "Lyon, not Lille": a correction when nothing else explains it (a weak cue)
CORRECTION_WEAK = _rx(
    r"\b\w+,\s*not\s+\w+\b", r"\bsorry\b", r"\bnot\s+\w+(?:\s+\w+)?,\s+(?:but\s+|it\s+is\s+|it'?s\s+)?\w+"
)
# a change that happened (a move, a new job, "since May"), and the softer words of the present
# (the verbs as done or under way, so "tell me what to change" or "start with the answer" is none)
CHANGE_EVENT = _rx(
    r"\b(?:moved|relocated|switched|changed|became|started|began|begun|joined|quit|retired|graduated|"
    r"promoted|upgraded|downgraded|transferred|converted|married|divorced|engaged|hired|adopted|bought|"
    r"rescheduled|postponed|replaced|unpacked|settled|migrated|promotion)\b|\bleft\s+(?:my|the|our|a)\b",
    r"\b(?:moving|moves|relocating|switching|switches|changing|transferring|migrating)\s+(?:to|over|jobs?|from)\b",
    rf"\b(?:starting|beginning)\s+(?:next|from|on|in|this|today|tomorrow|{_DAYS})\b",
    r"\bnew\s+(?:job|role|position|flat|apartment|house|place|home|team|company|car|laptop|phone|city|"
    r"office|school|partner|manager|one)\b",
    r"\b(?:since|as\s+of|from\s+now\s+on|take\s+up|pick\s+up|give\s+up|get\s+into|took\s+up|picked\s+up|gave\s+up)\b",
    rf"\blast\s+(?:week|month|year|spring|summer|autumn|fall|winter|{_DAYS})\b|\b\w+\s+ago\b",
    rf"\bfrom\s+(?:next\s+\w+|tomorrow|today|{_DAYS}|the\s+\d+\w*|january|february|march|april|may|june|"
    r"july|august|september|october|november|december)\b",
    r"\b(?:push|pushed|bring|brought)\s+(?:back|forward)\b|\bturn\s+\d+\b",
)
CHANGE = _rx(
    CHANGE_EVENT.pattern,
    r"\b(?:now|nowadays|these\s+days|anymore|any\s+more|no\s+longer|used\s+to|recently|lately)\b",
)
EXCEPTION = _rx(
    r"\bexcept\b|\bexception\b|\bunless\b|\bapart\s+from\b|\bother\s+than\b|\bbut\s+not\s+when\b",
    r"\bjust\s+(?:this|that)\s+(?:once|time|one)\b|\bfor\s+once\b|\b(?:this|that)\s+one\s+time\b|\bone[- ]off\b",
    r"\bone[- ]time\b|\bjust\s+once\b|\bonly\s+once\b|\bonce\s+in\s+a\s+while\b|\bonly\s+(?:today|tonight|this)\b",
    r"\bbut\s+(?:normally|usually|generally|in\s+general|as\s+a\s+rule)\b|\bnormally\s+i\b",
    r"\bspecial\s+occasion\b|\bcheat\s+day\b|\bbreak\s+my\s+(?:rule|diet|streak)\b|\b(?:rule|usual)\s+stand\b",
    r"\bback\s+to\s+(?:\w+\s+)?(?:normal|usual|tomorrow)\b|\bback\s+to\s+\w+\s+tomorrow\b",
    r"\b(?:this|today|tonight)\s+(?:only|though)\b",
    r"\bjust\s+the\s+once\b|\baside\s+from\b|\bsave\s+for\b|\bbarring\b|\bspecial\s+case\b|\bone\s+case\b",
    rf"\b(?:just|only)\s+for\s+(?:today|tonight|now|tomorrow|(?:this|next)\s+(?:once|one|time|week|weekend|trip|call|meeting|{_DAYS}))\b",
    r"\b(?:for|in|to|with|out\s+of|from)\s+(?:everything|anything|all)\s+else\b",
    r"\b(?:will\s+not|won'?t|not\s+going\s+to|is\s+not\s+going\s+to)\s+(?:become|be)\s+a\s+(?:habit|thing|rule)\b",
    r"\bnot\s+a\s+(?:habit|new\s+rule)\b|\btreat(?:ing)?\s+myself\b|\bas\s+a\s+treat\b",
    r"\b(?:everything|all)\s+else\s+(?:stays?|remains?|is\s+the\s+same|as\s+(?:usual|before|always))\b",
    r"\bthe\s+rest\s+(?:of\s+the\s+\w+\s+)?(?:stays?|remains?|is\s+(?:as|the\s+same|unchanged))\b",
    r"\b(?:remains?|stays?|is\s+still)\s+(?:the|my)\s+(?:default|norm|rule|usual)\b",
    r"\bback\s+on\s+(?:the|my)\s+(?:rule|routine|diet|plan|schedule|wagon)\b",
)
# "nothing's changed", "that doesn't change anything": the change words in it say no change
NO_CHANGE = _rx(
    r"\bnothing(?:'s|\s+is|\s+has|\s+else)?\s+(?:else\s+)?(?:chang\w*|different)\b",
    r"\b(?:does\s+not|doesn'?t|will\s+not|won'?t|has\s+not|hasn'?t|not)\s+(?:change|changed|changing)\s+(?:that|anything|a\s+thing|the\s+rule|my)\b",
    r"\b(?:everything|all)\s+else\s+(?:stays?|remains?)\b|\bnothing\s+changes\b",
)
# words that say the belief still holds beside what is new ("still vegan though", "keep the rest in
# French", "trains remain the default"): in the same clause as a word of the belief
HOLDS = _rx(
    r"\b(?:still|remains?|stays?|keep|keeping|otherwise|normally|usually|as\s+(?:always|usual|ever))\b",
)
EXCEPTION_WEAK = _rx(
    rf"\b(?:for|in|to|with|on)\s+this\s+one\b|\bthis\s+(?:particular|one)\b|\bthat\s+one\b|\bthis\s+(?:{_DAYS}|weekend|week)\b",
    r"\bthis\s+time\b|\btoday\b|\btonight\b|\bfor\s+(?:the|this)\s+(?:trip|occasion|party|wedding|visit|event)\b",
    r"\b(?:usually|normally|generally|as\s+a\s+rule|otherwise)\b|\bonly\s+because\b",
)
ENDING_HARD = _rx(
    r"\b(?:die|died|pass\s+away|passed\s+away|sold|sell|broke\s+up|break\s+up|split\s+up|divorced|cancel|"
    r"cancel(?:l?ed)|call\s+off|called\s+off|retired|retire|abandon|abandoned|scrap|scrapped|shut\s+down|quit|"
    r"gave\s+up|give\s+up|given\s+up|got\s+rid\s+of|get\s+rid\s+of|taper(?:ing|ed)?\s+off|drop\s+the|dropped|"
    r"finished\s+(?:tapering|with)|no\s+more|(?:is|was|be)\s+off|not\s+taking\s+anything|single\s+now|"
    r"car-free|no\s+\w+\s+at\s+the\s+moment|(?:is|are|be)\s+over|ended|decommission(?:ed)?|gone|"
    r"never\s+came\s+back|never\s+come\s+back|withdr[ae]w|withdrawn|(?:took|take)\s+me\s+off|(?:come|came)\s+off|put\s+down)\b",
)
ENDING = _rx(
    r"\b(?:no\s+longer|not\s+any\s*more|anymore|any\s+more|stopped|stop|quit|gave\s+up|given\s+up|"
    r"cancel(?:l?ed)?|called\s+off|(?:is|was)\s+off|dropped|abandoned|scrapped|ended|over\s+now|"
    r"finished\s+with|done\s+with|sold|got\s+rid\s+of|broke\s+up|passed\s+away|died|forget\s+(?:it|that|about))\b",
    r"\bdon'?t\s+(?:have|own|use|do|play|take|need)\b.{0,40}\b(?:anymore|any\s+more)\b",
)
# the person asks for the belief to go ("forget that", "drop it", "doesn't matter anymore")
ARCHIVE_WORDS = _rx(
    r"\b(?:forget|ignore|disregard|delete|remove)\s+(?:it|that|this|about|the|my|all)\b|\bforget\s+it\b",
    r"\b(?:doesn'?t|does\s+not|do\s+not|don'?t|no\s+longer)\s+matter\b|\bno\s+longer\s+relevant\b",
    r"\bnot\s+relevant\s+any\s*more\b|\bdrop\s+(?:it|that|this|the)\b|\bnever\s+mind\b|\bwon'?t\s+go\s+back\b",
)
MODE_WORDS = _rx(
    r"\b(?:when|while|whenever|if)\s+(?:i'?m\s+|we'?re\s+|i\s+am\s+|we\s+are\s+)?(?:\w+\s+){0,2}?"
    r"(?:debugging|coding|fixing|programming|researching|writing|chatting|studying|working|learning|"
    r"exploring|planning|brainstorming|reviewing|throwing|digging|reading|venting|talking)\b",
    r"\b(?:when|while|whenever)\s+(?:i'?m|we'?re|i\s+am|we\s+are)\s+\w+ing\b",
    r"\bwhen\s+(?:i|we)\s+(?:dig|deep[- ]dive|brainstorm|research|debug|code|chat|talk|vent|review)\b",
    r"\b(?:for|in|during|with|through)\s+(?:the\s+|my\s+|our\s+|this\s+|these\s+|a\s+)?(?:[\w-]+\s+){0,2}(?:debugging|"
    r"research|coding|code|brainstorm(?:ing|s)?|interviews?|sessions?|deep[- ]dives?|literature\s+reviews?|"
    r"chats?|conversations?|mode|kind\s+of\s+(?:tasks?|questions?|work))\b",
    r"\bin\s+(?:the\s+)?(?:heat|middle)\s+of\b|\bjust\s+(?:give\s+me\s+)?the\s+(?:command|code|fix|answer|steps)\b",
    r"\bfor\s+(?:quick|simple|small|casual|everyday|scheduling|planning|\w+ing)\s+(?:questions?|stuff|things|tasks?)\b",
)
SCOPE_WORDS = _rx(
    r"\b(?:for|in|on)\s+(?:this|that|the|my|our)\s+(?:\w+\s+)?(?:project|repo|repository|codebase|client|"
    r"team|job|workspace|app|service|monorepo|paper|thesis|article|book|chapter|site|package|module|blog|course)\b",
    r"\b(?:this|that)\s+(?:repo|repository|codebase|project|service)\b|\b(?:tests?|code|we)\s+here\b|\bhere\s+(?:we|it)\b",
    r"\b(?:codebase|repo|repository|monorepo|workspace)\b|\bthis\s+one'?s\b|\bthis\s+one\s+is\b",
    r"\bat\s+work\b|\bfor\s+work\b|\bin\s+this\s+one\b|\bthere\b",
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

CUE_PATTERNS = (
    ("doubt", DOUBT),
    ("doubt_weak", DOUBT_WEAK),
    ("doubt_contrast", DOUBT_CONTRAST),
    ("correction", CORRECTION),
    ("correction_weak", CORRECTION_WEAK),
    ("change", CHANGE),
    ("change_event", CHANGE_EVENT),
    ("exception", EXCEPTION),
    ("exception_weak", EXCEPTION_WEAK),
    ("ending", ENDING),
    ("ending_hard", ENDING_HARD),
    ("archive", ARCHIVE_WORDS),
    ("mode", MODE_WORDS),
    ("scope", SCOPE_WORDS),
)
# the cue words a slip of one letter still counts as ("actualy", "mispoke", "excpet")
CUE_WORDS = frozenset(
    """actually mistake mistaken typo autocorrect correction misspeak misspoke mishear misheard misread
    mistype wrong sorry spelling switch switched moved relocate relocated promoted promotion upgrade
    upgraded anymore longer nowadays recently except exception unless otherwise normally usually
    generally debugging researching brainstorming coding project repository codebase forget ignore
    cancel cancelled maybe perhaps probably certain wonder wondering doubt unsure convinced""".split()
)
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+\w*|[,.;:!?]")
_CONTRACTIONS = (
    (re.compile(r"\bcan'?t\b"), "can not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"'m\b"), " am"),
    (re.compile(r"'re\b"), " are"),
    (re.compile(r"'ve\b"), " have"),
    (re.compile(r"'ll\b"), " will"),
    (re.compile(r"'d\b"), " would"),
    (re.compile(r"'s\b"), " is"),
)


@cache
def _lemma(word: str) -> str:
    """One lemma for a word: itself when it is a noun, adjective or adverb form already ("left",
    "data"), else its verb lemma, else its noun lemma; an unknown word one edit from exactly
    one cue word is read as that word."""
    found = lemmas(word)
    if not found:
        if len(word) >= 5:
            near = [w for w in CUE_WORDS if one_edit(word, w)]
            if len(near) == 1:
                return _lemma(near[0]) if lemmas(near[0]) else near[0]
        return word
    if any(word in found.get(pos, ()) for pos in ("NOUN", "ADJ", "ADV", "ADP", "CCONJ", "PRON", "DET")):
        return word
    for pos in ("VERB", "AUX", "NOUN", "ADJ"):
        if found.get(pos):
            return found[pos][0]
    return word


def said_lemmas(text: str) -> str:
    """The words of `text` as lemmas, contractions spelt out: "I've moved" → "i have move"."""
    lowered = (text or "").lower().replace("’", "'")
    for pattern, spelt in _CONTRACTIONS:
        lowered = pattern.sub(spelt, lowered)
    return " ".join(_lemma(t) if t[0].isalpha() else t for t in _TOKEN.findall(lowered))


def cues(text: str) -> list[str]:
    """The cues in the claim's own words, as signals: ``cue:doubt``, ``cue:correction``,
    ``cue:change``, ``cue:exception`` … (CUE_PATTERNS), read as written and as lemmas."""
    raw = " ".join((text or "").lower().replace("’", "'").split())
    lemma = said_lemmas(text)
    found = [f"cue:{name}" for name, pattern in CUE_PATTERNS if pattern.search(raw) or pattern.search(lemma)]
    if NO_CHANGE.search(raw) or NO_CHANGE.search(lemma):
        found = [cue for cue in found if cue not in ("cue:change", "cue:change_event")]
    return found


def holds_still(text: str, belief_text: str) -> bool:
    """Whether a clause of `text` says a word of the belief still holds ("…, still vegan
    though"; "keep everything else in French"): a HOLDS word and a belief word together."""
    belief = {w for w in _stems(belief_text) - STANCE_STEMS - GENERIC_STEMS if len(w) > 2}
    if not belief:
        return False
    for clause in re.split(r"[.;!?,—–]+|\s+-\s+|\bbut\b", (text or "").lower().replace("’", "'")):
        if HOLDS.search(clause) and belief & _stems(clause):
            return True
    return False


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
        elif said and not learned:
            signals.append(f"{name}_unqualified")
    if (
        claim.where_mode
        and claim.where_mode != _qualifier(belief, "mode")
        and _names_mode(claim.words, claim.where_mode)
    ):
        signals.append("mode_named")
    scope = claim.where_scope
    if scope and scope != _qualifier(belief, "scope") and _names_scope(claim.words, scope):
        signals.append("scope_named")
    return signals


# the words that name a mode, beyond its name's own ("research" for research_deep_dive)
MODE_NAMING = {
    "coding_debug": ("code", "coding", "debug", "bug", "prod", "production", "error", "stack trace"),
    "research_deep_dive": ("research", "deep dive", "paper", "literature", "study", "studies"),
    "brainstorm": ("brainstorm", "ideas", "idea"),
    "biographical_interview": ("interview", "life story", "memoir"),
    "companion": ("chat", "venting", "vent"),
    "personal_assistant": ("reminder", "calendar", "schedule", "errand", "booking"),
    "general_qa": ("quick question",),
}


def _names_mode(text: str, mode: str) -> bool:
    """Whether the words name the mode they were said in ("the research stuff" in
    research_deep_dive, "while I'm debugging" in coding_debug)."""
    lowered = said_lemmas(text) + " " + (text or "").lower()
    return any(re.search(rf"\b{re.escape(w)}", lowered) for w in MODE_NAMING.get(mode, ()))


def _names_scope(text: str, scope: str) -> bool:
    """Whether the words name the project they were said in ("the webshop codebase" in scope
    "webshop", "edge cache" in "edge-cache")."""
    parts = [p for p in re.split(r"[\W_]+", scope.lower()) if len(p) > 2]
    lowered = (text or "").lower()
    return bool(parts) and (
        scope.lower() in lowered or all(re.search(rf"\b{re.escape(p)}", lowered) for p in parts)
    )


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
            elif holds_still(claim.text, fact.value):
                signals.append("belief_holds")
        signals += _where(fact, claim)
        found.append(Conflict(fact, [*signals, *claim_cues]))
    return found


def _stem(word: str) -> str:
    """The word's lemma ("hedged" → "hedge", "ran" → "run"), else a light stem, so "citations"
    meets "citation" and "pushing" meets "push"; "un-" before a known word is dropped
    ("unhedged" meets "hedged")."""
    if not lemmas(word) and word.startswith("un") and lemmas(word[2:]):
        word = word[2:]
    lemma = _lemma(word)
    if lemma.endswith("ing") and lemmas(lemma).get("VERB"):
        # "meeting"/"meetings" and "meet", "flying" and "fly": one stem for the noun in -ing and its verb
        return lemmas(lemma)["VERB"][0]
    if lemma != word:
        return lemma
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in re.split(r"[\s/-]+", " ".join(word_set(text))) if w}


def note_overlap(belief_text: str, claim_words: set[str], *, both_ways: bool = False) -> float:
    """How much of the belief the claim's words address, stance words (STANCE_STEMS) aside:
    Jaccard of the stems, or — when at least NOTE_SHARED of them are shared and not
    `both_ways` — the share of the belief's stems the claim holds."""
    other = _stems(belief_text) - STANCE_STEMS
    claim_words = claim_words - STANCE_STEMS
    if not other or not claim_words:
        return 0.0
    shared = len(claim_words & other)
    jaccard = shared / len(claim_words | other)
    if shared >= NOTE_SHARED and not both_ways:
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
    revising = bool(set(cues(claim.words)) & REVISING_CUES)
    for note in live.filter(pk__in=[h.id for h in hits]):
        overlap = max(note_overlap(note.content, words), note_overlap(note.content, said) * 0.9)
        if overlap >= NOTE_OVERLAP or (
            (revising or bool(set(_where(note, claim)) & {"mode_named", "scope_named"}))
            and _shares_specific(note.content, said)
        ):
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
        both_ways = note_overlap(note.content, words, both_ways=True)
        denies = _negations(content) != _negations(note.content)
        if denies:
            signals.append("negation")
        signals += differences
        if holds_still(claim.text, note.content):
            signals.append("belief_holds")
        # a near duplicate overlaps both ways: a short belief all of whose words a longer claim
        # holds ("uses PostgreSQL" / "migrates the PostgreSQL billing data") is not the same
        if both_ways >= SAME_CONTENT and not differences and not denies:
            signals.append("same_content")
        signals += _where(note, claim)
        if set(signals) <= {"overlap", "negation"} and not claim_cues and both_ways < NOTE_DENIES:
            # a "not" in a claim that shares a part of the belief, no more, says nothing against
            # it ("not running the billing migrations" / "uses PostgreSQL for billing")
            continue
        found.append(Conflict(note, [*signals, *claim_cues], overlap=round(overlap, 4)))
    return found


def _shares_specific(belief_text: str, said: set[str]) -> bool:
    """Whether the claim's words hold a specific word of the belief and at least
    NOTE_SHARE_CUED of its words."""
    belief = _stems(belief_text) - STANCE_STEMS
    shared = belief & said
    return bool(belief) and any(_specific(w) for w in shared) and len(shared) / len(belief) >= NOTE_SHARE_CUED


def _specific(stem: str) -> bool:
    """A word that tells a note apart: not a generic verb or noun, four letters or a digit."""
    return stem not in GENERIC_STEMS and (len(stem) >= 4 or any(c.isdigit() for c in stem))


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
