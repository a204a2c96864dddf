"""Fact rules about who the speaker is: name, where they live, work, languages, tools.

Every rule reads one statement sentence whose contractions are expanded ("I am", "do not")
and yields FactOps or FactRetractions. Rules are anchored on the speaker ("I", "we", "my"),
so "my brother lives in Toronto" sets nothing about the speaker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from chat.reflection.capture import (
    ADV,
    FULL_NAME,
    NOT_ORGS,
    NOT_PLACES,
    ORG,
    PLACE,
    STOP,
    first_word_ok,
    make_fact,
)
from chat.reflection.lexicon import (
    AMBIGUOUS,
    DIETS,
    EDITORS,
    HEALTH_ADJECTIVES,
    HEALTH_CONDITIONS,
    JOB_FILLERS,
    JOB_HEADS,
    NATIONALITIES,
    NOT_NAMES,
    OPERATING_SYSTEMS,
    PET_SPECIES,
    PROGRAMMING_LANGUAGES,
    RELATION_WORDS,
    SPOKEN_LANGUAGES,
    TOOLS,
)
from chat.reflection.ops import FactOp, FactRetraction
from chat.reflection.text import Sentence, negated_before, title_if_lower
from memory.temporal import lemmas
from memory.text import FILLER_WORDS

Found = FactOp | FactRetraction
I = re.IGNORECASE  # noqa: E741


@dataclass(frozen=True)
class Context:
    all_lower: bool  # the whole message is lower case, so case says nothing
    greeted: bool  # the sentence opens the message or follows a greeting
    confidence: float


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, I)


# --- names ------------------------------------------------------------------------------------

_MY_NAME = _re(
    r"(?:\bmy\s+|^)(?:full\s+|first\s+|real\s+)?name\s+is\s+(?P<v>[A-Za-z][\w'-]*(?-i:(?:\s+[A-Z][\w'-]*){0,2}))"
)
_CALL_ME = _re(
    r"\b(?:call\s+me|(?:everyone|everybody|people|friends|most\s+people)\s+(?:(?:just\s+)?(?:call|calls)\s+me|"
    # "christened Margaret, though everyone says Peggy": a capitalised name only ("everyone says thanks")
    r"(?:just\s+)?(?:says?|uses?)(?=\s+(?-i:[A-Z])))|I\s+go\s+by|(?:everyone|people|friends)\s+(?:know|knows)\s+me\s+as)\s+(?P<v>[A-Za-z][\w'-]*)(?=\s*(?:[,.!;]|$|\s+(?:instead|please|for short|lol|though|nobody|not)\b))"
)
_HONORIFIC = r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?"
_NAME_HERE = _re(rf"^{_HONORIFIC}{FULL_NAME}\s+(?:here|btw|by\s+the\s+way)\b")
_I_AM_NAME = _re(
    rf"^(?:I\s+am|it\s+is|this\s+is)\s+{_HONORIFIC}{FULL_NAME}(?=\s*(?:[^\w\s'-]|$|\s+(?:here|again|and|by the way|btw|from)\b))"
)


_I_AM_LOWER_NAME = re.compile(
    r"^(?:I\s+am|it\s+is|this\s+is)\s+(?P<v>[a-zà-ÿ]+)(?=\s*(?:[,.!;]|$|\s+(?:here|from|and)\b))"
)


def _name_ok(value: str, ctx: Context) -> bool:
    first = value.split()[0]
    return first.lower() not in NOT_NAMES and (first[0].isupper() or ctx.all_lower)


def names(s: Sentence, ctx: Context) -> Iterator[Found]:
    for m in _MY_NAME.finditer(s.text):
        if m["v"].split()[0].lower() not in NOT_NAMES:
            yield make_fact("name", title_if_lower(m["v"]), confidence=ctx.confidence)
    for m in _CALL_ME.finditer(s.text):
        if not negated_before(s.text, m.start()) and _name_ok(m["v"], ctx):
            yield make_fact("preferred_name", title_if_lower(m["v"]), confidence=ctx.confidence)
    here = _NAME_HERE.search(s.text)
    if here and ctx.greeted and not _not_a_name(here["v"]):
        yield make_fact("name", here["v"], confidence=ctx.confidence)
    intro = _I_AM_NAME.search(s.text)
    if intro and not _not_a_name(intro["v"]) and (s.text.lower().startswith("i am") or ctx.greeted):
        yield make_fact("name", intro["v"], confidence=ctx.confidence)
    elif (
        ctx.all_lower
        and ctx.greeted
        and not re.search(r"(?-i:[A-Z])", s.raw)
        and (low := _I_AM_LOWER_NAME.match(s.text))
    ):
        # "hi im priya, 29, …": in a message without capitals a word no dictionary knows is a name
        word = low["v"]
        lexicon = {*DIETS, *NATIONALITIES, *HEALTH_ADJECTIVES, *HEALTH_CONDITIONS, *JOB_HEADS}
        if not _not_a_name(word) and not lemmas(word) and len(word) > 2 and word not in lexicon:
            yield make_fact("name", word.capitalize(), confidence=min(ctx.confidence, 0.8))


_GREETINGS = {
    "hi",
    "hello",
    "helo",
    "hallo",
    "hey",
    "hiya",
    "yo",
    "morning",
    "evening",
    "thanks",
    "cheers",
    "sorry",
}


def _not_a_name(value: str) -> bool:
    words = value.lower().split()
    if words and words[0] in _GREETINGS:
        return True
    return any(w in NOT_NAMES | FILLER_WORDS or w in PET_SPECIES or w in SPOKEN_LANGUAGES for w in words)


# --- places -----------------------------------------------------------------------------------

# a stay since a time of life or a year ("since uni", "since 2019") is a home or a job, like one counted in years
_SINCE_LONG_AGO = (
    r"since\s+(?:uni|university|college|school|I\s+was\s+(?:\d+|a\s+\w+|little|young|small)|childhood|birth|"
    r"(?:19|20)\d\d|the\s+(?:19|20)\d0s|forever)\b"
)
_LIVE = [
    _re(
        rf"\b(?:I|we)\s+(?:have\s+)?(?:been\s+)?{ADV}(?:live|living|reside|residing|(?<=have\s)lived)\s+"
        # "live out in Stockport", "living over in Cork", "live down in Devon"
        rf"(?:(?:out|over|up|down|back)\s+(?=in\b))?"
        rf"(?:with\s+(?:my|our|a|two|three)\s+[\w ]{{1,25}}?\s+)?(?:in|near|outside(?:\s+of)?|close\s+to)\s+{PLACE}"
    ),
    _re(rf"\b(?:I|we)\s+(?:am|are)\s+{ADV}(?:living|based|located|settled)\s+(?:in|out\s+of)\s+{PLACE}"),
    _re(rf"\bI\s+am\s+(?:a|an)\s+[\w -]{{2,40}}?\s+based\s+(?:in|out\s+of)\s+{PLACE}"),
    _re(rf"\bI\s+am\s+(?:still|currently)\s+in\s+(?-i:(?=[A-Z])){PLACE}"),
    _re(
        rf"\b(?:I|we)\s+{ADV}live\s+in\s+(?:a|an|the|my|our)\s+(?:[\w-]+\s+){{0,2}}?(?:flat|apartment|house|place|"
        rf"studio|condo|loft|cottage|town|village|suburb|neighbou?rhood)\s+(?:in|near|outside)\s+{PLACE}"
    ),
    _re(rf"\b(?:I|we)\s+(?:have\s+)?{ADV}(?:moved|relocated)\s+(?:here\s+|back\s+)?to\s+{PLACE}"),
    # "been in Leeds six years now": a stay counted in years or months is where one lives (a week is a visit)
    _re(
        rf"\b(?:I|we)\s+have\s+{ADV}been\s+(?:living\s+|based\s+)?in\s+(?-i:(?=[A-Z])){PLACE}\s+(?:(?:for\s+)?"
        r"(?:about\s+|almost\s+|nearly\s+|over\s+|like\s+)?(?:\d+|a|an|one|two|three|four|five|six|seven|eight|"
        rf"nine|ten|a\s+few|a\s+couple\s+of|many)\s+(?:years?|yrs|months)\b|{_SINCE_LONG_AGO})"
    ),
]
# "I'm in Leeds now", "we found a place in Ghent", "bought a house outside Porto"
# "moved from Pisa to Turin": the second town is home, the first no longer
# "I call Nairobi home", "calling Lisbon home these days", "settled into our new flat in Bergen"
_HOME_FRAMES = [
    _re(
        r"(?:^|\b(?:I|we)\s+(?:am\s+|are\s+|now\s+)?)(?:now\s+|currently\s+)?(?:call|calling)\s+(?P<v>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*){0,2})\s+home\b"
    ),
    _re(
        rf"(?:^|\b(?:I|we)\s+(?:have\s+)?(?:just\s+|finally\s+)?)(?:settled|settling|moved|moving)\s+into\s+(?:my|our)\s+(?:new\s+)?"
        rf"(?:flat|apartment|house|place|home|studio|condo)\s+in\s+(?-i:(?=[A-Z])){PLACE}"
    ),
]
_FROM_TO = _re(
    rf"\b(?:I|we)\s+(?:have\s+)?{ADV}(?:moved|relocated)\s+(?:back\s+)?(?:all\s+the\s+way\s+)?from\s+"
    rf"(?P<a>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)\s+(?:back\s+)?to\s+(?-i:(?=[A-Z])){PLACE}"
)
_NOW_IN = [
    # "renting in Exeter at the moment", "we rent a flat in Ghent"
    _re(
        rf"(?:^|\b(?:I|we)\s+(?:am\s+|are\s+)?|[,;]\s*)(?:now\s+|currently\s+)?(?:renting|rent)\s+(?:(?:a|an|our|my)\s+[\w ]{{1,20}}?\s+)?in\s+(?-i:(?=[A-Z])){PLACE}"
    ),
    # "I commute to London from Reading": home is where the commute starts
    _re(rf"\bI\s+{ADV}commute\s+(?:(?:in)?to\s+[\w ]{{1,30}}?\s+)?from\s+(?-i:(?=[A-Z])){PLACE}"),
    # "I teach in Cardiff", "I work nights in Leeds": where the job is, the speaker lives
    _re(
        rf"\bI\s+{ADV}(?:teach|work)\s+(?:(?!(?:at|for|with|back)\b)[\w-]+\s+){{0,3}}?in\s+(?-i:(?=[A-Z])){PLACE}"
    ),
    _re(rf"\bI\s+am\s+(?:now\s+)?in\s+(?-i:(?=[A-Z])){PLACE}\s*(?:now|these\s+days|myself)\b"),
    _re(
        rf"\b(?:I|we)\s+(?:have\s+)?(?:just\s+|finally\s+)?(?:got|found|bought|rented|signed\s+for|moved\s+into)\s+"
        rf"(?:a|an|my|our)\s+(?:new\s+|own\s+|little\s+|tiny\s+)?(?:flat|apartment|house|place|studio|condo|room)\s+"
        rf"(?:in|near|outside)\s+(?-i:(?=[A-Z])){PLACE}"
    ),
]
_HOMETOWN = [
    _re(rf"\bI\s+am\s+{ADV}from\s+{PLACE}"),
    _re(rf"\b(?:I|but|and)\s+(?:grew\s+up|was\s+born\s+and\s+raised|was\s+raised)\s+in\s+{PLACE}"),
    _re(rf"\bI\s+{ADV}come\s+from\s+{PLACE}"),
]
_BIRTHPLACE = [_re(rf"\bI\s+was\s+born\s+in\s+{PLACE}(?!\s+and\s+raised)")]
_NOT_LIVE = [
    _re(rf"\b(?:I|we)\s+(?:do\s+not|no\s+longer)\s+(?:live|reside)\s+in\s+{PLACE}"),
    _re(rf"\b(?:I|we)\s+used\s+to\s+live\s+in\s+{PLACE}"),
]
_ADDRESS = _re(
    r"\b(?:I|we)\s+(?:live|am\s+living|are\s+living)\s+at\s+(?P<v>\d+\w*\s+[^.;!?]+?)(?=\s+(?:now|with|since)\b|[.;!?]|$)"
)


_CALENDAR = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "spring", "summer", "autumn", "fall", "winter", "monday", "tuesday",
    "wednesday", "thursday", "friday", "saturday", "sunday",
}  # fmt: skip


# a direction or a kind of place is no town: "from up north", "out west", "the countryside"
_NOT_A_TOWN = re.compile(
    r"^(?:up|down|out|back|over)\s+(?:north|south|east|west|there|here|country)\b|^(?:the\s+)?(?:north|south|east|west|"
    r"countryside|country|city|coast|seaside|suburbs|sticks|middle\s+of\s+nowhere)$",
    I,
)


# "I did not land the role at Arup", "I never ended up working at IBM": the frame itself denies
_NEGATION_IN = re.compile(r"\b(?:not|never|no\s+longer|didn't|did\s+not|haven't|wasn't)\b", I)


def _place(value: str, ctx: Context) -> str | None:
    value = value.strip()
    if value.lower() in _CALENDAR or _NOT_A_TOWN.match(value):
        return None
    if not first_word_ok(value, NOT_PLACES) or any(
        w in TOOLS or w in PROGRAMMING_LANGUAGES or w in EDITORS or w in OPERATING_SYSTEMS
        for w in re.split(r"\s+(?:and|&)\s+|\s+", value.lower())
    ):
        return None
    return title_if_lower(value)


# "currently in Bristol for the weekend", "… until Sunday": a stay with an end is a visit, not home
_STAY_WITH_AN_END = _re(
    r"\s+(?:for\s+(?:the\s+|a\s+|a\s+few\s+|a\s+couple\s+of\s+|two\s+|\d+\s+)?(?:weekend|week|day|night|holidays?|"
    r"summer|month|conference|wedding|festival|work\s+trip|days|weeks|nights)s?|until|till|this\s+(?:week|weekend)|"
    r"over\s+the\s+(?:weekend|holidays?|summer))\b"
)


def places(s: Sentence, ctx: Context) -> Iterator[Found]:
    for pattern in _NOT_LIVE:
        for m in pattern.finditer(s.text):
            if place := _place(m["v"], ctx):
                yield FactRetraction("location", place)
    for key, patterns in (("location", _LIVE), ("birthplace", _BIRTHPLACE), ("hometown", _HOMETOWN)):
        for pattern in patterns:
            for m in pattern.finditer(s.text):
                if negated_before(s.text, m.start() + 2) or not (place := _place(m["v"], ctx)):
                    continue
                if key == "location" and _STAY_WITH_AN_END.match(s.text, m.end("v")):
                    continue
                yield make_fact(key, place, confidence=ctx.confidence)
    for m in _FROM_TO.finditer(s.text):
        if (
            not negated_before(s.text, m.start() + 2)
            and (place := _place(m["v"], ctx))
            and (old := _place(m["a"], ctx))
        ):
            yield make_fact("location", place, confidence=ctx.confidence)
            yield FactRetraction("location", old)
    for pattern in [_TITLE_IN_PLACE, *_NOW_IN, *_HOME_FRAMES]:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2) and (place := _place(m["v"], ctx)):
                yield make_fact("location", place, confidence=min(ctx.confidence, 0.8))
    for m in _ADDRESS.finditer(s.text):
        address = m["v"].strip(" ,")
        yield make_fact("address", address, confidence=ctx.confidence)
        city = address.rsplit(",", 1)[-1].strip() if "," in address else ""
        if city and city[0].isupper() and not re.search(r"\d", city):
            yield make_fact("location", city, confidence=ctx.confidence)


# --- work -------------------------------------------------------------------------------------

_HEADS = "|".join(sorted((re.escape(h) for h in JOB_HEADS), key=len, reverse=True))
# "I'm a vet in Tromsø": where someone introduces their job by its town alone, the
# town is where they live ("a data scientist at Spotify in Stockholm" names the office, not home).
_TITLE_IN_PLACE = _re(
    rf"\bI\s+(?:am\s+)?(?:{ADV}(?:work|working)\s+as\s+)?(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?(?:{_HEADS})"
    rf"\s+in\s+(?-i:(?=[A-Z])){PLACE}"
)
_TITLE = rf"(?P<t>(?:[\w-]+\s+){{0,3}}?(?:{_HEADS})(?:\s+(?:{_HEADS}))?)(?![\w-])"
_WORK = [
    _re(
        rf"\bI\s+(?:have\s+|am\s+)?(?:been\s+)?{ADV}(?:work|working)\s+(?:remotely\s+|remote\s+|from\s+home\s+|full[- ]time\s+|part[- ]time\s+)?"
        rf"(?:in\s+[a-z]+\s+)?(?:at|for)\s+{ORG}"
    ),
    # "loving the new job at Stripe", "my job at the Met is a lot"
    _re(
        rf"(?:^|\bI\b[^,.;!?]{{0,30}}?|^(?:loving|enjoying|starting|hating)\s+)\b(?:my|the)\s+(?:new\s+)?(?:job|role|position|internship)\s+(?:at|with)\s+(?-i:(?=[A-Z])){ORG}"
    ),
    _re(
        rf"\bI\s+(?:have\s+)?{ADV}(?:started|got|landed|accepted|took)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:job|position|role|gig|internship|offer)\s+(?:at|with)\s+{ORG}"
    ),
    _re(rf"\bI\s+(?:have\s+)?{ADV}(?:started|began|begun)\s+(?:working\s+)?at\s+(?-i:(?=[A-Z])){ORG}"),
    _re(rf"\bI\s+(?:have\s+)?{ADV}joined\s+(?-i:(?=[A-Z])){ORG}"),
    # "I teach at Hollybrook", "I lecture in law at Keele": the school is the employer
    _re(rf"\bI\s+{ADV}(?:teach|lecture|tutor)\s+(?:[\w-]+\s+){{0,3}}?at\s+(?-i:(?=(?:the\s+)?[A-Z])){ORG}"),
    # not a customer: "I'm with Octopus for energy", "with Three on a SIM-only deal"
    _re(
        rf"\bI\s+am\s+{ADV}(?:employed\s+by|with)\s+(?-i:(?=[A-Z])){ORG}(?!\s+(?:for|on)\s+(?:my|our|the|a|an|energy|gas|broadband|internet|insurance|phone|mobile)\b)"
    ),
    _re(rf"\bI\s+am\s+(?:still|currently)\s+at\s+(?-i:(?=[A-Z])){ORG}"),
    _re(rf"\bmy\s+(?:employer|company)\s+is\s+{ORG}"),
    # "work is at Arup", "my job's with the council"
    _re(
        rf"(?:^(?:I\s+)?|\bmy\s+)(?:work|job)(?:'s|\s+is)\s+(?:at|with|for)\s+(?=(?:the\s+)?(?-i:[A-Z])){ORG}"
    ),
    # "been at Arup six years": a stay counted in years is a job (a day "at Disneyland" is not)
    _re(
        rf"\bI\s+have\s+{ADV}been\s+(?:at|with)\s+(?=(?:the\s+)?(?-i:[A-Z])){ORG}\s+(?:(?:for\s+)?"
        r"(?:about\s+|almost\s+|nearly\s+|over\s+|like\s+)?(?:\d+|a|an|one|two|three|four|five|six|seven|eight|"
        rf"nine|ten|a\s+few|a\s+couple\s+of|many)\s+(?:years?|yrs|months)\b|{_SINCE_LONG_AGO})"
    ),
]
_TITLE_AT_ORG = [
    _re(rf"\bI\s+am\s+{ADV}(?:a|an|the)\s+{_TITLE}\s+(?:at|for|with)\s+{ORG}"),
    _re(
        rf"\bI\s+(?:am\s+|have\s+been\s+)?{ADV}(?:work|working)\s+as\s+(?:a|an|the)\s+{_TITLE}\s+(?:at|for|with)\s+{ORG}"
    ),
    # "I was taken on as a trainee chef at Nobu", "started as an intern with the BBC"
    _re(
        rf"\bI\s+(?:have\s+)?{ADV}(?:got\s+|was\s+|been\s+)?(?:hired|started|joined|employed|taken\s+on|brought\s+on)\s+"
        rf"as\s+(?:a|an|the)\s+{_TITLE}\s+(?:at|for|with)\s+{ORG}"
    ),
]
# Occupations the lexicon does not list, read only in frames that say "this is my job": "I
# work as a glazier", "I'm a civil servant at HMRC". The head is an agent noun by its ending
# ("-er", "-ist", "-man", "-ant" …) or one JOB_HEADS names; words that take those endings
# without being jobs ("a member at", "a patient at") are kept out.
_AGENT_ENDING = re.compile(r"(?:er|or|ist|ian|man|woman|person|ant|ent|ier|eer|ee|ess|smith|wright|ary)$")
_NOT_OCCUPATIONS = {
    "member", "customer", "client", "regular", "patient", "fan", "lover", "user", "subscriber",
    "volunteer", "resident", "tenant", "guest", "visitor", "parent", "mother", "father", "brother",
    "sister", "daughter", "partner", "neighbour", "neighbor", "stranger", "beginner", "believer",
    "supporter", "follower", "player", "gamer", "reader", "viewer", "listener", "smoker", "drinker",
    "eater", "sleeper", "worrier", "winner", "loser", "person", "woman", "man", "human", "team",
    "hobby", "joke", "favour", "favor", "one", "side", "passenger", "survivor", "sufferer", "veteran",
    "citizen", "immigrant", "foreigner", "local", "newcomer", "owner", "shareholder", "attendee",
    "nominee", "retiree", "trustee", "adult", "grandparent", "mum", "dad", "teenager", "other",
    "holder", "mentor",
}  # fmt: skip
_OPEN_TITLE = r"(?P<t>(?:[a-z][\w-]*\s+){0,2}?[a-z][a-z-]{2,})"
_OPEN_TITLE_FRAMES = [
    # "I'm a civil servant at HMRC", "I'm an HGV driver for Tesco"
    (
        _re(rf"\bI\s+am\s+{ADV}(?:a|an)\s+{_OPEN_TITLE}\s+(?:at|for|with)\s+(?-i:(?=(?:the\s+)?[A-Z])){ORG}"),
        True,
    ),
    # "I work as a glazier", "working as a civil servant in Leeds"
    (
        _re(
            rf"\bI\s+(?:am\s+|have\s+been\s+)?{ADV}(?:work|working)\s+as\s+(?:a|an)\s+{_OPEN_TITLE}"
            r"(?=\s*(?:[,.;!?]|$)|\s+(?:at|for|with|in|and|but|since|now|these)\b)"
        ),
        False,
    ),
]


def _occupation(words: str, agent: bool) -> str | None:
    """The title in an open frame's words, when their last word is a job: one JOB_HEADS lists,
    or (`agent`) any agent noun, else any noun lemminflect knows or a word it does not."""
    title = _title(words)
    if not title:
        return None
    head = title.split()[-1]
    if head in _NOT_OCCUPATIONS or any(w in _NOT_OCCUPATIONS or w in FILLER_WORDS for w in title.split()):
        return None
    if title in JOB_HEADS or head in JOB_HEADS:
        return title
    pos = lemmas(head)
    if agent:
        return title if _AGENT_ENDING.search(head) and (not pos or "NOUN" in pos) else None
    return title if not pos or "NOUN" in pos else None


_TITLES = [
    _re(rf"\bI\s+am\s+{ADV}(?:a|an|the)\s+{_TITLE}"),
    _re(rf"\bI\s+(?:{ADV})(?:work|working)\s+as\s+(?:a|an|the)?\s*{_TITLE}"),
    _re(
        rf"\b(?:job|position|role|work|working|worked|started|hired)\b[^.;!?]{{0,40}}?\bas\s+(?:a|an|the)\s+{_TITLE}"
    ),
    _re(
        rf"\bI\s+(?:have\s+)?(?:just\s+)?(?:got\s+|been\s+|was\s+)?(?:promoted|hired)\s+(?:to|as)\s+(?:a\s+|an\s+)?{_TITLE}"
    ),
    _re(rf"\bI\s+have\s+been\s+{ADV}(?:a|an)\s+{_TITLE}"),
]
_TEACH = _re(
    r"\bI\s+{ADV}teach\s+(?:(?:high|middle|primary|elementary|secondary|grad|graduate)\s+school\s+|college\s+|"
    r"university\s+|uni\s+|adult\s+|kids\s+|online\s+)?(?P<v>[A-Za-z]+)\b".replace("{ADV}", ADV)
)
_RUN_BUSINESS = _re(
    rf"\bI\s+{ADV}(?:run|own|founded|started|opened)\s+(?:a|an|my\s+own)\s+(?:(?:small|little|tiny|local|family)\s+)?"
    r"(?P<v>bakery|cafe|café|coffee\s+shop|shop|store|restaurant|bar|pub|business|company|startup|agency|studio|"
    r"farm|salon|gym|practice|clinic|consultancy|firm|bookshop|bookstore|brewery|food\s+truck)\b"
)
_NOT_WORK = [
    _re(rf"\bI\s+(?:do\s+not|no\s+longer)\s+work\s+(?:at|for)\s+{ORG}"),
    _re(rf"\bI\s+used\s+to\s+work\s+(?:at|for)\s+{ORG}"),
    _re(rf"\bI\s+(?:just\s+)?(?:left|quit)\s+(?-i:(?=[A-Z])){ORG}"),
]
_STUDENT = {"student", "phd student", "undergrad", "postdoc"}


def _studying(title: str) -> bool:
    """ "second year law student": a place of study, not a job."""
    return title.split()[-1] in ("student", "undergrad", "undergraduate")


# "a terrible cook" or "a hobby photographer" is not a job.
_NOT_IN_TITLES = {
    "of", "and", "to", "the", "a", "an", "with", "for", "in", "at", "my", "terrible", "awful", "decent",
    "amateur", "hobby", "hobbyist", "home", "bad", "good", "great", "average", "pretty", "really", "not",
    "better", "best", "worst", "fan",
}  # fmt: skip


def _org(value: str, ctx: Context) -> str | None:
    value = re.sub(r"^the\s+(?=[A-Z])", "", value.strip(), flags=I)
    if not first_word_ok(value, NOT_ORGS) or (value[0].islower() and not ctx.all_lower):
        return None
    return title_if_lower(value) if ctx.all_lower else value


def _title(value: str, job: bool = True) -> str | None:
    """The job title in `value`; None for a former one ("ex-nurse") and, when `job`, for a course of study."""
    words = value.lower().split()
    if words and re.match(r"^(?:former|ex-?|retired|previous)$", words[0]):
        return None
    while words and (words[0] in JOB_FILLERS or words[0].endswith("-based")):  # "a Leeds-based florist"
        words.pop(0)
    if not words or any(w in _NOT_IN_TITLES for w in words):
        return None
    title = " ".join(_SLANG_TITLES.get(w, w) for w in words)
    return None if job and _studying(title) else title


# trade nicknames: "a sparky by trade"
_SLANG_TITLES = {
    "sparky": "electrician",
    "sparkie": "electrician",
    "chippy": "carpenter",
    "brickie": "bricklayer",
}


def work(s: Sentence, ctx: Context) -> Iterator[Found]:
    for pattern in _NOT_WORK:
        for m in pattern.finditer(s.text):
            if org := _org(m["v"], ctx):
                yield FactRetraction("employer", org)
    for pattern in _TITLE_AT_ORG:
        for m in pattern.finditer(s.text):
            title, org = _title(m["t"], job=False), _org(m["v"], ctx)
            if title and org:
                if not _studying(title):
                    yield make_fact("job_title", title, confidence=ctx.confidence)
                yield make_fact(
                    "school" if title in _STUDENT or _studying(title) else "employer",
                    org,
                    confidence=ctx.confidence,
                )
    for pattern, at_org in _OPEN_TITLE_FRAMES:
        for m in pattern.finditer(s.text):
            if negated_before(s.text, m.start() + 2) or not (title := _occupation(m["t"], at_org)):
                continue
            org = _org(m["v"], ctx) if at_org else None
            if at_org and not org:
                continue
            yield make_fact("job_title", title, confidence=ctx.confidence)
            if org:
                yield make_fact("employer", org, confidence=ctx.confidence)
    not_yet = bool(_NOT_YET.search(s.text))
    for pattern in [] if not_yet else _WORK:
        for m in pattern.finditer(s.text):
            if (
                not negated_before(s.text, m.start() + 2)
                and not _NEGATION_IN.search(s.text, m.start(), m.start("v"))
                and (org := _org(m["v"], ctx))
            ):
                yield make_fact("employer", org, confidence=ctx.confidence)
    for pattern in [] if not_yet else _TITLES:
        for m in pattern.finditer(s.text):
            if (
                not negated_before(s.text, m.start() + 2)
                and not _of_activity(s.text, m.end("t"))
                and (title := _title(m["t"]))
            ):
                yield make_fact("job_title", title, confidence=ctx.confidence)
    for m in _TEACH.finditer(s.text):
        subject = m["v"].lower()
        if subject in (
            "year",
            "grade",
            "class",
            "reception",
            "kindergarten",
            "nursery",
            "form",
            "ks1",
            "ks2",
        ):
            subject = "school"  # "I teach year 4": a school teacher, the year is no subject
        if subject == "school" and not negated_before(s.text, m.start() + 2):
            yield make_fact("job_title", "teacher", confidence=ctx.confidence)
        elif subject not in FILLER_WORDS and not negated_before(s.text, m.start() + 2):
            yield make_fact(
                "job_title",
                f"{m['v'] if m['v'][0].isupper() else subject} teacher",
                confidence=ctx.confidence,
            )
    for m in _RUN_BUSINESS.finditer(s.text):
        if not negated_before(s.text, m.start() + 2):
            yield make_fact("job_title", f"{m['v'].lower()} owner", confidence=ctx.confidence)


# --- languages --------------------------------------------------------------------------------

_SPEAK = [
    _re(
        rf"\bI\s+{ADV}(?:speak|am\s+(?:\w+\s+)?(?:fluent|bilingual|trilingual|conversational|proficient)\s+in)\s+(?P<v>[^.;!?()]+)"
    ),
    _re(
        r"\bmy\s+(?:native|first|mother|main|home)\s+(?:language|tongue)\s+is\s+(?P<v>[^.;!?()]+?)(?=\s+but\b|$|[,.;!?()])"
    ),
    _re(r"\bI\s+am\s+(?:a\s+)?native\s+(?P<v>\w+)\s+speaker"),
    _re(r"\bI\s+am\s+(?:\w+\s+)?(?:bilingual|trilingual|multilingual)\s*(?::|-+|—|,)\s*(?P<v>[^.;!?()]+)"),
    # "native speaker of Thai", "grew up speaking Welsh", "I use German at home"
    _re(r"(?:^|\bI\s+am\s+(?:a\s+)?|\bas\s+a\s+)native\s+speaker\s+of\s+(?P<v>[^.;!?()]+)"),
    _re(
        r"\b(?:grew\s+up|was\s+raised)\s+(?:speaking|bilingual(?:\s+in|\s*[,:—-]|\s+with))\s*(?P<v>[^.;!?()]+)"
    ),
    _re(
        r"(?:^|\bI\s+(?:am\s+)?)(?:{ADV})(?:use|speak|using|speaking)\s+(?P<v>(?-i:[A-Z])[a-z]+)\s+(?:at\s+work|at\s+home|every\s+day|daily|with)".replace(
            "{ADV}", ADV
        )
    ),
    # "Greek is my first language", "my Italian is rusty"
    _re(r"(?:^|,\s*)(?P<v>[A-Za-z]+)\s+is\s+my\s+(?:native\s+language|mother\s+tongue|first\s+language)"),
    _re(
        r"\bmy\s+(?P<v>[A-Za-z]+)\s+is\s+(?:\w+\s+)?(?:decent|good|ok|okay|fine|fluent|solid|conversational|"
        r"passable|rusty|basic|not\s+bad|pretty\s+good|native)\b"
    ),
]
_LEARN = _re(
    r"(?:^(?:have\s+)?(?:been\s+)?(?:\w+ly\s+)?|\b(?:I|we)\b[^,.;!?]{0,25}?)\b(?:learning|studying|learn|study|practicing|practising|"
    r"brushing\s+up\s+on|taking|get\s+better\s+at|getting\s+better\s+at|improve\s+my|improving\s+my|"
    r"work\s+on\s+my|working\s+on\s+my|pick\s+up|picking\s+up)\s+(?:some\s+)?(?!(?:an?|the|my)\s)(?P<v>[A-Za-z]+)\b(?:\s+(?:lessons|classes))?|"
    # a course named by its language: "doing an Italian course", "signed up for a Greek class"
    r"\b(?:doing|taking|started|starting|signed\s+up\s+for|enrolled\s+(?:in|on))\s+(?:an?|my|some)\s+(?:\w+\s+)??"
    r"(?P<c>[A-Z][a-z]+)(?:\s+(?:evening|night|online|conversation|beginners?))?\s+(?:course|class|classes|lessons)\b"
)
_LIST_END = re.compile(r"\b(?:but|because|I|we|which|so|although|though|at|every|with)\b|,\s*and\b", I)


def _languages_in(text: str) -> list[str]:
    text = text[: m.start()] if (m := _LIST_END.search(text)) else text
    found = [
        SPOKEN_LANGUAGES[w.lower()] for w in re.findall(r"[A-Za-z]+", text) if w.lower() in SPOKEN_LANGUAGES
    ]
    return list(dict.fromkeys(found))


def languages(s: Sentence, ctx: Context) -> Iterator[Found]:
    spoken: list[str] = []
    for pattern in _SPEAK:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2):
                spoken += _languages_in(m["v"])
    if spoken:
        yield make_fact("languages", ", ".join(dict.fromkeys(spoken)), confidence=ctx.confidence)
    for m in _LEARN.finditer(s.text):
        group = "v" if m["v"] else "c"
        word = m[group].lower()
        if word in SPOKEN_LANGUAGES and not negated_before(s.text, m.start(group)):
            yield make_fact("languages.learning", SPOKEN_LANGUAGES[word], confidence=ctx.confidence)


# --- tools, OS, editor, programming languages --------------------------------------------------

_TECH: dict[str, tuple[str, str]] = {}
for _key, _names in (
    ("tools", TOOLS),
    ("programming_languages", PROGRAMMING_LANGUAGES),
    ("editor", EDITORS),
    ("os", OPERATING_SYSTEMS),
):
    for _lower, _canonical in _names.items():
        _TECH[_lower] = (_key, _canonical)
_TECH_RE = re.compile(
    r"(?<![\w.])(" + "|".join(re.escape(n) for n in sorted(_TECH, key=len, reverse=True)) + r")(?![\w+#])", I
)
_USE = _re(
    rf"(?:\b(?:I|we)\s+(?:am\s+|are\s+|have\s+|had\s+)?{ADV}(?:use|using|run|running|on|code\s+in|"
    rf"coding\s+in|program\s+in|write|writing|work\s+in|switched(?:\s+over)?(?:\s+to)?|moved\s+to|"
    rf"daily[- ]drive|rely\s+on|all\s+in\s+on)|"
    rf"^{ADV}(?:using|writing|running|on))\s+(?P<v>[^.;!?]+)"
)
_SCOPE_END = re.compile(
    r"\b(?:but|because|although|though|over|than|instead\s+of|rather\s+than|he|she|they|my\s+(?:"
    + "|".join(sorted(RELATION_WORDS))
    + r"))\b",
    I,
)
_MY_TOOL = _re(
    r"\bmy\s+(?:(?:go-to|go\s+to|favou?rite|main|daily|preferred|usual)\s+)?(?P<k>editor|ide|os|operating\s+system|"
    r"shell|terminal)\s+(?:of\s+choice\s+)?is\s+(?P<v>[^.,;!?]+)"
)
# what one is known by: "I'm a Windows guy", "a Python person", "I'm a daily Emacs user"
_TECH_PERSON = _re(
    r"\bI\s+am\s+(?:a|an)\s+(?:(?:daily|die-?hard|lifelong|big|huge|total|proper|heavy|longtime|long-?time)\s+)?"
    r"(?P<v>[\w.+#-]+(?:\s+[\w.+#-]+)?)\s+(?:person|guy|girl|gal|user|dev|developer|head|nerd|fanboy|fangirl|shop)\b"
)
_ON_MY = _re(
    r"\bon\s+(?:my|a|an)\s+(?P<v>mac(?:book(?:\s+pro|\s+air)?)?|windows(?:\s+(?:laptop|pc|machine|box))?|linux(?:\s+(?:laptop|box|machine))?|chromebook)\b"
)


def _tech_items(text: str, ctx: Context) -> Iterator[tuple[str, str]]:
    text = re.sub(r"\bfrom\s+[\w .+-]+?\s+to\s+", "", text, flags=I)
    for m in _TECH_RE.finditer(text):
        word = m.group(1)
        if word.lower() in AMBIGUOUS and word.islower() and not ctx.all_lower:
            continue
        yield _TECH[word.lower()]


def tools(s: Sentence, ctx: Context) -> Iterator[Found]:
    found: dict[str, list[str]] = {}
    for m in _USE.finditer(s.text):
        if negated_before(s.text, m.start("v")) or re.search(
            r"\b(?:stopped|quit|used\s+to)\s*$", s.text[: m.start("v")]
        ):
            continue
        scope = m["v"]
        scope = scope[: end.start()] if (end := _SCOPE_END.search(scope)) else scope
        for key, canonical in _tech_items(scope, ctx):
            found.setdefault(key, []).append(canonical)
    for m in _ON_MY.finditer(s.text):
        found.setdefault("os", []).append(OPERATING_SYSTEMS[m["v"].split()[0].lower()])
    for m in [*_MY_TOOL.finditer(s.text), *_TECH_PERSON.finditer(s.text)]:
        for key, canonical in _tech_items(m["v"], ctx):
            found.setdefault(key, []).append(canonical)
    for key, items in found.items():
        items = list(dict.fromkeys(items))
        if key in ("os", "editor"):
            items = items[-1:]
        yield make_fact(key, ", ".join(items), confidence=ctx.confidence)


# --- clause-level reading: self-introductions, subjectless clauses, "my X is Y" frames -------------
#
# A chat introduction is a list of fragments: a name, a title, an employer, a town
# ("Sam here, welder for Arup, Leeds-based"). Each fragment is read on its own; a fragment that is
# a bare capitalised word after the title is the town. Other frames here are the ones people use
# without a subject or a verb of their own ("raised in Lyon", "Gdansk is home now").

_INTRO_HEAD = _re(
    rf"^(?:(?:hi|hey|hello|hiya|yo|ok\s+so)\W+)?(?:(?:a\s+bit\s+|quick\s+bit\s+|some\s+stuff\s+)?about\s+me\s*:\s*|"
    rf"(?:I\s+am|it\s+is|this\s+is|my\s+name\s+is)\s+)?{_HONORIFIC}{FULL_NAME}(?:\s+here)?(?=\s*(?:[^\w\s'-]|$))"
)
_FRAGMENT_SPLIT = re.compile(
    r"\s*(?:,|;|\s-+\s|\s—\s|\s\+\s)\s*|\s+(?=[^\w\s,'.&@-]+\s)|(?<=[^\w\s,'.&@-])\s+"
)
_FRAGMENT_TITLE = _re(
    # "nurse here", as "Marcus here" introduces a name
    rf"^(?:I\s+am\s+)?(?:a\s+|an\s+)?(?P<t>(?:[\w-]+\s+){{0,3}}?(?:{_HEADS}))(?:\s+(?:at|@|for|with)\s+{ORG}|\s+here)?\s*$"
)
_FRAGMENT_TOWN = re.compile(r"^(?P<v>[A-Z][a-zà-ÿ'-]+(?:\s+[A-Z][a-zà-ÿ'-]+)?)$")
_FRAGMENT_BASED = _re(r"^(?:I\s+am\s+)?(?P<v>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)-based$")
_FRAGMENT_LIVE = _re(rf"^(?:I\s+)?(?:live|living|based)\s+in\s+{PLACE}")
_BASED = _re(
    r"(?:^|\bI\s+am\s+(?:a\s+|an\s+)?|,\s*)(?P<v>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)-based\b"
)


def _fragments(text: str) -> list[str]:
    fragments = (f.strip(" .!") for f in _FRAGMENT_SPLIT.split(text) if f)
    return [f for f in fragments if re.search(r"\w", f)]


def introductions(s: Sentence, ctx: Context) -> Iterator[Found]:
    head = _INTRO_HEAD.match(s.text)
    fragments = _fragments(s.text[head.end() :] if head else s.text)
    if head:
        if not ctx.greeted and not re.match(r"^(?:\W*\w+\W+)?about\s+me", s.text, I):
            return
        cued = head.group(0).lower().split()[0] in ("i", "it", "this", "my") or re.search(
            r"here$|:", head.group(0)
        )
        # an uncued "Ana, 34, nurse" needs an age or a job next to be an introduction ("Ana, our dog, …" is not)
        if not cued and not (
            fragments and (_FRAGMENT_TITLE.match(fragments[0]) or re.match(r"^\d{1,2}$", fragments[0]))
        ):
            return
        if not _not_a_name(head["v"]):
            yield make_fact("name", head["v"], confidence=ctx.confidence)
    elif not (ctx.greeted and fragments and _FRAGMENT_TITLE.match(fragments[0])):
        return
    titled = False
    for fragment in fragments:
        if m := _FRAGMENT_TITLE.match(fragment):
            if title := _title(m["t"], job=False):
                titled = True
                if not _studying(title):
                    yield make_fact("job_title", title, confidence=ctx.confidence)
                if m["v"] and (org := _org(m["v"], ctx)):
                    yield make_fact(
                        "school" if title in _STUDENT or _studying(title) else "employer",
                        org,
                        confidence=ctx.confidence,
                    )
        elif (m := _FRAGMENT_BASED.match(fragment) or _FRAGMENT_LIVE.match(fragment)) and (
            place := _place(m["v"], ctx)
        ):
            yield make_fact("location", place, confidence=ctx.confidence)
        elif titled and (m := _FRAGMENT_TOWN.match(fragment)) and not _not_a_name(m["v"]):
            yield make_fact("location", m["v"], confidence=min(ctx.confidence, 0.8))
            titled = False


_PLACE_FRAMES = [
    ("birthplace", _re(rf"(?:^|[,;]\s*|\band\s+|\bI\s+)born\s+in\s+{PLACE}(?!\s+and\s+raised)")),
    ("hometown", _re(rf"(?:^|[,;]\s*|\band\s+|\bI\s+)(?:born\s+and\s+)?(?:raised|grew\s+up)\s+in\s+{PLACE}")),
    ("hometown", _re(rf"(?:^|\bI\s+am\s+|[,;]\s*)back\s+home\s+in\s+{PLACE}")),
    (
        "location",
        _re(
            r"(?:^|[,;-]\s*)(?P<v>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)\s+is\s+(?:my\s+)?home\s+(?:now|these\s+days)\b"
        ),
    ),
    (
        "location",
        _re(
            r"(?:^|[,;-]\s*)home\s+is\s+(?:now\s+)?(?P<v>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)"
            r"(?=\s+(?:now|these\s+days|but|though|while|and\s+(?:the|my|work))\b|\s*(?:[,;.!]|$))"
        ),
    ),
    ("location", _BASED),
    # "welder, self-employed, out of Hull"
    (
        "location",
        _re(
            r"(?:^|[,;]\s*)(?:based\s+|working\s+|operating\s+)?out\s+of\s+(?P<v>(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?)(?=\s*(?:[,;.!]|$))"
        ),
    ),
]
_POSTCODE = re.compile(
    r"\s+(?:[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}|\d{4,5}(?:-\d{4})?|[A-Z]\d[A-Z]\s*\d[A-Z]\d)$"
)
_ADDRESS_FRAMES = [
    _re(
        r"\bmy\s+(?:new\s+|home\s+|current\s+|postal\s+)?address(?:\s+is|'s)\s+(?P<v>[^;!?]+?)(?=\s+-+\s+|\s+(?:if|in\s+case|so|for)\b|[;!?]|\.\s|\.?$)"
    ),
    _re(
        r"\b(?:I\s+am|we\s+are)\s+(?:now\s+)?at\s+(?P<v>(?:(?:flat|apt|apartment|unit|suite)\s*\d+\w*,?\s+)?\d+\w*\s+[^;!?]+?)"
        r"(?=\s+-+\s+|\s+(?:if|in\s+case|so|for|now)\b|[;!?]|\.\s|\.?$)"
    ),
]


def _address_city(address: str) -> str | None:
    last = address.rsplit(",", 1)[-1].strip() if "," in address else ""
    last = _POSTCODE.sub("", last).strip()
    if last and last[0].isupper() and not re.search(r"\d", last) and len(last.split()) <= 3:
        return last
    return None


def clause_places(s: Sentence, ctx: Context) -> Iterator[Found]:
    for key, pattern in _PLACE_FRAMES:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2) and (place := _place(m["v"], ctx)):
                yield make_fact(key, place, confidence=ctx.confidence)
    for pattern in _ADDRESS_FRAMES:
        for m in pattern.finditer(s.text):
            address = m["v"].strip(" ,")
            if not re.search(r"\d", address):
                continue
            yield make_fact("address", address, confidence=ctx.confidence)
            if city := _address_city(address):
                yield make_fact("location", city, confidence=ctx.confidence)


_ORG_CAP = r"(?-i:(?:St\.?\s+)?[A-Z][\w&'-]*(?:\.[A-Za-z]+)*(?:\s+(?:of\s+)?[A-Z][\w&'-]*){0,3})"
_SCHOOL_WORD = r"(?:\s+(?:uni|university|college|school|polytechnic))?"
_SCHOOL = [
    _re(
        rf"\b(?:my|a|the)\s+(?:\w+\s+)?(?:masters|master's|degree|phd|doctorate|bachelors|bachelor's|ba|bsc|msc|mba|"
        rf"undergrad|dissertation|thesis|course|studies)\s+(?:in\s+[\w ]{{1,30}}?\s+)?at\s+(?P<v>{_ORG_CAP}{_SCHOOL_WORD})"
    ),
    _re(
        rf"(?:^|\bI\s+am\s+(?:a\s+|in\s+(?:my\s+)?)?)\d(?:st|nd|rd|th)\s+year\s+(?:[\w-]+\s+){{0,4}}?at\s+(?P<v>{_ORG_CAP}{_SCHOOL_WORD})"
    ),
    _re(rf"(?:^|\bI\s+(?:have\s+)?(?:just\s+)?)graduated\s+from\s+(?P<v>{_ORG_CAP}{_SCHOOL_WORD})"),
    # "I went to Bristol uni", "went to Trinity College": a school named as one
    _re(rf"(?:^|\bI\s+)went\s+to\s+(?P<v>{_ORG_CAP}\s+(?:uni|university|college|polytechnic))\b"),
    _re(
        rf"\bI\s+(?:am\s+)?(?:{ADV})(?:study|studying|studied)\s+(?:[\w-]+\s+){{0,3}}?at\s+(?P<v>{_ORG_CAP}{_SCHOOL_WORD})"
    ),
]
_EMPLOYER_FRAMES = [
    # "my boss at Arup", "my team at the BBC": the speaker works there
    _re(
        rf"(?:^|\b)my\s+(?:new\s+|old\s+)?(?:manager|boss|line\s+manager|team|colleagues?|co-?workers?|team\s+lead|"
        rf"department|desk|office)\s+at\s+(?P<v>{_ORG_CAP})"
    ),
    # "then Arup hired me", "got hired by Arup"
    _re(
        rf"(?:^|\bthen\s+|\band\s+)(?!(?:then|and|so|they|he|she|it|who)\b)(?P<v>{_ORG_CAP})\s+(?:just\s+|finally\s+)?(?:hired|took\s+on)\s+me\b"
    ),
    _re(rf"\bI\s+(?:have\s+|was\s+|got\s+)?(?:just\s+)?(?:been\s+)?hired\s+by\s+(?P<v>{_ORG_CAP})"),
]
_FIELDS = (
    r"(?:[a-z]+\s+)?(?:sales|marketing|finance|accounting|hr|admin|administration|recruitment|consulting|"
    r"customer\s+service|customer\s+support|operations|compliance|procurement|logistics|insurance|banking|"
    r"publishing|journalism|pr|it)"
)
_FIELD_AT_ORG = [
    # "I do admin for a charity", "in retail banking at Barclays"
    _re(rf"\bI\s+(?:{ADV})do\s+(?P<t>{_FIELDS})\s+(?:at|for|with)\s+(?=(?:the\s+)?(?-i:[A-Z])){ORG}"),
    _re(
        rf"(?:^|[,;]\s*|\bI\s+am\s+)(?:now\s+)?(?:working\s+)?in\s+(?P<t>{_FIELDS})\s+(?:at|for|with)\s+(?=(?:the\s+)?(?-i:[A-Z])){ORG}"
    ),
]
_BY_TRADE = _re(r"(?:^|\bI\s+am\s+)(?:a\s+|an\s+)?(?P<t>[\w-]+(?:\s+[\w-]+)?)\s+by\s+(?:trade|profession)\b")
_FORMER_TITLE = _re(rf"(?:^|\bI\s+am\s+(?:a\s+|an\s+)?|[,;]\s*)(?:former|ex-|retired)\s*{_TITLE}")
# "I cover weekends as a porter at Addenbrooke's": the place named after the title employs them
_AS_TITLE = _re(
    rf"\bI\b[^.;!?]{{0,50}}?\bas\s+(?:a|an)\s+{_TITLE}(?:\s+(?:at|for|with)\s+(?=(?:the\s+)?(?-i:[A-Z])){ORG})?"
)
# "starting at Arup on the 20th", "I begin at Lidl next week as a cashier": a job that has not
# begun is a plan, neither the employer nor the title yet
_NOT_YET = _re(
    r"\b(?:starting|start|begin|beginning|join|joining|will\s+(?:start|begin|join)|am\s+going\s+to\s+(?:start|begin|join))\b"
    r"[^.;!?]*\b(?:on\s+the\s+\d|next\s+\w+|tomorrow|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"in\s+(?:a|an|a\s+few|a\s+couple\s+of|two|three|four|five|six|\d+)\s+(?:days?|weeks?|months?)|in\s+(?:january|february|march|april|may|june|july|august|september|october|november|december)\b)"
)
# "the manager of getting everyone out the door", "head chef of burning toast": a title whose
# complement is an activity (a gerund, not a field such as "head of engineering") is a joke
_OF_GERUND = re.compile(r"\s+of\s+(?:just\s+|mostly\s+)?(?P<w>[a-z]+ing)\b", I)
_LIGHT_GERUNDS = {"doing", "being", "having", "getting", "making", "taking", "going", "saying"}


def _of_activity(text: str, pos: int) -> bool:
    m = _OF_GERUND.match(text, pos)
    if not m:
        return False
    word = m["w"].lower()
    return word in _LIGHT_GERUNDS or "NOUN" not in lemmas(word)


# "changed careers from chef to nurse", "went from barista to store manager"
_CAREER_CHANGE = _re(
    rf"\b(?:switched|changed|moved|went|retrained)\s+(?:careers?\s+|jobs?\s+)?from\s+(?:a\s+|an\s+|being\s+(?:a\s+|an\s+)?)?"
    rf"(?P<a>(?:[\w-]+\s+){{0,2}}?(?:{_HEADS}))\s+to\s+(?:a\s+|an\s+|being\s+(?:a\s+|an\s+)?)?{_TITLE}"
)


def clause_work(s: Sentence, ctx: Context) -> Iterator[Found]:
    for m in _CAREER_CHANGE.finditer(s.text):
        if (new := _title(m["t"])) and (old := _title(m["a"])) and first_person_start(s.text):
            yield make_fact("job_title", new, confidence=ctx.confidence)
            yield FactRetraction("job_title", old)
    for pattern in _FIELD_AT_ORG:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2) and (org := _org(m["v"], ctx)):
                yield make_fact("job_title", m["t"].lower(), confidence=ctx.confidence)
                yield make_fact("employer", org, confidence=ctx.confidence)
    for m in _BY_TRADE.finditer(s.text):
        title = _title(m["t"])
        if (
            title
            and any(h in title.split() or h == title for h in JOB_HEADS)
            and not negated_before(s.text, m.start() + 2)
        ):
            yield make_fact("job_title", title, confidence=ctx.confidence)
    for m in _FORMER_TITLE.finditer(s.text):
        if title := _title(m["t"]):
            yield FactRetraction("job_title", title)
    for pattern in _SCHOOL:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2) and (org := _org(m["v"], ctx)):
                yield make_fact("school", org, confidence=ctx.confidence)
    for pattern in _EMPLOYER_FRAMES:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2) and (org := _org(m["v"], ctx)):
                yield make_fact("employer", org, confidence=ctx.confidence)
    for m in [] if _NOT_YET.search(s.text) else _AS_TITLE.finditer(s.text):
        if not negated_before(s.text, m.start("t")) and not re.search(
            r"\bused\s+to\b", s.text[: m.start("t")], I
        ):
            if title := _title(m["t"]):
                yield make_fact("job_title", title, confidence=ctx.confidence)
                if m["v"] and (org := _org(m["v"], ctx)):
                    yield make_fact(
                        "school" if _studying(title) else "employer", org, confidence=ctx.confidence
                    )


_SPEAK_MORE = [
    _re(r"\bI\s+(?:can\s+)?(?:also\s+)?get\s+by\s+in\s+(?P<v>[^.;!?()]+)"),
    _re(r"(?:^|,\s*|\bI\s+am\s+(?:a\s+)?)native\s+(?P<v>[A-Za-z]+)\s+speaker"),
    _re(
        r"(?:^|,\s*|\band\s+)(?P<v>[A-Za-z]+)\s+is\s+my\s+(?:first|native|mother|main|second|third|other|home)\s+"
        r"(?:language|tongue)"
    ),
    # "Welsh at home, English at work"
    _re(r"(?:^|,\s*|\band\s+|\bspoke\s+|\bspeak\s+)(?P<v>(?-i:[A-Z])[a-z]+)\s+at\s+(?:home|school|work)\b"),
    _re(
        r"\bI\s+(?:have\s+)?(?:also\s+)?(?:picked\s+up|learned|learnt)\s+(?:some|a\s+bit\s+of|a\s+little|basic)\s+"
        r"(?P<v>(?-i:[A-Z])[a-z]+)\b"
    ),
    _re(r"(?:^|,\s*|\band\s+)(?P<v>(?-i:[A-Z])[a-z]+)\s+I\s+(?:picked\s+up|learned|learnt|speak)\b"),
    # a list of how well: "decent English, rusty German and some Dutch"
    _re(
        r"(?:^|,\s*|\band\s+|^I\s+am\s+)(?:(?:very|pretty|quite|fairly)\s+)?(?:decent|rusty|basic|fluent|conversational|broken|passable|"
        r"schoolboy|schoolgirl|intermediate|advanced|good|ok|okay|some|a\s+bit\s+of|a\s+little|survival)\s+"
        r"(?P<v>[A-Za-z]+)(?=\s*(?:[,;.!]|$|\s+and\b|\s+too\b))"
    ),
]


def first_person_start(text: str) -> bool:
    """No other person is the subject before the first verb: "my sister switched from …" is hers."""
    return not _OTHER_SUBJECT.match(text) and not re.match(
        r"^(?-i:[A-Z])[a-z]+\s+(?:has|had|is|was|switched|went|moved)\b", text
    )


_OTHER_SUBJECT = _re(r"\b(?:he|she|they|his|her|their|my\s+(?!own\b)\w+|our\s+\w+)\b")
_LEARN_MORE = [
    _re(r"\b(?:duolingo|babbel|memrise|busuu)\b[^.;!?]{0,30}?\b(?:on|in|for|with)\s+(?P<v>[A-Za-z]+)\b"),
    _re(
        r"\b(?P<v>[A-Za-z]+)\s+(?:on\s+)?(?:duolingo|babbel|memrise|busuu|lessons|classes|evening\s+classes)\b"
    ),
]


def clause_languages(s: Sentence, ctx: Context) -> Iterator[Found]:
    spoken: list[str] = []
    for pattern in _SPEAK_MORE:
        for m in pattern.finditer(s.text):
            if not negated_before(s.text, m.start() + 2) and not _OTHER_SUBJECT.search(s.text[: m.start()]):
                spoken += _languages_in(m["v"])
    if spoken:
        yield make_fact("languages", ", ".join(dict.fromkeys(spoken)), confidence=ctx.confidence)
    for m in (m for pattern in _LEARN_MORE for m in pattern.finditer(s.text)):
        word = m["v"].lower()
        if word in SPOKEN_LANGUAGES and not negated_before(s.text, m.start()):
            yield make_fact("languages.learning", SPOKEN_LANGUAGES[word], confidence=ctx.confidence)


_TECH_FRAMES = [
    # "my main machine is an old Dell on Debian", "our stack is Go and Postgres"
    _re(
        r"(?:^|\b(?:my|our)\s+)(?:(?:tech|main|usual|whole|current)\s+)?(?:daily\s+driver|stack|setup|toolchain|"
        r"tooling|main\s+machine|workflow)\s+(?:is|=|:)\s+(?P<v>[^.;!?]+)"
    ),
    # "an Emacs user for years", "Arch user btw"
    _re(r"(?:^|\bI\s+am\s+(?:a\s+|an\s+)?(?:\w+\s+)?|,\s*)(?P<v>[\w.+#-]+(?:\s+[\w.+#-]+)?)\s+user\b"),
    # "ditched Trello for Linear": the tool it was dropped for
    _re(
        r"\b(?:ditched|dropped|replaced|swapped|traded)\s+[\w .+#-]{1,25}?\s+(?:for|with)\s+(?P<v>[^.;!?,]+)"
    ),
    # "our codebase is mostly Rust", "the project is pure Swift"
    _re(
        r"\b(?:my|our|the)\s+(?:new\s+)?(?:team|codebase|project|job|repo|company)\s+is\s+(?:all|mostly|entirely|pure)\s+(?P<v>[^.;!?,]+)"
    ),
    # "I more or less live in Notion all day"
    _re(rf"\bI\s+{ADV}(?:live|living)\s+in\s+(?P<v>[^.;!?]+)"),
]
# "at work it is Jira and Miro", "it is all Go": the named thing must come first
_IT_IS_TECH = _re(
    r"(?:^|[,;]\s*|\b(?:day\s+to\s+day|these\s+days|now|at\s+work)\s+)it\s+is\s+(?:all\s+|mostly\s+|pure\s+|just\s+)?(?P<v>[^.;!?]+)"
)
_TECH_ONLY = re.compile(r"^[\s,+&/]*(?:and\s+)?$", I)
_TECH_FILLER = re.compile(
    r"\b(?:mostly|mainly|these\s+days|nowadays|now|at\s+work|for\s+work|day\s+to\s+day|lately|and|a\s+bit\s+of|"
    r"(?:I\s+(?:am\s+)?)?never\s+going\s+back|(?:on|for)\s+the\s+(?:backend|back\s+end|frontend|front\s+end|ui|server|client|api|web|app)|"
    r"macbook(?:\s+(?:air|pro))?|thinkpad)\b",
    I,
)


def clause_tools(s: Sentence, ctx: Context) -> Iterator[Found]:
    found: dict[str, list[str]] = {}
    for pattern in _TECH_FRAMES:
        for m in pattern.finditer(s.text):
            if negated_before(s.text, m.start() + 2):
                continue
            scope = m["v"]
            scope = scope[: end.start()] if (end := _SCOPE_END.search(scope)) else scope
            for key, canonical in _tech_items(scope, ctx):
                found.setdefault(key, []).append(canonical)
    for m in _IT_IS_TECH.finditer(s.text):
        if (
            _TECH_RE.match(m["v"])
            and not re.match(r"[\w .+#-]+'s\b", m["v"])
            and not negated_before(s.text, m.start() + 2)
        ):
            scope = m["v"]
            scope = scope[: end.start()] if (end := _SCOPE_END.search(scope)) else scope
            for key, canonical in _tech_items(scope, ctx):
                found.setdefault(key, []).append(canonical)
    # a sentence that is nothing but a list of languages and tools: "mostly Go + Rust these days"
    rest = _TECH_FILLER.sub(" ", _TECH_RE.sub(" ", s.text))
    items = list(_tech_items(s.text, ctx))
    if items and _TECH_ONLY.match(rest) and not re.match(r"^I\b", s.text):
        for key, canonical in items:
            found.setdefault(key, []).append(canonical)
    for key, values in found.items():
        values = list(dict.fromkeys(values))
        if key in ("os", "editor"):
            values = values[-1:]
        yield make_fact(key, ", ".join(values), confidence=ctx.confidence)


RULES = (
    names,
    places,
    work,
    languages,
    tools,
    introductions,
    clause_places,
    clause_work,
    clause_languages,
    clause_tools,
)

__all__ = ["Context", "Found", "RULES", "STOP"]
