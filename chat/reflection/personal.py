"""Fact rules about the speaker's life: preferences, health, diet, beliefs, money, contact
details, partner, children and pets. Same contract as identity.py."""

from __future__ import annotations

import re
from collections.abc import Iterator

from chat.reflection.capture import ADV, NAME, STOP, domain_keywords, make_fact, value_words
from chat.reflection.identity import Context, Found
from chat.reflection.lexicon import (
    BODY_PARTS,
    CHILD_WORDS,
    DIETS,
    EDITORS,
    HEALTH_ADJECTIVES,
    HEALTH_CONDITIONS,
    MEDICATION_SUFFIXES,
    MEDICATIONS,
    NOT_NAMES,
    OPERATING_SYSTEMS,
    PARTNER_WORDS,
    PET_KIND,
    PET_SPECIES,
    POLITICS,
    PROGRAMMING_LANGUAGES,
    RELIGIONS,
    TOOLS,
)
from chat.reflection.ops import FactRetraction
from chat.reflection.text import Sentence, first_person_at, negated_before
from memory.text import FILLER_WORDS

I = re.IGNORECASE  # noqa: E741


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, I)


def _alternation(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# --- likes and dislikes -----------------------------------------------------------------------

_LIKE = r"love|loves|like|likes|enjoy|enjoys|adore|prefer|dig|am\s+(?:really\s+)?into|am\s+obsessed\s+with"
_DISLIKE = r"hate|hates|dislike|dislikes|detest|loathe|despise|cannot\s+stand|can\s+not\s+stand"
_FAN = r"(?:am\s+)?(?:a\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+)?fan\s+of"
_PREF = _re(
    rf"(?:(?P<subj>\b(?:I|we))\s+|^)(?:am\s+(?={ADV}not\s+))?{ADV}(?P<neg>(?:do|did|does)\s+not\s+|never\s+|no\s+longer\s+|am\s+not\s+|not\s+)?"
    rf"{ADV}(?P<verb>{_FAN}|{_LIKE}|{_DISLIKE})\s+(?P<v>[^,.;!?()]+)"
)
_FAN_OF_TEAM = _re(
    r"\bI\s+am\s+(?:a\s+|an\s+)?(?:big\s+|huge\s+|massive\s+|die-?hard\s+|lifelong\s+|great\s+)?"
    r"(?P<v>(?-i:[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,2}))\s+fan\b"
)
_ELLIPTICAL = re.compile(rf"^(?:{_FAN}|{_DISLIKE})$", I)
_OBJECT_END = re.compile(
    r"\s+(?:but|because|cause|since|when|while|especially|in|on|at|for|over|than|to\s+me|from|with|"
    r"so\s+much|a\s+lot|very\s+much|anymore|any\s+more|no\s+more|these\s+days|lol|tbh|though|either|at\s+all|"
    r"too|now|it|which|that|if|lately|recently|and\s+(?:I|we|it|they|my))\b.*$",
    I,
)
_BAD_OBJECTS = {"you", "it", "that", "this", "him", "her", "them", "how", "what", "when", "where", "being"}


def _objects(raw: str) -> list[str]:
    raw = _OBJECT_END.sub("", " " + raw).strip()
    objects = []
    for part in re.split(r"\s+(?:and|&|or)\s+|\s*,\s*", raw):
        words = part.lower().split()
        if words and words[0] == "to" and len(words) > 1:
            words = words[1:]
        while words and words[0] in ("the", "a", "an", "some", "all", "most", "good", "any"):
            words.pop(0)
        if (
            not words
            or len(words) > 4
            or words[0] in _BAD_OBJECTS
            or words[0] in ("my", "our", "your", "his", "her", "their")
        ):
            continue
        if all(w in FILLER_WORDS for w in words):
            continue
        objects.append(" ".join(words))
    return objects


def _preference(topic: str, likes: bool, ctx: Context, confidence: float | None = None) -> Found:
    return make_fact(
        f"preference.{topic}",
        "likes" if likes else "dislikes",
        confidence=ctx.confidence if confidence is None else confidence,
        keywords=[*value_words(topic), *domain_keywords(topic)],
        value_keywords=False,
    )


# how the person likes to be answered: one key, `answer_style` (belief revision splits it by
# mode when it differs: detailed for research, concise when debugging)
_STYLE_NOUN = r"(?:answers?|explanations?|responses?|replies|write-?ups?|summaries)"
# a second word of the same style: "short, direct answers", "brief and clear replies"
_STYLE_ALSO = r"(?:,?\s+(?:and\s+)?(?:short|brief|concise|terse|quick|crisp|direct|clear|simple|plain))?"
_DETAILED = _re(
    rf"\bI\s+(?:really\s+)?(?:like|love|prefer|want|need|appreciate)\s+(?:(?:really|very|more)\s+)?"
    rf"(?:detailed|thorough|in-depth|long|comprehensive|deep|lengthy|elaborate)\s+{_STYLE_NOUN}|"
    r"\b(?:more|lots\s+of|plenty\s+of)\s+detail(?:s)?\s+please\b|\bgo\s+(?:into\s+)?(?:deep|in\s+depth)\b|"
    r"\bexplain\s+(?:it\s+|things\s+)?(?:in\s+(?:depth|detail)|thoroughly)\b"
)
_CONCISE = _re(
    rf"\bI\s+(?:really\s+)?(?:like|love|prefer|want|need)\s+(?:(?:really|very)\s+)?"
    rf"(?:short|brief|concise|terse|quick|crisp){_STYLE_ALSO}\s+{_STYLE_NOUN}|"
    r"^\s*(?:please\s+)?just\s+(?:give\s+me|show\s+me|tell\s+me|send)\s+the\s+(?:command|code|fix|answer|diff|snippet)\b|"
    r"\b(?:keep\s+it|be)\s+(?:short|brief|concise|terse)\b|\bno\s+(?:long\s+)?explanations\b|\btl;?dr\s+please\b"
)
_STYLE_OBJECT = re.compile(rf"\b{_STYLE_NOUN}$", I)


def answer_style(s: Sentence, ctx: Context) -> Iterator[Found]:
    if s.sarcastic:
        return
    if (m := _CONCISE.search(s.text)) and not negated_before(s.text, m.start() + 2):
        yield make_fact("answer_style", "concise", confidence=ctx.confidence)
    elif (m := _DETAILED.search(s.text)) and not negated_before(s.text, m.start() + 2):
        yield make_fact("answer_style", "detailed", confidence=ctx.confidence)


def preferences(s: Sentence, ctx: Context) -> Iterator[Found]:
    if s.sarcastic:  # "oh I LOVE a 5am alarm 🙃" says the opposite of its words
        return
    for m in _PREF.finditer(s.text):
        verb = re.sub(r"\s+", " ", m["verb"].lower())
        if not m["subj"] and not (_ELLIPTICAL.match(verb) or m["neg"]):
            continue
        likes = not re.match(_DISLIKE, verb)
        if m["neg"]:
            if not likes:
                continue  # "I don't hate it": too weak to store
            likes = False
        style = _CONCISE.search(s.text) or _DETAILED.search(s.text)
        for topic in _objects(m["v"]):
            if style and (_STYLE_OBJECT.search(topic) or topic in style[0].lower()):
                continue  # a style of answer ("short, direct answers"): answer_style says it
            yield _preference(topic, likes, ctx, ctx.confidence if m["subj"] else min(ctx.confidence, 0.7))
    for m in _PERSON.finditer(s.text):
        if m["v"].lower() in _TECH_NAMES:
            continue  # "a Python person" is the language used (identity.tools), not a taste
        if m["v"].lower() not in FILLER_WORDS | {
            "people",
            "good",
            "bad",
            "nice",
            "different",
            "private",
            "big",
            "real",
        }:
            yield _preference(m["v"].lower(), not m["neg"], ctx)
    for m in _FAN_OF_TEAM.finditer(s.text):
        if m["v"].lower() not in NOT_NAMES:
            yield _preference(m["v"].lower(), True, ctx)


# "I'm a cat person", "not a morning person"
_TECH_NAMES = {*PROGRAMMING_LANGUAGES, *OPERATING_SYSTEMS, *EDITORS, *TOOLS}
_PERSON = _re(r"\bI\s+am\s+(?P<neg>not\s+)?(?:really\s+|much\s+of\s+)?(?:a|an)\s+(?P<v>[a-z]+)\s+person\b")
_FAVORITE = _re(
    rf"(?:\bmy\s+|^)(?:all[- ]time\s+|absolute\s+)?fav(?:ou?rite|e|ourite)?\s+(?P<topic>[a-z][a-z ]{{1,25}}?)\s+"
    rf"(?:is|are|has\s+to\s+be|would\s+be)\s+(?:probably\s+|definitely\s+)?(?P<v>[^,.;!?()]+?){STOP}"
)


def favorites(s: Sentence, ctx: Context) -> Iterator[Found]:
    for m in _FAVORITE.finditer(s.text):
        value = re.sub(r"\s+and\s+my\b.*$", "", m["v"], flags=I).strip()
        topic = re.sub(r"\s+(?:of\s+all\s+time|ever|in\s+the\s+world)$", "", m["topic"].strip().lower())
        if value and value.lower().split()[0] not in FILLER_WORDS:
            yield make_fact(
                f"favorite.{topic}",
                value,
                confidence=ctx.confidence,
                keywords=[topic, *domain_keywords(value)],
            )


# --- health and diet --------------------------------------------------------------------------

_ALLERGIC = _re(
    rf"\bI\s+am\s+{ADV}(?:very\s+|severely\s+|deathly\s+|super\s+|mildly\s+|slightly\s+)?allergic\s+to\s+(?P<v>[^.;!?()]+)"
)
_ALLERGY = _re(
    r"\bI\s+(?:have|have\s+got|got)\s+(?:a\s+|an\s+)?(?:severe\s+|mild\s+|bad\s+)?(?P<v>[a-z]+(?:\s+[a-z]+)?)\s+allerg(?:y|ies)\b"
)
_ALLERGEN_END = re.compile(
    r"\s+(?:so|but|because|and\s+(?:I|it|we|my)|which|btw|lol|tbh|too|though|as\s+well)\b.*$", I
)
_CONDITION = _re(
    r"(?:\bI\s+(?:have\s+been\s+|was\s+|got\s+|am\s+|have\s+)?(?:\w+\s+)?(?:diagnosed(?:\s+(?:this|last|in)\s+\w+)?\s+with|suffer(?:ing)?\s+from|"
    r"living\s+with|live\s+with|have\s+got|have\s+had|have|get|deal\s+with|struggle\s+with)|\b(?:for|with)\s+my)\s+"
    r"(?:(?:mild|severe|chronic|bad|really\s+bad|terrible|some|a\s+bit\s+of|clinical|high-functioning)\s+)*"
    rf"(?P<v>{_alternation(HEALTH_CONDITIONS)})\b(?P<more>(?:\s*(?:,|and)\s*(?:{_alternation(HEALTH_CONDITIONS)})\b)*)"
)
_HEALTH_ADJ = _re(rf"\bI\s+am\s+{ADV}(?:(?P<type>type\s+[12])\s+)?(?P<v>{_alternation(HEALTH_ADJECTIVES)})\b")
_MEDICATION = _re(
    r"\b(?:take|taking|am\s+on|was\s+prescribed|got\s+prescribed|been\s+prescribed|started\s+taking|started\s+on)\s+"
    r"(?:\d+\s*mg\s+(?:of\s+)?)?(?P<v>the\s+pill|birth\s+control|[a-z][\w-]+)\b"
)
_DIET = _re(
    rf"\bI\s+(?:am|have\s+been)\s+{ADV}(?:a\s+|an\s+)?(?:strict\s+|full\s+|mostly\s+)?(?P<v>{_alternation(DIETS)})\b(?!\s+(?:restaurant|place|food|recipe|option)s?\b)"
)
_EAT = _re(r"\bI\s+(?:only\s+)?(?:eat|keep)\s+(?P<v>halal|kosher)\b")
_NO_MEAT = _re(
    r"\bI\s+(?:do\s+not|never)\s+eat\s+(?:any\s+)?meat\b|\bI\s+(?:have\s+)?(?:stopped|quit)\s+eating\s+meat\b|"
    r"\bI\s+(?:have\s+)?gave\s+up\s+meat\b|\bI\s+(?:have\s+)?given\s+up\s+meat\b"
)
_NOT_DIET = _re(
    rf"\bI\s+am\s+(?:no\s+longer\s+(?:a\s+|an\s+)?(?P<a>{_alternation(DIETS)})|not\s+(?:a\s+|an\s+)?(?P<b>{_alternation(DIETS)})"
    r"\s+(?:anymore|any\s+more|no\s+more))\b"
)


# "severe peanut allergy so …": the noun phrase alone, at the head of the sentence
_ALLERGY_BARE = _re(
    r"^(?:(?:a|an|my)\s+)?(?:(?:severe|mild|bad|serious|nasty|life-threatening|massive)\s+)?"
    r"(?P<v>[a-z]+(?:\s+nut)?)\s+allerg(?:y|ies)\b(?!\s+(?:season|test|clinic)\b)"
)
_COUNTABLE_ALLERGENS = {"peanut", "nut", "tree nut", "egg", "cat", "dog", "bee", "wasp", "almond", "cashew"}


def _allergen(word: str) -> str:
    return word + "s" if word in _COUNTABLE_ALLERGENS else word


def _allergens(raw: str) -> list[str]:
    raw = _ALLERGEN_END.sub("", raw)
    items = [
        re.sub(r"^(?:all\s+|most\s+|any\s+)", "", p.strip(), flags=I)
        for p in re.split(r",|\band\b|\bor\b|&", raw, flags=I)
    ]
    return [
        i.lower() for i in items if i and len(i.split()) <= 3 and i.lower().split()[0] not in FILLER_WORDS
    ]


def health(s: Sentence, ctx: Context) -> Iterator[Found]:
    allergens: list[str] = []
    for m in _ALLERGIC.finditer(s.text):
        if not negated_before(s.text, m.start() + 2):
            allergens += _allergens(m["v"])
    for m in [*_ALLERGY.finditer(s.text), *_ALLERGY_BARE.finditer(s.text)]:
        if m["v"].lower() not in (
            "no",
            "any",
            "food",
            "bad",
            "severe",
            "an",
            "the",
            "my",
            "his",
            "her",
            "seasonal",
        ):
            allergens.append(_allergen(m["v"].lower()))
    if allergens:
        yield make_fact("allergies", ", ".join(dict.fromkeys(allergens)), confidence=ctx.confidence)
    conditions: list[str] = []
    for m in _CONDITION.finditer(s.text):
        if not negated_before(s.text, m.start() + 2):
            conditions.append(m["v"])
            conditions += [c.strip() for c in re.split(r",|\band\b", m["more"], flags=I) if c.strip()]
    for m in _HEALTH_ADJ.finditer(s.text):
        condition = HEALTH_ADJECTIVES[m["v"].lower()]
        conditions.append(f"{m['type'].lower()} {condition}" if m["type"] else condition)
    if conditions:
        yield make_fact("health_conditions", ", ".join(dict.fromkeys(conditions)), confidence=ctx.confidence)
    medications = [
        m["v"].lower()
        for m in _MEDICATION.finditer(s.text)
        if (m["v"].lower() in MEDICATIONS or m["v"].lower().endswith(MEDICATION_SUFFIXES))
        and first_person_at(s.text, m.start())
        and not negated_before(s.text, m.start())
    ]
    if medications:
        yield make_fact("medications", ", ".join(dict.fromkeys(medications)), confidence=ctx.confidence)
    for pattern in (_DIET, _EAT):
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2):
                yield make_fact("diet", DIETS[m["v"].lower()], confidence=ctx.confidence)
    if _NO_MEAT.search(s.text):
        yield make_fact("diet", "vegetarian", confidence=min(ctx.confidence, 0.7))
    for m in _NOT_DIET.finditer(s.text):
        yield FactRetraction("diet", DIETS[(m["a"] or m["b"]).lower()])


