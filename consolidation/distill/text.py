"""Sentence-level helpers for the heuristic distiller: lines and list items, clipping, and restating first-person
notes ("I always deploy on Fridays") as sentences about the user ("The user always deploys on
Fridays"). Pure functions over strings."""

import re

from memory.text import split_sentences

_LIST_ITEM = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•]|step\s+\d{1,2}\s*[:.)-]?)\s+", re.IGNORECASE)
MAX_SENTENCE_WORDS = 40


def lines_of(text: str) -> list[tuple[str, bool]]:
    """The note's non-empty lines, each with whether it was a list item ("1.", "-", "Step 2:");
    the list marker is removed."""
    found = []
    for line in text.splitlines():
        if not line.strip():
            continue
        item = _LIST_ITEM.match(line)
        found.append((line[item.end() :].strip() if item else line.strip(), bool(item)))
    return found


def sentences_of(text: str) -> list[str]:
    """Sentences, one list item or line at least each, with their closing punctuation."""
    found = []
    for line, _ in lines_of(text):
        # a note's sentence ends only before a capital: "use node v2. then deploy" is one
        found += split_sentences(line, abbreviations=False, capitalised=True)
    return found


def clip_words(sentence: str, limit: int = MAX_SENTENCE_WORDS) -> str:
    """The sentence cut to `limit` words, at a clause boundary when there is one."""
    parts = sentence.split()
    if len(parts) <= limit:
        return sentence
    head = " ".join(parts[:limit])
    cut = max(head.rfind(mark) for mark in (";", ",", " — ", " - "))
    if cut > len(head) // 2:
        head = head[:cut]
    return head.rstrip(" ,;:—-") + "."


def finish(sentence: str) -> str:
    """Capitalised, single-spaced, ending with one full stop (or its own ! or ?)."""
    sentence = re.sub(r"\s+", " ", sentence).strip().rstrip(",;:—- ")
    if not sentence:
        return ""
    sentence = sentence[0].upper() + sentence[1:]
    return sentence if sentence[-1] in ".!?" else sentence + "."


# --- first person → the user ----------------------------------------------------------------

MODALS = {"can", "could", "will", "would", "shall", "should", "may", "might", "must", "need", "did"}
# forms that are the same in the past and the present: "I set up" may be either, so it stays
SAME_IN_PAST = {
    "set",
    "put",
    "cut",
    "read",
    "hit",
    "let",
    "shut",
    "quit",
    "split",
    "spread",
    "cost",
    "hurt",
    "bet",
    "reset",
    "upset",
}
IRREGULAR_PAST = {
    "ate",
    "bought",
    "brought",
    "built",
    "came",
    "caught",
    "chose",
    "did",
    "drank",
    "drove",
    "fell",
    "felt",
    "flew",
    "forgot",
    "found",
    "gave",
    "got",
    "grew",
    "had",
    "heard",
    "held",
    "kept",
    "knew",
    "learnt",
    "left",
    "lost",
    "made",
    "meant",
    "met",
    "paid",
    "ran",
    "rebuilt",
    "rode",
    "said",
    "sat",
    "saw",
    "sent",
    "slept",
    "sold",
    "spent",
    "spoke",
    "stood",
    "swam",
    "taught",
    "thought",
    "told",
    "took",
    "tried",
    "understood",
    "was",
    "went",
    "woke",
    "won",
    "wore",
    "wrote",
}
ADVERBS = r"(?:always|never|usually|often|sometimes|also|still|just|really|only|now|rarely|mostly|generally|typically|already|finally|then|first)"
_I_VERB = re.compile(rf"\bI\s+(?P<adverb>{ADVERBS}\s+)?(?P<verb>[a-z]+)\b")
_SUBJECT_FORMS = [
    (re.compile(r"\bI\s+am\b|\bI'm\b", re.IGNORECASE), "the user is"),
    (re.compile(r"\bI\s+was\b"), "the user was"),
    (re.compile(r"\bI\s+have\b|\bI've\b"), "the user has"),
    (re.compile(r"\bI'd\b"), "the user would"),
    (re.compile(r"\bI'll\b"), "the user will"),
    (re.compile(r"\bI\s+(?:do\s+not|don't)\b"), "the user does not"),
]
_OTHER_FORMS = [
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bmine\b"), "theirs"),
    (re.compile(r"\bmy\b"), "their"),
    (re.compile(r"\bMy\b"), "Their"),
    (re.compile(r"\bme\b"), "them"),
]


NOT_VERBS = {"and", "or", "but", "so", "as", "at", "in", "on", "to", "the", "a", "an", "too", "both"}


def third_person(verb: str) -> str:
    """The form after "the user": likes, goes, tries; past tense and modals unchanged."""
    if (
        verb in NOT_VERBS
        or verb in MODALS
        or verb in SAME_IN_PAST
        or verb in IRREGULAR_PAST
        or verb.endswith("ed")
    ):
        return verb
    if verb in {"do", "go"}:
        return verb + "es"
    if verb == "have":
        return "has"
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def about_the_user(sentence: str) -> str:
    """Restate a first-person sentence as one about the user; others are returned unchanged."""
    if not re.search(r"\b(?:I|I'm|I've|I'd|I'll|my|My|me|mine|myself)\b", sentence):
        return sentence
    for pattern, replacement in _SUBJECT_FORMS:
        sentence = pattern.sub(replacement, sentence)
    sentence = _I_VERB.sub(lambda m: f"the user {m['adverb'] or ''}{third_person(m['verb'])}", sentence)
    sentence = re.sub(r"\bI\b", "the user", sentence)
    for pattern, replacement in _OTHER_FORMS:
        sentence = pattern.sub(replacement, sentence)
    return sentence
