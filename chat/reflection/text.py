"""Sentence-level reading for the heuristic extractor: expand contractions, and tell statements
from questions, hedges and conditionals (sentences are split by memory.text). Pure functions
over strings."""

from __future__ import annotations

import re
from dataclasses import dataclass

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " "})


def normalise(text: str) -> str:
    text = (text or "").translate(_QUOTES)
    return re.sub(r"[ \t]+", " ", text).strip()


_CONTRACTIONS = [
    (r"\b(i)'?m\b", r"\1 am"),
    (r"\b(i)'ve\b|\b(i)ve\b", r"\1\2 have"),
    (r"\b(i)'ll\b", r"\1 will"),
    (r"\b(i)'d\b", r"\1 would"),
    (r"\b(we|you|they)'re\b", r"\1 are"),
    (r"\b(we|you|they)'ve\b", r"\1 have"),
    (r"\b(we|you|they|he|she|it)'ll\b", r"\1 will"),
    (r"\b(we|you|they|he|she)'d\b", r"\1 would"),
    (r"\b(it|that|what|there|he|she|who|name|here)'s\b", r"\1 is"),
    (r"\bcan'?t\b", "cannot"),
    (r"\bwon'?t\b", "will not"),
    (r"\b(do|does|did|is|are|was|were|have|has|had|could|would|should|need)n'?t\b", r"\1 not"),
    (r"\bgonna\b", "going to"),
    (r"\bwanna\b", "want to"),
]
_CONTRACTIONS_RE = [(re.compile(p, re.IGNORECASE), r) for p, r in _CONTRACTIONS]


def expand(text: str) -> str:
    """ "I'm" → "I am", "don't" → "do not": the fact rules match one spelling only."""
    for pattern, replacement in _CONTRACTIONS_RE:
        text = pattern.sub(replacement, text)
    return re.sub(r"\bi\b", "I", text)


_INTERJECTION = re.compile(
    r"^(?:(?:hi there|hey there|hi|hey|hello|hiya|heya|howdy|yo|ok|okay|fyi|just so you know|so|well|lol|lmao|haha+|ugh+|oh|ah|btw|tbh|honestly|anyway|"
    r"also|and|but|actually|no|yes|yeah|yep|nope|hmm+|um+|uh|great|cool|nice|right|ps|fwiw|oh well|"
    r"omg|wow|sorry|thanks|thank you)\b[\s,!.:;-]*)+",
    re.IGNORECASE,
)
_GREETING = re.compile(r"^(?:hi|hey|hello|hiya|heya|howdy|yo|greetings)\b", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|shall|is|are|was|were|am|have|has|what|where|when|"
    r"why|how|who|whom|which|whose|any idea|anyone|thoughts|isn't|aren't|don't you)\b",
    re.IGNORECASE,
)
# Without a question mark only the unmistakable shapes count: "do you like jazz", "what is X".
_QUESTION_NO_MARK = re.compile(
    r"^(?:(?:do|does|did|can|could|would|will|should|is|are|was|were|have|has)\s+"
    r"(?:you|u|I|we|it|they|he|she|there|this|that|anyone|anybody)|"
    r"(?:what|where|why|how|who|which)\s+(?:is|are|was|were|do|does|did|can|could|would|should|will|about)"
    r")\b",
    re.IGNORECASE,
)
_STRONG_HEDGE = re.compile(
    r"\b(?:maybe|might|(?-i:may)|perhaps|possibly|thinking (?:about|of)|considering|not sure|unsure|whether|"
    r"would|could|wish|hope to|hoping to|want to|planning to|plan to|if I|someday|one day|eventually|"
    # someone else's opinion about the speaker: "my GP believes I have anaemia"
    r"(?:thinks|believes|suspects|says|said|claims|guesses)\s+(?:that\s+)?I)\b",
    re.IGNORECASE,
)
_MILD_HEDGE = re.compile(
    r"\b(?:I think|I guess|I believe|probably|pretty sure|I suppose|kind of|kinda|sort of|apparently)\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(r"^(?:if|unless|suppose|imagine|what if|in case)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Sentence:
    raw: str  # as written, for note content
    text: str  # the statement part, interjections stripped, contractions expanded
    question: bool  # nothing in it is a statement
    hedged: bool  # "might", "thinking about": no facts
    unsure: bool  # "I think", "probably": facts at lower confidence
    conditional: bool
    greeted: bool


# Chat drops the subject: "been learning German", "living in Leeds now".
_NO_SUBJECT = re.compile(
    r"^(?:(?P<been>been)|(?P<ing>living|working|studying|learning|thinking|planning|going|heading|flying|moving|"
    r"trying|hoping)|(?P<present>live|work|started|joined|moved|quit|went|got))\b",
    re.IGNORECASE,
)


def _add_subject(text: str) -> str:
    m = _NO_SUBJECT.match(text)
    if not m:
        return text
    if m["been"]:
        return "I have " + text
    return ("I am " if m["ing"] else "I ") + text


def read_sentence(raw: str) -> Sentence:
    stripped = _INTERJECTION.sub("", raw).strip()
    statement, question = _statement_part(stripped)
    text = _add_subject(expand(statement))
    return Sentence(
        raw=raw,
        text=text,
        question=question,
        hedged=bool(_STRONG_HEDGE.search(text)),
        unsure=bool(_MILD_HEDGE.search(text)),
        conditional=bool(_CONDITIONAL.match(stripped)),
        greeted=bool(_GREETING.match(raw)),
    )


def _statement_part(sentence: str) -> tuple[str, bool]:
    """The leading statement of a sentence; "I earn 85k, is that enough?" keeps "I earn 85k"."""
    if not sentence.rstrip().endswith("?"):
        if _QUESTION_NO_MARK.match(sentence):
            return "", True
        return sentence.rstrip(" .!"), False
    parts = re.split(r",\s*|\s+-+\s+|\s+—\s+", sentence.rstrip(" ?"))
    kept: list[str] = []
    for part in parts:
        if _QUESTION_START.match(part) or re.match(r"(?:is that|any|should I|what|thoughts)\b", part, re.I):
            break
        kept.append(part)
    if not kept or len(kept) == len(parts):
        return "", True
    return ", ".join(kept), False


def is_all_lowercase(text: str) -> bool:
    """True when case carries no information: no capitals except a lone "I"."""
    return not re.search(r"[A-Z]", re.sub(r"\bI\b", "", text))


_NEGATION = re.compile(r"\b(?:not|never|no longer|nobody|no one|hardly|neither|nor)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[,;:]|\bbut\b|\bhowever\b", re.IGNORECASE)


def negated_before(text: str, pos: int, window: int = 40) -> bool:
    """Is there a negation between the start of the clause and `pos`?"""
    head = text[max(0, pos - window) : pos]
    breaks = list(_CLAUSE_BREAK.finditer(head))
    if breaks:
        head = head[breaks[-1].end() :]
    return bool(_NEGATION.search(head))


_SUBJECTS = re.compile(
    r"\b(?P<s>I|we|he|she|they|his|her|their|my (?!own\b)\w+(?:'s)?|our \w+)\b", re.IGNORECASE
)


def first_person_at(text: str, pos: int) -> bool:
    """Is the nearest subject before `pos` the speaker ("I", "we")?"""
    subjects = [m.group("s").lower() for m in _SUBJECTS.finditer(text, 0, pos)]
    return bool(subjects) and subjects[-1] in ("i", "we")


def title_if_lower(value: str) -> str:
    return value.title() if value == value.lower() else value