# --- beliefs, money, contact ------------------------------------------------------------------

_RELIGION = _re(
    r"\bI\s+am\s+(?:a\s+|an\s+)?(?:(?:devout|practicing|practising|observant|non-practicing|lapsed|"
    rf"born-again|proud|good|orthodox)\s+)?(?P<v>{_alternation(RELIGIONS)})\b"
)
_POLITICS = _re(
    rf"\bI\s+am\s+(?:a\s+|an\s+)?(?:(?:lifelong|registered|proud|moderate|staunch)\s+)?(?P<v>{_alternation(POLITICS)})"
    r"(?=\s*(?:[,.;!]|$|\s+(?:and|but|voter|myself)\b))"
)
_VOTE = _re(
    r"\bI\s+(?:always\s+|usually\s+|just\s+)?(?:vote|voted)\s+(?:for\s+)?(?:the\s+)?(?P<v>(?-i:[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?))"
)
_INCOME = _re(
    r"\bI\s+(?:make|earn|take\s+home|get\s+paid|am\s+paid)\s+(?:about\s+|around\s+|roughly\s+|approximately\s+|like\s+|"
    r"almost\s+|nearly\s+|over\s+|under\s+|just\s+under\s+|just\s+over\s+)?(?P<v>[$€£]?\s?\d[\d,.]*\s?(?:k|grand|"
    r"thousand|million|m)?(?:\s*(?:dollars|euros|pounds|usd|eur|gbp))?\s*(?:a|per|an|/)\s*(?:year|yr|month|hour|week|annum))"
)
_PRONOUNS = _re(
    r"\b(?:my\s+pronouns\s+are|I\s+go\s+by|I\s+use)\s+(?P<v>(?:she|he|they|ze|xe|it)/(?:her|him|them|hers|his|theirs|zir|xem|its)(?:/\w+)?)"
)
_EMAIL = _re(r"\bmy\s+(?:e-?mail|e-?mail\s+address)\s+is\s+(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)")
_PHONE = _re(r"\bmy\s+(?:phone|cell|mobile)(?:\s+number)?\s+is\s+(?P<v>\+?\d[\d\s().-]{6,}\d)")
_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
_BIRTHDAY = _re(
    rf"\bmy\s+birthday\s+is\s+(?:on\s+)?(?:the\s+)?(?P<v>(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS}))"
)


