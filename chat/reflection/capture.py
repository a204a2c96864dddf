"""Shared pieces of the fact rules: regex fragments for values, and how a FactOp is built
(pinned or contextual, which keywords, which consent category)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from chat.reflection.ops import FactOp
from chat.reflection.topics import DOMAIN_KEYWORDS
from memory.categories import fact_category
from memory.text import FILLER_WORDS

# Adverbs allowed between the subject and the verb: "I really love", "I currently live".
ADV = (
    r"(?:(?:really|absolutely|totally|kinda|kind of|just|also|still|honestly|genuinely|seriously|"
    r"actually|truly|do|definitely|literally|so|lowkey|currently|now|mostly|mainly|already|"
    r"originally|even|usually|always|basically|pretty much|officially|finally|recently|happily|only|"
    r"full[- ]time|part[- ]time|mostly)\s+)*"
)
# Where a captured value ends: punctuation, or a word that starts the next clause.
_STOP_WORDS = (
    r"but|so|because|cause|cuz|since|which|who|where|when|while|and (?:I|we|my|it|they|he|she|now)|"
    r"though|although|now|currently|these days|lol|lmao|haha|tbh|btw|rn|atm|too|anymore|any more|no more|"
    r"as well|with|right now|at the moment|again|either|instead|originally|already|for (?:about |"
    r"like |almost |nearly |over |the past |the last )?(?:\d+|a|an|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|ages|years|months|weeks|a while|a bit|work|fun|now|the|my|our|uni|school|college|"
    r"university|a job|love)|since|all day|"
    r"mostly|mainly|though|nowadays|last|next|this|yesterday|today|tomorrow|in|at|on|near|from|during|"
    r"until|as|remotely|about|part[- ]time|full[- ]time|I|we|you|they|myself|nearly|almost|roughly|"
    # a verb after the value ends it: "my job at Boots is …", "the flat in Leith has …"
    r"is|are|was|were|has|have|had|will|would|can|could|should|does|did|keeps|seems|"
    r"a\s+while|(?:years|ages|months|weeks|long)\s+ago|way\s+back|(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"a\s+few|a\s+couple\s+of|several)\s+(?:years?|yrs|months?|weeks?|days?|hours?|nights?)"
)
STOP = rf"(?=\s*(?:[,.;:!?()\[\]\"+]|$)|\s+(?:{_STOP_WORDS})\b)"

_WORD = r"[A-Za-zÀ-ÿ][\w'.-]*"
# "Austin, TX" is one place; "Cardiff, Welsh is …" starts a clause after the town
PLACE = rf"(?P<v>{_WORD}(?:\s+{_WORD}){{0,3}}?(?:,\s*(?-i:[A-Z][A-Za-z]+)(?!\s+(?:is|are|was|were|has|have)\b))?){STOP}"
_ORG_WORD = r"(?-i:[A-Z0-9])[\w&'-]*(?:\.[A-Za-z]+)*"
ORG = (
    rf"(?P<v>(?:(?:St|Mt|Ft)\.\s+)?(?:the\s+)?[A-Za-z0-9][\w&'-]*(?:\.[A-Za-z]+)*"
    rf"(?:\s+(?:{_ORG_WORD}|of|&|and|for)){{0,4}}?){STOP}"
)
NAME = r"(?-i:(?P<v>[A-Z][a-zà-ÿ'-]+))"
# A full name: up to three capitalised words ("Tomás Ferreira", "Mary Ann Lee").
FULL_NAME = r"(?-i:(?P<v>[A-ZÀ-Þ][a-zà-ÿ'-]+(?:\s+(?:[A-ZÀ-Þ][a-zà-ÿ'-]+|(?:de|da|van|von|der|del|di|le|la|bin|al)(?=\s+[A-Z]))){0,3}))"

# Not places: "I live in fear", "I live in Slack".
NOT_PLACES = {
    "fear", "hope", "denial", "peace", "harmony", "sin", "poverty", "luxury", "comfort", "squalor",
    "dread", "shame", "misery", "bliss", "limbo", "chaos", "style", "sweatpants", "pajamas", "pyjamas",
    "hoodies", "slack", "terror", "constant", "hell", "heaven", "paradise", "bed", "town", "the",
    "reality", "debt", "silence", "isolation", "anticipation", "awe", "pain", "hiding", "exile",
    "work", "school", "college", "university", "uni", "home", "trouble", "love", "general",
}  # fmt: skip
NOT_ORGS = {
    "home", "night", "nights", "weekends", "moment", "least", "once", "first", "times", "midnight",
    "noon", "dawn", "school", "uni", "university", "college", "myself", "free", "scale", "random",
    "work", "heart", "all", "hospital", "office", "startup", "company", "agency", "bank", "store", "shop",
}  # fmt: skip


@dataclass(frozen=True)
class KeySpec:
    pinned: bool
    keywords: tuple[str, ...]


KEY_SPECS: dict[str, KeySpec] = {
    "name": KeySpec(True, ("name",)),
    "preferred_name": KeySpec(True, ("name", "call")),
    "location": KeySpec(True, ("live", "city", "local", "nearby", "weather", "home")),
    "hometown": KeySpec(False, ("hometown", "grew up", "from", "childhood")),
    "birthplace": KeySpec(False, ("born", "birthplace", "from", "childhood")),
    "address": KeySpec(False, ("address", "home", "delivery", "directions")),
    "employer": KeySpec(True, ("work", "job", "company", "office")),
    "job_title": KeySpec(True, ("work", "job", "role", "career")),
    "school": KeySpec(False, ("school", "class", "study", "course")),
    "languages": KeySpec(True, ("language", "speak", "translate")),
    "languages.learning": KeySpec(False, ("language", "learn", "practice", "study", "lesson", "translate")),
    "programming_languages": KeySpec(False, ("code", "programming", "script", "project", "library")),
    "os": KeySpec(False, ("install", "setup", "computer", "laptop", "terminal", "shortcut", "command")),
    "answer_style": KeySpec(True, ("answer", "style")),
    "editor": KeySpec(False, ("editor", "code", "shortcut", "plugin", "extension", "config")),
    "tools": KeySpec(False, ("tool", "setup", "workflow", "work")),
    "allergies": KeySpec(
        False, ("food", "eat", "restaurant", "recipe", "meal", "cook", "snack", "allergy", "medicine")
    ),
    "diet": KeySpec(False, ("food", "eat", "restaurant", "recipe", "meal", "cook", "dinner")),
    "health_conditions": KeySpec(False, ("health", "doctor", "medication", "symptoms", "exercise", "diet")),
    "medications": KeySpec(False, ("medication", "medicine", "pill", "doctor", "pharmacy", "drug")),
    "partner": KeySpec(True, ("partner", "relationship", "date", "anniversary", "gift")),
    "children": KeySpec(True, ("kids", "children", "family", "school", "parenting")),
    "pets": KeySpec(False, ("pet", "vet", "walk", "animal")),
    "religion": KeySpec(False, ("religion", "faith", "holiday", "food", "church", "mosque", "temple")),
    "politics": KeySpec(False, ("politics", "election", "vote", "news")),
    "income": KeySpec(False, ("money", "salary", "budget", "afford", "income", "tax", "savings")),
    "email": KeySpec(False, ("email", "contact")),
    "phone": KeySpec(False, ("phone", "call", "text", "contact")),
    "birthday": KeySpec(False, ("birthday", "age", "celebrate", "party")),
    "pronouns": KeySpec(True, ("pronouns",)),
}
_DEFAULT_SPEC = KeySpec(False, ())


def value_words(value: str) -> list[str]:
    words = re.findall(r"[a-zà-ÿ0-9][a-zà-ÿ0-9'+#-]*", value.lower())
    return [w for w in words if len(w) > 2 and w not in FILLER_WORDS]


def domain_keywords(topic: str) -> list[str]:
    words = set(value_words(topic)) | {topic.lower()}
    for members, keywords in DOMAIN_KEYWORDS.values():
        if words & members:
            return keywords
    return []


def make_fact(
    key: str,
    value: str,
    *,
    confidence: float = 0.9,
    keywords: Iterable[str] = (),
    value_keywords: bool = True,
) -> FactOp:
    """A FactOp with the key's pinning, keywords (key's own + given + value words) and consent category."""
    spec = KEY_SPECS.get(key, KEY_SPECS.get(key.split(".")[0], _DEFAULT_SPEC))
    value = clean_value(value)
    words = list(dict.fromkeys([*spec.keywords, *keywords, *(value_words(value) if value_keywords else [])]))[
        :16
    ]
    return FactOp(
        key=key,
        value=value,
        pinned=spec.pinned,
        keywords=[] if spec.pinned else words,
        confidence=confidence,
        category=fact_category(key, value),
    )


def clean_value(value: str) -> str:
    value = re.sub(r"\s+", " ", value).strip(" \t,;:!?\"'")
    if value.endswith(")") and value.count(")") > value.count("("):
        value = value[:-1].rstrip()
    if value.startswith("(") and value.count("(") > value.count(")"):
        value = value[1:].lstrip()
    return value[:-1] if value.endswith(".") and not re.search(r"\b\w\.$", value) else value


def first_word_ok(value: str, banned: set[str]) -> bool:
    words = value.lower().split()
    return bool(words) and words[0] not in FILLER_WORDS and words[0] not in banned
