"""Word-level reading for the heuristic extractor, on lemminflect's English lexicon (its tables
ship in the wheel; nothing is downloaded): lemmas and verb forms, and typo repair.

Typo repair is deliberately narrow: a lower-case word the lexicon does not know is replaced by
the one trigger word the rules look for that is one edit away ("wrking" → "working", "speek" →
"speak", "develper" → "developer"), or by its "-ing" form when the g was dropped ("workin").
Known words, capitalised words (names, places, companies) and words with two candidates are
left as they are, so "Rui" stays "Rui" and "liv" becomes "live" only because "live" is the one
trigger one edit away.
"""

from __future__ import annotations

import re
from functools import cache

import lemminflect

from chat.reflection.lexicon import JOB_HEADS, PET_SPECIES, SPOKEN_LANGUAGES
from memory.temporal import lemmas
from memory.text import one_edit

# The content words the rules are anchored on; a typo of one of them hides the whole fact.
_TRIGGERS = {
    "live", "lives", "living", "lived", "work", "works", "working", "worked", "speak", "speaks",
    "speaking", "learning", "studying", "moved", "moving", "started", "starting", "joined",
    "married", "engaged", "girlfriend", "boyfriend", "husband", "wife", "partner", "daughter",
    "allergic", "diagnosed", "vegetarian", "vegan", "software", "senior", "junior", "native",
    "speaker", "fluent", "switched", "stopped", "anymore", "longer", "finally", "booked",
    "flight", "flights", "tomorrow", "yesterday", "weekend", "next", "because", "really",
    "remember", "favourite", "favorite", "birthday", "children", "taking", "prescribed",
}  # fmt: skip
_TRIGGERS |= {h for h in JOB_HEADS if " " not in h and len(h) >= 5}
_TRIGGERS |= {s for s in PET_SPECIES if " " not in s and len(s) >= 4}
_TRIGGERS |= {lang for lang in SPOKEN_LANGUAGES if " " not in lang and len(lang) >= 5}
# Short or function words the lexicon has no lemma for but that are not typos.
_NOT_TYPOS = {
    "im", "ive", "id", "ill", "dont", "cant", "wont", "didnt", "doesnt", "isnt", "thats", "whats",
    "lol", "lmao", "tbh", "btw", "imo", "idk", "omg", "ngl", "rn", "atm", "ok", "okay", "pls", "plz",
    "gonna", "wanna", "gotta", "kinda", "sorta", "yeah", "yep", "nope", "hmm", "haha", "ugh", "wow",
    # number words are no typos ("five" is one letter from "live")
    "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty",
    "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "wifey", "hubby", "fave", "veggie",
}  # fmt: skip
_WORD = re.compile(r"(?<![\w'@/.#+-])[a-z]{3,}(?![\w'@/#+-])")


def known(word: str) -> bool:
    """Is `word` an English word (any part of speech) or a word the rules themselves use?"""
    w = word.lower()
    return bool(lemmas(w)) or w in _TRIGGERS or w in _NOT_TYPOS or w in _FUNCTION_WORDS


@cache
def correction(word: str) -> str | None:
    """The trigger word a lower-case unknown `word` is a typo of, if there is exactly one."""
    if known(word):
        return None
    if word.endswith("in") and word + "g" in _TRIGGERS:  # "workin", "livin"
        return word + "g"
    # a three-letter word only ever lost one letter of a four-letter trigger ("wrk")
    candidates = {t for t in _TRIGGERS if len(t) >= 4 and one_edit(word, t)}
    if len(word) < 4:
        candidates = {t for t in candidates if len(t) == 4}
    return candidates.pop() if len(candidates) == 1 else None


def repair_typos(text: str) -> str:
    """`text` with each lower-case typo of a trigger word replaced (see the module docstring)."""
    return _WORD.sub(lambda m: correction(m.group(0)) or m.group(0), text)


def is_verb(word: str) -> bool:
    return "VERB" in lemmas(word.lower()) or "AUX" in lemmas(word.lower())


def verb_lemma(word: str) -> str | None:
    found = lemmas(word.lower()).get("VERB")
    return found[0] if found else None


@cache
def is_past_form(word: str) -> bool:
    """A simple-past form that is not also a base form: "spent", "drove", "switched", not "put"."""
    w = word.lower()
    lemma = verb_lemma(w)
    if lemma is None or lemma == w:
        return False
    return w in (lemminflect.getInflection(lemma, tag="VBD") or ())


_FUNCTION_WORDS = {
    "the", "and", "but", "for", "nor", "yet", "with", "from", "into", "onto", "upon", "than", "then",
    "that", "this", "these", "those", "they", "them", "their", "theirs", "there", "here", "where",
    "when", "what", "which", "who", "whom", "whose", "why", "how", "our", "ours", "your", "yours",
    "his", "her", "hers", "its", "mine", "myself", "ourselves", "yourself", "themselves", "not",
    "any", "some", "all", "each", "every", "both", "either", "neither", "about", "above", "after",
    "before", "below", "between", "during", "over", "under", "until", "till", "since", "via", "per",
    "off", "out", "around", "across", "through", "without", "within", "among", "shall",
    "should", "would", "could", "might", "must", "can", "will", "may", "also", "too", "very", "just",
    "because", "although", "though", "while", "whether", "unless", "whereas", "amp", "etc",
}  # fmt: skip