def beliefs_money_contact(s: Sentence, ctx: Context) -> Iterator[Found]:
    for key, pattern, canonical in (("religion", _RELIGION, RELIGIONS), ("politics", _POLITICS, POLITICS)):
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2):
                yield make_fact(key, canonical[m["v"].lower()], confidence=ctx.confidence)
    for m in _VOTE.finditer(s.text):
        if not negated_before(s.text, m.start() + 2):
            yield make_fact("politics", m["v"], confidence=min(ctx.confidence, 0.7))
    for key, pattern in (
        ("income", _INCOME),
        ("email", _EMAIL),
        ("phone", _PHONE),
        ("birthday", _BIRTHDAY),
        ("pronouns", _PRONOUNS),
    ):
        for m in pattern.finditer(s.text):
            yield make_fact(
                key, birthday_value(m["v"]) if key == "birthday" else m["v"], confidence=ctx.confidence
            )


# --- partner, children, pets ------------------------------------------------------------------

_PARTNER = _re(
    r"\b(?:my|our)\s+(?:(?:lovely|amazing|beautiful|wonderful|new|current|long-?term|awesome)\s+)?"
    rf"(?P<rel>{_alternation(PARTNER_WORDS)})\b(?!')(?:\s*,?\s+{NAME}\b)?"
)
_PARTNER_NAMED = _re(rf"\bmy\s+(?P<rel>{_alternation(PARTNER_WORDS)})'s\s+name\s+is\s+{NAME}")
_MARRIED = _re(
    rf"\bI\s+(?:am|have\s+been)\s+(?:happily\s+)?(?:married\s+to|engaged\s+to|dating|seeing)\s+{NAME}"
)
# "dating a girl from my choir, her name is Ava"
_DATING_SOMEONE = _re(
    r"\bI\s+(?:am|have\s+been|started)\s+(?:\w+\s+)?(?:dating|seeing|going\s+out\s+with)\s+"
    r"(?:someone|somebody|a\s+(?:guy|girl|man|woman|lady|boy))\b"
)
# "we've been together six years, his name is Ali"
_TOGETHER = _re(r"^we\s+(?:have\s+)?(?:been|are)\s+(?:\w+\s+)?(?:together|married|dating|a\s+couple)\b")
_THEIR_NAME = _re(rf"\b(?:(?:his|her|their)\s+name\s+is|called|named)\s+(?:(?:him|her|them|it)\s+)?{NAME}")
_BREAKUP = _re(
    r"\b(?:we|I)\s+(?:just\s+|recently\s+|finally\s+)?(?:broke\s+up|split\s+up|got\s+divorced|are\s+divorced|separated)\b"
)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "twins": 2}
_HAVE_KIDS = _re(
    r"\b(?:I|we)\s+(?:have|have\s+got)\s+(?P<n>\d|a|an|one|two|three|four|five|six)\s+(?:(?:little|young|"
    # "a 5 year old son", "an 18-month-old daughter"
    r"grown|adult|teenage|wonderful|amazing|beautiful|small|\d{1,2}[- ](?:year|month|week)s?[- ]old)\s+)?(?P<noun>kids|children|sons|daughters|boys|girls|"
    r"kid|child|son|daughter|boy|girl)\b"
)
_HAVE_TWINS = _re(r"\b(?:I|we)\s+(?:have|have\s+got|had)\s+(?P<n>twins|triplets)\b")
_KIDS_AGES = _re(
    r"\b(?:my|our)\s+(?:kids|children|boys|girls)\s+are\s+(?:aged\s+|ages\s+)?(?P<ages>\d{1,2}(?:\s*,\s*\d{1,2})*\s*(?:,\s*)?and\s+\d{1,2})\b"
)
_CHILD_NAMED = _re(
    r"\b(?:my|our)\s+(?:(?:little|youngest|oldest|eldest|older|younger|baby|\d+[- ]year[- ]old)\s+)?"
    rf"(?P<noun>{_alternation(CHILD_WORDS)})\s*,?\s+{NAME}\b"
)
_SPECIES = _alternation(PET_SPECIES)
_PET_NAMED = _re(
    rf"\b(?:my|our)\s+(?:(?:new|little|old|sweet|rescue|baby|fat|lazy)\s+)?(?P<species>{_SPECIES})\s*,?\s+"
    rf"(?:(?:named|called)\s+)?{NAME}\b"
)
# pets counted and then named: "our two cats Salt and Vinegar", "we've got three hens, Dot, Peg
# and Flo", "my budgies, Mango and Pip"
_PETS_NAMED_LIST = _re(
    rf"\b(?:my|our|(?:I|we)\s+(?:have\s+got|have|got|adopted|rescued))\s+(?:(?:\d|two|three|four|five)\s+)?"
    rf"(?:(?:new|little|old|rescue|baby)\s+)?(?P<species>{_SPECIES})s\s*,?\s+(?:(?:called|named)\s+)?"
    r"(?P<names>(?-i:[A-Z][a-zà-ÿ'-]+)(?:\s*,\s*(?-i:[A-Z][a-zà-ÿ'-]+))*\s*,?\s+(?:and|&)\s+(?-i:[A-Z][a-zà-ÿ'-]+))"
)
_PET_HAVE = _re(
    r"\b(?:I|we)\s+(?:have\s+got|have|got|adopted|rescued|own|just\s+got|just\s+adopted)\s+(?P<v>[^.;!?]+)"
)
# "we live with two cats", "i live in montreal with my two cats"
_PET_WITH = _re(
    r"\b(?:I|we)\s+(?:am\s+|are\s+)?(?:live|living)\b[^.;!?]{0,30}?\bwith\s+(?:my|our)\s+(?P<v>[^.;!?]+)"
)
_PET_ITEM = _re(
    r"^(?:(?P<n>a|an|one|two|three|four|\d+)\s+)?(?:(?:very|super|really|so)\s+)?(?:(?!hot\b)[a-z]+\s+)?(?:(?:new|little|old|sweet|rescue|baby|black|white|ginger|"
    rf"orange|grey|gray|tabby|fluffy)\s+)*(?P<species>{_SPECIES})(?P<plural>s)?(?:\s+(?:named|called)\s+{NAME})?"
    r"(?=\s*$|\s+(?:who|that|which|too|as\s+well|at\s+home|now|lol|last|this|yesterday|today|on|from)\b)"
)


# the items of a list: "a cat, a dog and two rabbits", "Ana, Rui and Bea"
_LIST_ITEMS = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_CALENDAR_WORDS = set(_MONTHS.split("|")) | {
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "easter", "christmas",
}  # fmt: skip


def _person(name: str | None) -> str | None:
    name = re.sub(r"['’]s$", "", name) if name else name  # "my husband Omar's a pilot"
    return name if name and name.lower() not in NOT_NAMES and name.lower() not in _CALENDAR_WORDS else None


def family(s: Sentence, ctx: Context) -> Iterator[Found]:
    for m in [*_PARTNER_NAMED.finditer(s.text), *_MARRIED.finditer(s.text), *_PARTNER.finditer(s.text)]:
        if _BREAKUP.search(s.text) or re.search(r"\bex[- ]", s.text[max(0, m.start() - 3) : m.end()], I):
            break
        rel = m.groupdict().get("rel")
        if negated_before(s.text, m.start()) or _DEATH.search(s.text, m.end()):
            continue
        yield make_fact("partner", _person(m["v"]) or PARTNER_WORDS.get((rel or "partner").lower(), "partner"),
                        confidence=ctx.confidence, keywords=[PARTNER_WORDS.get((rel or "").lower(), "partner")])  # fmt: skip
        break
    if (
        (_DATING_SOMEONE.search(s.text) or _TOGETHER.search(s.text))
        and (named := _THEIR_NAME.search(s.text))
        and _person(named["v"])
    ):
        yield make_fact("partner", named["v"], confidence=min(ctx.confidence, 0.8), keywords=["partner"])
    if _BREAKUP.search(s.text):
        yield FactRetraction("partner", "")
        return
    children: list[str] = []
    for m in _HAVE_KIDS.finditer(s.text):
        n, noun = _NUMBERS.get(m["n"].lower(), m["n"]), m["noun"].lower()
        # a count is the number ("two daughters" → 2, as "two kids"); one child is its word ("a son")
        children.append(str(n) if noun.endswith(("s", "ren")) or noun.startswith(("kid", "child")) else noun)
    children += [str(len(re.findall(r"\d+", m["ages"]))) for m in _KIDS_AGES.finditer(s.text)]
    children += ["2" if m["n"].lower() == "twins" else "3" for m in _HAVE_TWINS.finditer(s.text)]
    children += [name for m in _CHILD_NAMED.finditer(s.text) if (name := _person(m["v"]))]
    if children:
        yield make_fact("children", ", ".join(dict.fromkeys(children)), confidence=ctx.confidence)
    if _PET_DEATH.search(s.text) or _DEATH.search(s.text):
        return  # a pet that died or was given up is no pet now (changes.py retracts it)
    pets = [
        f"{name} ({m['species'].lower()})" for m in _PET_NAMED.finditer(s.text) if (name := _person(m["v"]))
    ]
    pets += [
        f"{name} ({m['species'].lower()})"
        for m in _PETS_NAMED_LIST.finditer(s.text)
        for name in _LIST_ITEMS.split(m["names"])
        if _person(name)
    ]
    for m in [*_PET_HAVE.finditer(s.text), *_PET_WITH.finditer(s.text)]:
        if negated_before(s.text, m.start()):
            continue
        for chunk in _LIST_ITEMS.split(m["v"].strip()):
            item = _PET_ITEM.match(chunk)
            if not item:
                continue
            species = item["species"].lower()
            count = _NUMBERS.get((item["n"] or "a").lower(), item["n"])
            pets.append(
                f"{item['v']} ({species})"
                if item["v"]
                else f"{count} {species}s"
                if item["plural"]
                else species
            )
    if pets:
        yield make_fact("pets", ", ".join(dict.fromkeys(pets)), confidence=ctx.confidence)


# --- clause-level reading of the rest of the scheme ---------------------------------------------
#
# The frames people use without "I am …": "she/her pls", "seeing this guy Tomás", "the husband
# and I", "two kids, Ana is 5 and Rui is 2", "my son starts school", "adopted a lurcher, her name is
# Pip", "went vegan", "put me on Ritalin", "Green party member", "email me at …". Each is anchored
# on the speaker; another person's fact ("my friend is pregnant") stays silent.

_PRONOUNS_BARE = _re(r"^(?P<v>(?:she|he|they|ze|xe)/(?:her|him|them|hers|his|theirs|zir|xem)(?:/\w+)?)\b")
_PARTNER_FRAMES = [
    _re(
        rf"\bI\s+(?:am\s+|have\s+been\s+|started\s+)?(?:\w+\s+)?(?:seeing|dating|going\s+out\s+with)\s+"
        rf"(?:this|a|some|that)\s+(?:guy|girl|man|woman|lady|boy|dude|person)\s+(?:called\s+|named\s+)?{NAME}"
    ),
    _re(
        rf"\bI\s+(?:am\s+)?(?:\w+\s+)?(?:planning\s+to\s+|going\s+to\s+|gonna\s+|will\s+)?(?:propose|proposed)\s+to\s+{NAME}"
    ),
    _re(rf"\b(?:we|I)\s+(?:just\s+|finally\s+)?got\s+(?:engaged|married)\s+to\s+{NAME}"),
    _re(rf"^{NAME}\s+said\s+yes\b"),
    # "Jo proposed on the beach and I said yes"
    _re(rf"^{NAME}\s+(?:just\s+|finally\s+)?proposed\b(?!\s+to\s+(?!me\b))[^.;!?]*\bI\s+said\s+yes\b"),
]
_PARTNER_ROLE = _re(
    r"\b(?:the|my)\s+(?P<rel>wife|husband|missus|missis|hubby|other\s+half|better\s+half)\s+and\s+(?:I|me)\b|"
    r"\bme\s+and\s+the\s+(?P<rel2>wife|husband|missus|hubby|other\s+half)\b"
)
_ROLE_WORD = {
    "missus": "wife",
    "missis": "wife",
    "hubby": "husband",
    "other half": "partner",
    "better half": "partner",
}
_KIDS_LIST = _re(
    r"(?:^|\b(?:I|we)\s+(?:have\s+)?(?:got\s+)?)(?:\d|two|three|four|five)\s+(?:kids|children|boys|girls|sons|daughters)\b(?P<rest>[^.;!?]*)"
)
_KID_NAME_AGE = re.compile(
    r"(?-i:\b(?P<v>[A-Z][a-zà-ÿ'-]+))\s+(?:is|just\s+turned|turned|\(|,)\s*(?:\d|nearly|almost)"
)
_KID_NAMES = re.compile(
    r"^\s*(?:,|:|-|—|called|named)\s*(?P<names>(?-i:[A-Z][a-zà-ÿ'-]+)(?:\s*,\s*(?-i:[A-Z][a-zà-ÿ'-]+))*"
    r"(?:,?\s+and\s+(?-i:[A-Z][a-zà-ÿ'-]+)))(?=\s*(?:[,;.!]|$))"
)
_MY_CHILD = _re(
    r"\bmy\s+(?:little\s+|youngest\s+|oldest\s+|eldest\s+|older\s+|younger\s+|baby\s+)?(?P<noun>son|daughter|stepson|stepdaughter)\b"
    r"(?!\s*,?\s+(?-i:[A-Z])|')"
)
# "mum of two", "dad to a 4 year old": a parent says how many
_PARENT_OF = _re(
    r"(?:^|\bI\s+am\s+(?:a\s+)?|[,;]\s*)(?:proud\s+|busy\s+|single\s+|working\s+)?(?:mum|mom|mother|mam|dad|father|parent|mama|papa)\s+"
    r"(?:of|to)\s+(?P<n>\d|a|an|one|two|three|four|five|six|twins)\b(?!\s+(?:dogs?|cats?|pets?|rescue|puppies|kittens|plants?))"
)
_BAD_PART = _re(
    r"\bI\s+(?:have|have\s+got|got)\s+(?:a\s+)?(?:bad|dodgy|sore|weak|bum|crook)\s+(?P<v>back|knee|hip|shoulder|neck|ankle)\b"
)
# "me and the kids went camping", "the kids and I": the speaker's own children
_ME_AND_KIDS = _re(
    r"\b(?:me|I)\s+and\s+the\s+(?P<v>kids|children)\b|\bthe\s+(?P<w>kids|children)\s+and\s+(?:I|me)\b"
)
_PET_DEATH = _re(
    r"\b(?:passed\s+away|put\s+down|put\s+to\s+sleep|died|rehomed|re-homed|lost\s+(?:my|our)|gave\s+(?:up|away))\b"
)
# someone who died is no partner or pet now: "passed in 2022", "passed last spring"
_DEATH = _re(
    r"\b(?:passed(?:\s+away|\s+on)?(?=\s+(?:away|on|in|last|this|at|peacefully|suddenly|\d)|\s*[,.;!]|\s*$)|died|was\s+killed|lost\s+(?:him|her|them))\b"
)
_PET_WORD = _alternation(PET_SPECIES)
_PET_THEN_NAME = _re(
    rf"\b(?:I|we)\s+(?:have\s+|just\s+|finally\s+)*(?:got|adopted|rescued|brought\s+home|picked\s+up)\s+"
    rf"(?P<n>a|an|one|two|three|\d)\s+(?:[\w-]+\s+){{0,2}}?(?:(?P<species>{_PET_WORD})(?P<plural>s)?|(?P<plural_species>puppies|bunnies|kitties))\b"
    r"(?P<rest>[^.;!?]*)"
)
_NAME_MY_PET = _re(rf"^{NAME},?\s+(?:my|our)\s+(?:(?:[\w-]+)\s+)?(?P<species>{_PET_WORD})\b")
_CONDITION_WORDS = _alternation(HEALTH_CONDITIONS)
_HEALTH_FRAMES = [
    _re(rf"\b(?:my|the)\s+(?P<v>{_CONDITION_WORDS})\s+diagnosis\b"),
    _re(
        rf"(?<!\w's\s)\bmy\s+(?P<v>{_CONDITION_WORDS})\s+(?:is|are|has|have|was|were|got|flared|kicked|came)\b(?!\s+(?:\w+\s+)?(?:gone|over|cured|better|fine|healed|history|a\s+thing\s+of))"
    ),
    _re(rf"^(?P<v>{_CONDITION_WORDS})\s+(?:season|flare|flare-up|is\s+back|again)\b"),
    # "living with MS since my twenties", "I've been dealing with endometriosis for years",
    # "I struggle with migraines", "I battle psoriasis"
    _re(
        rf"(?:^|\b(?:I|we)\s+(?:am\s+|have\s+been\s+)?)(?:(?:still|also)\s+)?(?:living|live|dealing|deal|struggling|struggle|battling|battle|coping|cope|suffering|suffer)"
        rf"\s+(?:with|from)\s+(?:(?:a|an|chronic|severe|mild|my)\s+)*(?P<v>{_CONDITION_WORDS})\b"
    ),
    # "the consultant has confirmed it's lupus", "turns out I have gout"
    _re(
        rf"\b(?:confirmed|diagnosed|says|said|thinks|reckons|turns\s+out|found\s+out|told\s+me)\s+(?:that\s+)?"
        rf"(?:it\s+is|it's|it\s+was|I\s+have|I\s+had|I've\s+got)\s+(?:(?:a|an|mild|severe|chronic|early)\s+)*(?P<v>{_CONDITION_WORDS})\b"
    ),
]
_PREGNANT = _re(r"(?:^|\bI\s+am\s+(?:now\s+)?)(?:\d+\s+(?:weeks?|months?)\s+)?pregnant\b")
_HEALTH_ADJ_BARE = _re(
    rf"(?:^|[,;]\s*)(?:(?P<type>type\s+[12])\s+)?(?P<v>{_alternation(HEALTH_ADJECTIVES)})(?=\s*(?:[,;.!]|$)|\s+(?:since|for|here|myself)\b)"
)
_INJURY = _re(
    rf"\bI\s+(?:have\s+|just\s+)*(?P<verb>broke|broken|fractured|sprained|dislocated|tore|torn|twisted)\s+my\s+(?P<v>{_alternation(BODY_PARTS)})\b"
)
_INJURED = {"broke": "broken", "tore": "torn"}
_MEDICATION_ME = _re(
    r"\b(?:put|started|switched|moved|changed|got)\s+me\s+(?:on(?:to)?|from\s+[\w-]+\s+(?:on)?to)\s+(?P<v>[a-z][\w-]+)|"
    r"(?:^|\bI\s+am\s+|[,;]\s*)(?:living\s+on|started|starting|back\s+on|now\s+on|(?<![\w\s])on|(?<=am\s)on|(?<=^)on)\s+(?P<w>[a-z][\w-]+)"
)
# "levothyroxine every morning", "sertraline 50mg daily": a medicine named first, with its schedule
_MEDICATION_LEAD = _re(
    r"(?:^|[,;]\s*)(?:still\s+|now\s+)?(?P<v>[a-z][\w-]+)\s+(?:\d+\s*mg\s+)?(?:instead|now|each|every|twice|once|daily|nightly|at\s+night|"
    r"in\s+the\s+morning|morning\s+and\s+night|for\s+(?:my|an?|the)\b)"
)
# the condition a medicine or a visit is for: "… for an underactive thyroid", "GP about my migraines"
_CONDITION_ALIASES = {
    "underactive thyroid": "hypothyroidism", "overactive thyroid": "hyperthyroidism",
    "blood pressure": "high blood pressure", "high cholesterol": "high cholesterol",
}  # fmt: skip
_CONDITION_OR_ALIAS = _alternation(set(HEALTH_CONDITIONS) | set(_CONDITION_ALIASES))
_FOR_CONDITION = _re(rf"\b(?:for|about|treating|treats)\s+(?:my|an?|the)\s+(?P<v>{_CONDITION_OR_ALIAS})\b")
_CARE_VISIT = _re(
    r"^(?:(?:my|a|the)\s+)?(?:GP|doctor|doctor's|dr|consultant|specialist|neurologist|physio|physiotherapy|hospital|clinic)\b"
    r"(?:\s+(?:appointment|appt|visit|session|sessions|check-?up))?"
)
_TREATED_PART = _re(
    rf"^(?:(?:my|a|the)\s+)?(?:physio|physiotherapy|chiro|chiropractor|osteo|osteopath|sports\s+massage)\b[^.;!?]{{0,30}}?"
    rf"\bfor\s+my\s+(?P<v>(?:lower\s+|upper\s+|left\s+|right\s+|bad\s+)?(?:{_alternation(BODY_PARTS)}))\b"
)
_PESCATARIAN = _re(
    r"\bI\s+(?:\w+\s+)?eat\s+fish\b(?=[^.;!?]*\b(?:no|not|never)\s+(?:any\s+)?(?:meat|red\s+meat)\b)|"
    r"\b(?:no|not|never)\s+(?:any\s+)?meat\b[^.;!?]*\bI\s+(?:\w+\s+)?eat\s+fish\b|"
    r"\b(?:vegan|vegetarian|veggie)\b[^.;!?]*\b(?:but|now|these\s+days)\b[^.;!?]*\bI\s+(?:\w+\s+)?eat\s+fish\b"
)
_DIET_CHANGE = _re(
    rf"\bI\s+(?:have\s+)?(?:just\s+)?(?:went|gone|turned|became|become|switched\s+to|converted\s+to)\s+(?:fully\s+|full\s+)?(?P<v>{_alternation(DIETS)})\b"
)
_CUT_OUT = _re(
    r"(?:^|\bI\s+)(?:have\s+)?(?:just\s+)?(?:quit|cut\s+out|gave\s+up|given\s+up|stopped\s+eating|dropped|ditched)\s+(?P<v>dairy|gluten|meat)\b"
)
_CUT_DIET = {"dairy": "dairy-free", "gluten": "gluten-free", "meat": "vegetarian"}
_RELIGION_FRAMES = [
    _re(
        rf"\bas\s+(?:a|an)\s+(?:(?:devout|practicing|practising|observant|proud|good)\s+)?(?P<v>{_alternation(RELIGIONS)})\b(?=[^.;!?]*\bI\b)"
    ),
    _re(
        rf"(?:^|[,;]\s*)(?<!ex-)(?:an?\s+)?(?P<v>{_alternation(RELIGIONS)})\s+(?:these\s+days|now|myself|nowadays)\b"
    ),
]
_RAMADAN = _re(
    r"(?:^|\bI\s+am\s+)(?:\w+\s+)?(?:fasting|observing)\s+(?:for\s+|during\s+)?(?:Ramadan|Ramzan)\b"
)
_PARTY = _alternation(POLITICS)
_POLITICS_FRAMES = [
    _re(
        rf"(?:^|\bI\s+am\s+(?:a\s+|an\s+)?)(?:(?:proud|paid-up|card-carrying|lifelong)\s+)?(?P<v>{_PARTY})\s+(?:party\s+)?(?:member|voter|supporter|activist)\b"
    ),
    _re(rf"\bI\s+am\s+(?:a\s+)?member\s+of\s+the\s+(?P<v>{_PARTY})(?:\s+party)?\b"),
    _re(rf"(?:^|[,;]\s*|\bI\s+am\s+)(?:now\s+)?voting\s+(?P<v>{_PARTY})\b"),
]
_INCOME_MORE = [
    _re(
        r"\bI\s+(?:make|earn|take\s+home|get\s+paid|charge|bill)\s+(?:about\s+|around\s+|roughly\s+|like\s+|almost\s+|nearly\s+|over\s+|under\s+)?"
        r"(?P<v>[$€£]?\s?\d[\d,.]*\s?(?:k|grand|thousand)(?:\s*(?:dollars|euros|pounds))?|[$€£]\s?\d[\d,.]*)"
        r"(?:\s+(?:before|after)\s+tax|\s+gross|\s+net|\s+(?P<per>(?:a|per|an)\s+(?:year|month|hour|day|week)))?"
    ),
    _re(
        r"^(?:I\s+am\s+)?(?:now\s+)?on\s+(?:about\s+|around\s+|roughly\s+|like\s+|almost\s+|nearly\s+|just\s+over\s+|just\s+under\s+)?"
        r"(?P<v>[$€£]?\d{2,3}(?:,\d{3}|k))\b(?!\s*(?:steps|calories|followers|words))"
        r"(?:\s+(?P<per>(?:a|per|an)\s+(?:year|month|hour|day|week)))?"
    ),
]
_CONTACT = [
    ("email", _re(r"\b(?:e-?mail|reach|contact)\s+me\s+(?:at|on)\s+(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)")),
    (
        "email",
        _re(
            r"\bmy\s+(?:new\s+|personal\s+|work\s+)?e-?mail(?:\s+address)?(?:'s|\s+is)\s+(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
        ),
    ),
    (
        "phone",
        _re(
            r"\bmy\s+(?:new\s+)?(?:phone\s+|cell\s+|mobile\s+)?(?:number|no\.?|num)(?:'s|\s+is)\s+(?P<v>\+?\d[\d\s().-]{6,}\d)"
        ),
    ),
    ("phone", _re(r"\b(?:call|text|ring)\s+me\s+(?:at|on)\s+(?P<v>\+?\d[\d\s().-]{6,}\d)")),
]
_MONTH_ABBR = {
    "jan": "January", "feb": "February", "mar": "March", "apr": "April", "jun": "June", "jul": "July",
    "aug": "August", "sep": "September", "sept": "September", "oct": "October", "nov": "November", "dec": "December",
}  # fmt: skip
_MONTH_ANY = rf"(?:{_MONTHS}|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_BIRTHDAY_MORE = _re(
    rf"\bmy\s+(?:birthday|bday|b-day|birth\s+day)(?:'s|\s+is)\s+(?:on\s+)?(?:the\s+)?(?P<v>{_MONTH_ANY}\s+\d{{1,2}}(?:st|nd|rd|th)?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_ANY})(?![a-z])"
)
_OBSESSED = _re(
    r"\bI\s+(?:am\s+)?(?:\w+\s+)?(?:obsessed\s+with|hooked\s+on|addicted\s+to)\s+(?P<v>[^,.;!?()]+)"
)


def birthday_value(value: str) -> str:
    """One form for a birthday however it was written: "the 9th of april", "9 Apr", "April 9th"
    → "April 9"."""
    value = _full_months(value)
    if m := re.match(r"^(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>[A-Za-z]+)$", value.strip()):
        return f"{m['m'].capitalize()} {int(m['d'])}"
    if m := re.match(r"^(?P<m>[A-Za-z]+)\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?$", value.strip()):
        return f"{m['m'].capitalize()} {int(m['d'])}"
    return value


def _full_months(value: str) -> str:
    return re.sub(
        r"\b([A-Za-z]{3,4})\.?(?=\s|$)",
        lambda m: _MONTH_ABBR.get(m[1].lower(), m[1]),
        value,
    )


def _pet_value(name: str, species: str) -> str:
    species, name = species.lower(), re.sub(r"['’]s$", "", name)
    return f"{name} ({PET_KIND.get(species, species.split()[-1])})"


def clause_people(s: Sentence, ctx: Context) -> Iterator[Found]:
    if m := _PRONOUNS_BARE.match(s.text):
        yield make_fact("pronouns", m["v"].lower(), confidence=ctx.confidence)
    broke_up = _BREAKUP.search(s.text) or re.search(r"\bex[- ]", s.text, I)
    if not broke_up:
        for pattern in _PARTNER_FRAMES:
            if (
                (m := pattern.search(s.text))
                and _person(m["v"])
                and not negated_before(s.text, m.start() + 2)
            ):
                yield make_fact(
                    "partner", _person(m["v"]) or m["v"], confidence=ctx.confidence, keywords=["partner"]
                )
                break
        else:
            if m := _PARTNER_ROLE.search(s.text):
                rel = re.sub(r"\s+", " ", (m["rel"] or m["rel2"]).lower())
                yield make_fact(
                    "partner", _ROLE_WORD.get(rel, rel), confidence=ctx.confidence, keywords=["partner"]
                )
    children: list[str] = []
    for m in _KIDS_LIST.finditer(s.text):
        children += [n["v"] for n in _KID_NAME_AGE.finditer(m["rest"]) if _person(n["v"])]
        if not children and (listed := _KID_NAMES.match(m["rest"])):
            # "two kids, Ana and Rui": the names listed right after the count
            children += [n for n in _LIST_ITEMS.split(listed["names"]) if _person(n)]
    if not children and not _CHILD_NAMED.search(s.text):
        children += [
            m["noun"].lower() for m in _MY_CHILD.finditer(s.text) if not negated_before(s.text, m.start())
        ]
    for m in _PARENT_OF.finditer(s.text):
        children.append(str(_NUMBERS.get(m["n"].lower(), m["n"])))
    if not children and (m := _ME_AND_KIDS.search(s.text)):
        children.append((m["v"] or m["w"]).lower())
    if children:
        yield make_fact("children", ", ".join(dict.fromkeys(children)), confidence=ctx.confidence)
    if _PET_DEATH.search(s.text):
        return
    pets: list[str] = []
    for m in _PET_THEN_NAME.finditer(s.text):
        if re.match(r"\s*,?\s*(?:named|called)\b", m["rest"], I):
            continue  # "a kitten named Pixel": family() reads that one
        names = [n for n in re.findall(r"(?-i:\b[A-Z][a-zà-ÿ'-]+)", m["rest"]) if _person(n)]
        named = _THEIR_NAME.search(m["rest"])
        if named and _person(named["v"]):
            names = [named["v"]]
        elif not (
            (m["plural"] or m["plural_species"])
            and re.search(r"^[^,]*,\s*(?-i:[A-Z])\w+\s+and\s+(?-i:[A-Z])", m["rest"])
        ):
            names = []
        pets += [_pet_value(n, m["species"] or m["plural_species"]) for n in names[:4]]
    if m := _NAME_MY_PET.match(s.text):
        if _person(m["v"]):
            pets.append(_pet_value(m["v"], m["species"]))
    if pets:
        yield make_fact("pets", ", ".join(dict.fromkeys(pets)), confidence=ctx.confidence)


def clause_health(s: Sentence, ctx: Context) -> Iterator[Found]:
    conditions: list[str] = []
    for pattern in _HEALTH_FRAMES:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2):
                conditions.append(m["v"])
    pregnant = _PREGNANT.search(s.text)
    if pregnant and not negated_before(s.text, pregnant.start() + 2):
        conditions.append("pregnancy")
    for m in _HEALTH_ADJ_BARE.finditer(s.text):
        condition = HEALTH_ADJECTIVES[m["v"].lower()]
        conditions.append(f"{m['type'].lower()} {condition}" if m["type"] else condition)
    for m in _INJURY.finditer(s.text):
        verb = m["verb"].lower()
        adjective = _INJURED.get(verb, verb)
        conditions.append(f"{adjective} {m['v'].lower()}")
    lead = _MEDICATION_LEAD.search(s.text)
    lead_drug = lead and (lead["v"].lower() in MEDICATIONS or lead["v"].lower().endswith(MEDICATION_SUFFIXES))
    if lead_drug or _CARE_VISIT.match(s.text) or _MEDICATION_ME.search(s.text) or _MEDICATION.search(s.text):
        conditions += [
            _CONDITION_ALIASES.get(m["v"].lower(), m["v"].lower())
            for m in _FOR_CONDITION.finditer(s.text)
            if not re.search(r"\b(?:his|her|their|\w+'s)\s*$", s.text[: m.start()])
        ]
    for m in [m for m in [_TREATED_PART.match(s.text)] if m] + list(_BAD_PART.finditer(s.text)):
        conditions.append(f"{m['v'].lower().replace('bad ', '')} pain")
    if conditions:
        yield make_fact("health_conditions", ", ".join(dict.fromkeys(conditions)), confidence=ctx.confidence)
    if lead and lead_drug:
        yield make_fact("medications", lead["v"].lower(), confidence=ctx.confidence)
    if _PESCATARIAN.search(s.text):
        yield make_fact("diet", "pescatarian", confidence=min(ctx.confidence, 0.8))
    medications = [
        v.lower()
        for m in _MEDICATION_ME.finditer(s.text)
        if (v := m["v"] or m["w"])
        and (v.lower() in MEDICATIONS or v.lower().endswith(MEDICATION_SUFFIXES))
        and not negated_before(s.text, m.start())
    ]
    if medications:
        yield make_fact("medications", ", ".join(dict.fromkeys(medications)), confidence=ctx.confidence)
    for m in _DIET_CHANGE.finditer(s.text):
        if not negated_before(s.text, m.start() + 2):
            yield make_fact("diet", DIETS[m["v"].lower()], confidence=ctx.confidence)
    for m in _CUT_OUT.finditer(s.text):
        if not negated_before(s.text, m.start() + 2):
            yield make_fact("diet", _CUT_DIET[m["v"].lower()], confidence=min(ctx.confidence, 0.8))


def clause_beliefs_money_contact(s: Sentence, ctx: Context) -> Iterator[Found]:
    for m in (m for pattern in _RELIGION_FRAMES for m in pattern.finditer(s.text)):
        if not negated_before(s.text, m.start() + 2):
            yield make_fact("religion", RELIGIONS[m["v"].lower()], confidence=ctx.confidence)
    if _RAMADAN.search(s.text):
        yield make_fact("religion", "Muslim", confidence=min(ctx.confidence, 0.7))
    for m in (m for pattern in _POLITICS_FRAMES for m in pattern.finditer(s.text)):
        if not negated_before(s.text, m.start() + 2):
            yield make_fact(
                "politics", POLITICS[re.sub(r"\s+", " ", m["v"].lower())], confidence=ctx.confidence
            )
    for pattern in _INCOME_MORE:
        for m in pattern.finditer(s.text):
            value = m["v"].strip()
            if m.groupdict().get("per"):
                value = f"{value} {m['per']}"
            yield make_fact("income", value, confidence=ctx.confidence)
    for key, pattern in _CONTACT:
        for m in pattern.finditer(s.text):
            yield make_fact(key, m["v"].strip(), confidence=ctx.confidence)
    for m in _BIRTHDAY_MORE.finditer(s.text):
        yield make_fact("birthday", birthday_value(m["v"]), confidence=ctx.confidence)
    if not s.sarcastic:
        for m in _OBSESSED.finditer(s.text):
            if not negated_before(s.text, m.start() + 2):
                for topic in _objects(m["v"]):
                    yield _preference(topic, True, ctx)


RULES = (
    answer_style,
    preferences,
    favorites,
    health,
    beliefs_money_contact,
    family,
    clause_people,
    clause_health,
    clause_beliefs_money_contact,
)
