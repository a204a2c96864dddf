"""Note rules: explicit "remember that …", decisions, dated plans and events, and what the
speaker says about the people in their life. One note per sentence at most."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, datetime, time

from chat.reflection.lexicon import (
    EDITORS,
    OPERATING_SYSTEMS,
    PET_SPECIES,
    PROGRAMMING_LANGUAGES,
    RELATION_WORDS,
    TOOLS,
)
from chat.reflection.ops import NoteOp
from chat.reflection.text import Sentence, without_quotes
from chat.reflection.topics import TOPIC_TAGS
from chat.reflection.words import is_past_form
from memory.categories import classify_category
from memory.temporal import DateMention, ground, lemmas, resolve_dates, sentence_tense

I = re.IGNORECASE  # noqa: E741
_TOPICS = {tag: re.compile(rf"(?<![\w-])(?:{words})(?![\w-])", I) for tag, words in TOPIC_TAGS.items()}


def topic_tags(text: str) -> list[str]:
    return [tag for tag, pattern in _TOPICS.items() if pattern.search(text)]


def _note(kind: str, content: str, *, occurred_at: datetime | None, speaker: str | None) -> NoteOp:
    content = content.strip()
    content = content[:1].upper() + content[1:]
    tags = [kind, *(t for t in topic_tags(content) if t != kind)]
    return NoteOp(
        content=f"{speaker}: {content}" if speaker else content,
        tags=tags[:16],
        occurred_at=occurred_at,
        category=classify_category(content),
    )


def _at(day: date, reference: datetime) -> datetime:
    return datetime.combine(day, time.min, tzinfo=reference.tzinfo)


# --- "remember that …" ------------------------------------------------------------------------

_REMEMBER_LEAD = re.compile(
    r"^(?:(?:please|pls|plz|can\s+you|could\s+you|would\s+you|will\s+you|can\s+u|could\s+u|"
    r"I\s+want\s+you\s+to|I\s+need\s+you\s+to|also|and|oh\s+and|hey|ok|okay|so)[\s,]+)*"
    r"(?:remember|don'?t\s+forget|do\s+not\s+forget|keep\s+in\s+mind|make\s+a\s+note|take\s+a\s+note|"
    r"note\s+to\s+self|note\s+that|for\s+future\s+reference|memori[sz]e|save\s+this)\b"
    r"(?:\s+(?:of\s+)?(?:this|that)(?=\s*:))?\s*[:,—-]?\s*(?:that\s+)?(?P<body>.+)$",
    I,
)
_REMEMBER_TAIL = re.compile(
    r"^(?P<body>.+?)[\s,;—-]+(?:please\s+)?(?:remember|don'?t\s+forget|keep\s+in\s+mind)"
    r"(?:\s+(?:that|this|it))?(?:\s+(?:please|ok|okay|for\s+me))?[\s.!?]*$",
    I,
)
# "… - hang on to that until the audit", "… - don't let me forget", "… just in case I forget"
_KEEP_TAIL = re.compile(
    r"^(?P<body>.+?)[\s,;—-]+(?:pls\s+|please\s+)?(?:keep\s+hold\s+of|hang\s+on\s+to|hold\s+on\s+to|hold\s+onto|"
    r"keep|save|store|note|jot)\s+(?:that|this|it)(?:\s+down)?\b(?:\s+[^.!?]{0,60})?[\s.!?]*$|"
    r"^(?P<body2>.+?)[\s,;—-]+(?:(?:and\s+)?(?:pls\s+|please\s+)?(?:do\s+not|don'?t)\s+let\s+me\s+forget(?:\s+(?:it|that|this))?|"
    r"(?:just\s+)?in\s+case\s+I\s+(?:ask|forget)(?:\s+(?:again|later|you))?|"
    r"(?:pls\s+|please\s+)?remind\s+me\s+(?:if|when|in\s+case)\s+I\s+forget(?:\s+(?:it|that))?|"
    r"(?:pls\s+|please\s+)?write\s+(?:that|this|it)\s+down(?:\s+(?:for\s+me|somewhere|pls|please)){0,3})[\s.!?]*$",
    I,
)
# a code, password or number stated to be kept: "the shed code is 9120, remind me", "my IBAN is
# GB29 …, use it on my invoices", "licence number is AB123, need it for the hire car"
_IDENTIFIER = re.compile(
    r"^(?P<body>(?:(?:the|my|our)\s+)?(?:[\w'-]+\s+){0,3}?(?:code|password|passcode|passphrase|pin|pin\s+number|"
    r"combination|combo|iban|account\s+(?:no\.?|number)|sort\s+code|passport\s+(?:no\.?|number)|"
    r"licen[cs]e\s+(?:no\.?|number|plate)|policy\s+(?:no\.?|number)|membership\s+(?:no\.?|number)|"
    r"booking\s+(?:reference|ref|code)|reference\s+number|ref\s+number|plate\s+number)"
    r"(?:'s|\s+is|\s*[:=])\s+(?=[^\s]*\d)[^\s,;—]+(?:\s+(?=[^\s,;—]*\d)[^\s,;—]+)*)",
    I,
)
_INSTRUCTION_TAIL = re.compile(
    r"[\s,;—-]+(?:(?:pls|please)\s+)?(?:remind\s+me|write|put|use|save|keep|store|note|jot|need|add)\b", I
)
_NOT_AN_INSTRUCTION = re.compile(r"^(?:when|how|what|where|who|whether|if|the\s+time|me|us|him|her)\b", I)


_REMIND_ME = re.compile(
    r"^(?:(?:please|pls|can\s+you|could\s+you)[\s,]+)*remind\s+me\s+(?:to\s+|that\s+|about\s+)(?P<body>.+)$",
    I,
)


def reminder_note(s: Sentence, reference: datetime, speaker: str | None) -> NoteOp | None:
    """ "Remind me to water the tomatoes tomorrow": a plan when it has a date, else a remembered note."""
    m = _REMIND_ME.match(s.raw.strip())
    if not m:
        return None
    grounded, day = ground(s.raw.strip(" .!?"), reference, default_tense=s.tense_hint)
    kind = "plan" if day and day >= reference.date() else "remembered"
    return _note(kind, grounded, occurred_at=_at(day, reference) if day else None, speaker=speaker)


def remembered_body(sentence: str) -> str | None:
    """The thing to remember, when the sentence asks for it; None for "do you remember when …"."""
    m = _REMEMBER_LEAD.match(sentence) or _REMEMBER_TAIL.match(sentence) or _KEEP_TAIL.match(sentence)
    if not m:
        # stated with what to do with it (a bare "the safe combination is 7-7-2" is only said)
        stated = sentence.strip()
        if (found := _IDENTIFIER.match(stated)) and _INSTRUCTION_TAIL.search(stated, found.end()):
            return found["body"]
        return None
    body = (m.groupdict().get("body") or m.groupdict().get("body2") or "").strip(" .!?")
    return None if not body or _NOT_AN_INSTRUCTION.match(body) else body


def remembered_note(body: str, reference: datetime, speaker: str | None) -> NoteOp:
    grounded, day = ground(body, reference)
    note = _note("remembered", grounded, occurred_at=_at(day, reference) if day else None, speaker=speaker)
    return note


# --- decisions --------------------------------------------------------------------------------

_DECISION = re.compile(
    r"\b(?:we|I|(?:our\s+|the\s+|my\s+)?(?:team|squad|company|board|family|management|leadership|committee|group)|everyone)"
    r"\s+(?:have\s+|has\s+|had\s+)?(?:finally\s+|just\s+|eventually\s+|now\s+|all\s+|officially\s+)?"
    r"(?:decided|agreed|settled\s+on|opted|chose|picked(?!\s+up)|signed\s+off|approved|green-?lit)\b|"
    r"\b(?:we|I)\s+(?:have\s+|had\s+)?promised\s+(?:the\s+|my\s+|our\s+)?\w+\s+(?:a\s+|an\s+|the\s+)?(?-i:[A-Z])?\w+|"
    r"\b(?:the|our|my)\s+plan\s+is\s+(?:that\s+)?(?:we|I)\b|"
    r"\b(?:we|I)\s+(?:are|am|will)\s+(?:going\s+with|go\s+with|going\s+to\s+go\s+with|sticking\s+with|"
    r"switching\s+(?:over\s+)?(?:from\s+[\w .+-]{1,30}?\s+)?to|moving\s+(?:from\s+[\w .+-]{1,30}?\s+)?to)\b|^let's\s+(?:go\s+with|use|stick\s+with|do|pick|choose|switch\s+to|ship)\b|"
    r"\b(?:final\s+(?:decision|answer)|the\s+decision\s+is|the\s+plan\s+is\s+to)\b",
    I,
)
# "we're moving to Bristol" moves people; "we're moving to Postgres" moves a system (a choice)
_MOVING_TO = re.compile(
    r"\b(?:we|I)\s+(?:are|am|will)\s+moving\s+(?:back\s+|over\s+)?to\s+(?:the\s+)?(?P<x>(?-i:[A-Z])[\w'.-]*)",
    I,
)
_TECH = {*PROGRAMMING_LANGUAGES, *OPERATING_SYSTEMS, *EDITORS, *TOOLS}


def _relocation_only(text: str) -> bool:
    m = _MOVING_TO.search(text)
    if not m or m["x"].lower().rstrip(".") in _TECH:
        return False
    rest = _MOVING_TO.sub(" ", text)
    return not _DECISION.search(rest)


_ASSISTANT_DECISION = re.compile(
    r"\b(?:we|you\s+and\s+I)\s+(?:have\s+)?(?:agreed|decided)\b|\bas\s+agreed\b|\bwe\s+will\s+go\s+with\b|"
    r"\bso\s+we\s+are\s+going\s+with\b|"
    # an agreement restated: "Agreed - we'll keep …", "Perfect, we'll ship … as you suggested"
    r"^(?:I\s+)?(?:agreed|sounds\s+good|deal|perfect|great|ok(?:ay)?|done|noted|got\s+it|understood|will\s+do|sure)\b[^.!?]*?\b(?:we|I)\s+will\s+(?!see\b|talk\b|think\b|try\b|look\b|check\b)\w+|"
    r"\b(?:we|I)\s+will\s+(?!see\b|talk\b|think\b)\w+[^.!?]*\bas\s+(?:you\s+(?:suggested|decided|asked|wanted|said)|"
    r"(?:we\s+)?(?:discussed|planned|agreed|decided))\b",
    I,
)
# an assistant's acknowledgement opening the message: "Understood - …", "Got it, …"
_ACK = re.compile(
    r"^(?:agreed|sounds\s+good|deal|perfect|great|ok(?:ay)?|done|noted|got\s+it|understood|will\s+do|sure)\b",
    I,
)


def decision_note(
    s: Sentence, reference: datetime, speaker: str | None, *, assistant: bool = False
) -> NoteOp | None:
    pattern = _ASSISTANT_DECISION if assistant else _DECISION
    text = s.text
    if assistant and (ack := _ACK.match(s.raw.strip())) and not _ACK.match(text):
        text = f"{ack.group(0)} {text}"  # the acknowledgement the reading dropped
    if s.question or s.conditional or not pattern.search(text):
        return None
    if not assistant and _relocation_only(text):
        return None  # "we're relocating to Ghent in March" is a household's move, a plan (dated_note)
    grounded, day = ground(s.raw.rstrip(), reference, default_tense=s.tense_hint)
    return _note("decision", grounded, occurred_at=_at(day, reference) if day else None, speaker=speaker)


# --- commitments: what the speaker or their group will do --------------------------------------
# A group's commitment ("we'll move payroll to a new provider in Q4", "next quarter we …")
# and anyone's promise or agreement ("I agreed to mentor …") are decisions, whether or not they
# say "decided"; a person's own intention ("I'm going to repaint …", "I plan to …") is a plan.
# Dated or not: the time phrase, when there is one, becomes the note's date.

_GROUP = (
    r"(?:we|our\s+(?:team|company|group|org|startup|department|family)|the\s+(?:team|company|board)|"
    r"(?:me|I)\s+and\s+(?:my\s+)?\w+|(?:my\s+)?\w+\s+and\s+(?:I|me))"
)
_INTEND = (
    r"(?:will|shall|(?:are|is|am)\s+going\s+to|(?<=\w)'s\s+going\s+to|(?:plan|intend|aim|mean|expect)s?\s+to|"
    r"(?:are|is|am)\s+(?:planning|aiming|intending|set|scheduled|due)\s+to)"
)
_PROMISE = (
    r"(?:have\s+|has\s+|had\s+)?(?:committed|agreed|promised|pledged|vowed|resolved|signed\s+up)\s+"
    r"(?:to|(?:\w+\s+){0,3}(?:that\s+)?(?:I|we)\s+would)"
)
_ADVERBS = r"(?:(?:also|then|finally|definitely|really|now|all|both|just|officially|soon)\s+)*"
_COMMITMENT = re.compile(
    rf"(?:\b(?P<who>{_GROUP}|I)(?:\s+|(?='s\s))(?:(?P<promise>{_PROMISE})|{_INTEND})|"
    rf"(?:\b(?P<whose>my|our)\s+|^)(?:plan|goal|intention|aim)\s+is\s+to)\s+{_ADVERBS}(?P<rest>(?P<verb>[a-z]+)\b.*)$",
    I,
)
_FRONTED = re.compile(
    rf"^(?P<when>[^,]{{3,40}}?),?\s+{_GROUP}\s+(?:will\s+|are\s+(?=\w+ing\b))?{_ADVERBS}(?P<rest>(?P<verb>[a-z]+)\b.*)$",
    I,
)
_FROM_NOW_ON = re.compile(r"^(?:from\s+now\s+on|going\s+forward|starting\s+(?:today|now))$", I)
# Things one says to end or steer a conversation, not commitments: "I'll think about it",
# "we'll see", "I'll let you know", "I'll be right back", "I'll have the salmon".
_CONVERSATIONAL = {
    "think", "see", "let", "try", "check", "look", "get", "keep", "wait", "figure", "talk", "tell", "ask",
    "be", "have", "do", "take", "consider", "need", "remember", "reply", "answer", "follow", "go",
    "grab", "pop", "hop", "jump", "kill", "die", "lose", "scream", "cry",
}  # fmt: skip
# Trips, visits and outings are plans even when a group makes them ("we are off to see the
# grandparents at Easter"), as dated plans always were. Not "move": a team moves an API to Go.
_OUTINGS = {
    "visit", "fly", "travel", "drive", "head", "leave", "arrive", "stay", "spend", "celebrate",
    "meet", "attend", "camp", "hike", "tour", "explore", "holiday", "vacation", "sail", "cruise",
}  # fmt: skip
_NOT_A_VERB = {"a", "an", "the", "my", "our", "his", "her", "their", "your", "this", "that", "it", "not"}
_UNSURE = re.compile(
    r"\b(?:maybe|might|perhaps|possibly|probably|not\s+sure|unsure|whether|thinking\s+(?:about|of)|"
    r"considering|someday|one\s+day|at\s+some\s+point|sometime|eventually)\b",
    I,
)


def _committed(s: Sentence, reference: datetime) -> tuple[str, str] | None:
    """(kind, the part after the modal) when the sentence commits its speaker or group."""
    text = s.text
    m = _COMMITMENT.search(text)
    if m:
        group = (m["who"] or m["whose"] or "my").lower() not in ("i", "my")
        # "I promised …", "I agreed to …" bind the speaker to someone; "I have committed to daily
        # push-ups", "I signed up to …" are the speaker's own resolutions
        own = m["promise"] and re.search(r"committed|resolved|vowed|signed", m["promise"], I)
        kind = "decision" if group or (m["promise"] and not own) else "plan"
    else:
        m = _FRONTED.match(text)
        if not m:
            return None
        when = m["when"].strip()
        if is_past_form(m["verb"]) or m["verb"].lower().endswith(
            "ed"
        ):  # "In May we flew …": a story, not a decision
            return None
        future = [d for d in resolve_dates(when, reference) if d.start >= reference.date()]
        if not (_FROM_NOW_ON.match(when) or (future and len(future[0].phrase) >= len(when) - 12)):
            return None
        # "on Saturday we're at the zoo with the kids": a household's arrangement, a plan
        kind = "plan" if _household_arrangement(text) else "decision"
    verb, rest = m["verb"].lower(), m["rest"].split()
    if verb == "not":  # "we will not hire before March": a decision too
        verb = rest[1].lower() if len(rest) > 1 else ""
        rest = rest[1:]
    # "gonna scream, the build broke": the clause ends at its comma
    clause = re.split(r"[,;:]|\s+-\s+", " ".join(rest))[0].split()
    # "we'll do it later" is talk; "we will do code reviews in pairs each sprint" is not
    substantial = (
        (verb == "do" or clause[1:2] in (["off"], ["out"]))
        and len(clause) >= 4
        and clause[1].lower() not in ("it", "that", "this", "so", "the")
    )
    if (
        verb in _NOT_A_VERB
        or (verb in _CONVERSATIONAL and not substantial)
        or len(rest) < 2
        or len(clause) < 2
    ):
        return None
    outing = (
        verb in _OUTINGS
        or _TRIP.search(" ".join(clause))
        or re.match(r"(?:(?:are|is|am)\s+)?(?:off|away)\s+(?:to|for)\b", m["rest"], I)
    )
    return ("plan" if outing and not m.groupdict().get("promise") else kind), m["rest"]


# a trip is a plan whoever makes it: "we are doing a cruise along the Danube"
_TRIP = re.compile(
    r"\b(?:trip|holiday|vacation|getaway|honeymoon|tour|cruise|flights?|visit|christmas|xmas|easter|"
    r"thanksgiving|new\s+year|diwali|eid|hanukkah)\b",
    I,
)


# words in quotes are someone else's (text.without_quotes): no commitment, no date in them
def _unquoted(s: Sentence) -> Sentence:
    text = without_quotes(s.text, " ")
    return s if text == s.text else replace(s, text=" ".join(text.split()))


def commitment_note(s: Sentence, reference: datetime, speaker: str | None) -> NoteOp | None:
    s = _unquoted(s)
    if s.question or s.conditional or _UNSURE.search(s.text) or _TALK.match(s.text):
        return None
    found = _committed(s, reference)
    if found is None:
        return None
    grounded, day = ground(s.raw.rstrip(), reference, default_tense=s.tense_hint)
    return _note(found[0], grounded, occurred_at=_at(day, reference) if day else None, speaker=speaker)


# --- dated plans and events -------------------------------------------------------------------

_EVENT_NOUNS = (
    r"appointment|meeting|interview|flight|trip|deadline|party|concert|wedding|class|exam|surgery|"
    r"game|match|date|dinner|lunch|birthday|vacation|holiday|conference|presentation|demo|launch|"
    r"release|checkup|check-up|gig|festival|funeral|graduation|ceremony|recital|race|marathon|"
    r"reservation|shift|standup|review|retreat|kindergarten|school|baby|move|visit|honeymoon|job|course|appt|"
    r"term|semester|lease|contract|internship|operation|procedure|scan|treatment|stay|tour|camp|season|"
    r"therapy|therapist|physio|physiotherapy|dentist|doctor|GP|vet|counsell?ing|session|haircut|op|"
    r"licen[cs]e|passport|visa|renewal|run|miscarriage|diagnosis|hospital|A&E|ER|puncture|thesis|dissertation|"
    r"(?:last|first)\s+(?:day|shift|week)"
)
_EVENT_VERBS = (
    r"went|ran|flew|drove|saw|met|took|made|bought|ate|broke|left|came|gave|wrote|won|lost|began|"
    r"sang|swam|rode|caught|fell|sold|taught|built|quit|got\s+back|got\s+married|got\s+engaged|"
    r"got\s+promoted|got\s+hired|got\s+fired|got\s+laid\s+off|gave\s+birth|diagnosed|married|born|"
    r"hired|fired|promoted|engaged|divorced|injured|hospitalized|accepted|rejected|moved|graduated|"
    r"starts?|starting|begins?|leaves?|leaving|arrives?|arriving|lands?|landing|fly|flies|flying|"
    r"visit|visits|visiting|travel(?:l)?ing|heading|expecting|interviewing|moving|going|turns|turning|"
    r"split|split\s+up|broke\s+up|separated|adopted|rehomed|expires?|expiring|renew|done|finished|completed|"
    r"signed\s+up|registered|enrolled|booked|put\s+down|put\s+to\s+sleep|passed\s+away|died"
)
_ADJECTIVE_ED = {
    "tired", "bored", "excited", "interested", "scared", "worried", "stressed", "annoyed", "exhausted",
    "confused", "pleased", "surprised", "disappointed", "obsessed", "relaxed", "frustrated",
    "overwhelmed", "depressed", "motivated", "amazed", "shocked", "embarrassed", "ashamed", "prepared",
    "used", "need", "based", "supposed", "allowed", "red", "bed", "indeed", "hundred", "concerned", "terrified", "thrilled", "stoked", "pumped", "booked", "swamped", "burned", "wired",
}  # fmt: skip
_ACTIVITY = re.compile(
    rf"\b(?:{_EVENT_NOUNS}|{_EVENT_VERBS})\b|\b(?:will|going\s+to|plan(?:ning)?\s+to|about\s+to|"
    r"hop(?:e|ing)\s+to|aim(?:ing)?\s+to|intend(?:ing)?\s+to|(?:I|we)\s+(?:need|have|has|must)\s+to)\s+\w+|"
    r"\b(?:am|are|is)\s+(?:\w+\s+)?\w+ing\b|"
    # a past progressive is something done: "April was mostly sailing off Crete"
    r"\b(?:was|were)\s+(?:all\s+|mostly\s+|spent\s+|busy\s+)?(?!going\b)\w{3,}ing\b|"
    # a present perfect progressive is something under way since its date: "been rowing since May"
    r"(?<!not\s)(?<!never\s)(?<!n't\s)\bbeen\s+(?:\w+ly\s+)?(?!going\b)\w{3,}ing\b",
    I,
)
_ED_WORD = re.compile(r"\b(?P<w>[a-z]{2,}ed)\b", I)
_PRONOUN_START = re.compile(r"^(?:he|she|they|it|there|you)\b", I)
_FIRST_PERSON = re.compile(r"\b(?:I|we|me|my|our|us)\b", I)
_JUST = re.compile(
    r"\b(?:I|we)\s+(?:have\s+|had\s+)?just\s+(?:got\s+|been\s+)?(?P<verb>[a-z]+)\b",
    I,
)


def _just_happened(text: str) -> bool:
    """ "I just got engaged", "we've just moved", "I just finished my thesis": an event of today."""
    m = _JUST.search(text)
    if not m:
        return False
    verb = m["verb"].lower()
    return verb in ("quit", "left", "got", "home", "back") or (
        (is_past_form(verb) or verb.endswith("ed")) and verb not in _ADJECTIVE_ED and verb not in _STATIVE
    )


_ARRANGED = re.compile(r"\b(?:booked|scheduled|planned|arranged|confirmed|set)\s+(?:for|on|from)\b", I)
# Simple pasts that state a condition rather than something that happened.
_STATIVE = {"was", "were", "felt", "seemed", "thought", "knew", "meant", "wanted", "liked", "loved", "hated"}


# being somewhere is something done: "we were in Oslo in May", "I was away last week"
_BEING_AWAY = re.compile(
    r"\b(?:was|were|am|are|is)\s+(?:(?:in|at)\s+(?-i:[A-Z])|away\b|abroad\b|off\s+to\b)", I
)


def _has_activity(text: str) -> bool:
    if _ACTIVITY.search(text) or _ARRANGED.search(text) or _BEING_AWAY.search(text) or _dropped_subject(text):
        return True
    # irregular pasts ("spent", "drove", "had to put"); regular "-ed" words are read below
    if any(
        is_past_form(w) and not w.lower().endswith("ed") and w.lower() not in _STATIVE
        for w in re.findall(r"[A-Za-z]+", text)
    ):
        return True
    for m in _ED_WORD.finditer(text):
        before = text[: m.start()].split()[-1:] or [""]
        if m["w"].lower() not in _ADJECTIVE_ED and before[0].lower() not in (
            "am",
            "is",
            "are",
            "was",
            "were",
            "so",
            "very",
            "feel",
            "felt",
            "be",
            "been",
            "get",
            "got",
            "really",
        ):
            return True
    return False


def _kind(mention: DateMention, text: str, today: date) -> str:
    end = mention.end or mention.start
    if mention.start > today:
        return "plan"
    if end < today:
        return "event"
    # "seeing the dentist today", "calling Gran tonight": a progressive with "I'm" dropped
    if sentence_tense(text) == "future" or _ING_OPENING.match(text):
        return "plan"
    return "event"


_ING_OPENING = re.compile(
    r"^(?:(?:just|also|finally|so)\s+)?(?!during\b|morning\b|evening\b|nothing\b|something\b|everything\b)[a-z]{2,}ing\b",
    I,
)


# A clause whose subject chat dropped: "…, met her at a gig in 2019", "flying out 4 May", "began
# the new meds three weeks back", "finally divorced as of Monday".
_CLAUSE_START = re.compile(
    r"(?:^|[,;:]\s*|\s-\s*)(?:(?:just|finally|officially|then|and|also|recently|honestly|so)\s+)*(?P<w>[a-z]+)\b",
    I,
)
# "I'll think about it next week", "we'll talk tomorrow": conversation, not a plan
_TALK = re.compile(
    r"^(?:I|we)\s+will\s+(?:think|see|talk|check|let\s+you\s+know|get\s+back|sleep\s+on\s+it|ask)\b(?:\s+\S+){0,4}$",
    I,
)
_GRANULARITY = {"day": 0, "week": 1, "month": 2, "year": 3}


def _dropped_subject(text: str) -> bool:
    for m in _CLAUSE_START.finditer(text):
        w = m["w"].lower()
        if w == "off" and re.match(r"\s+to\b", text[m.end() :]):  # "off to Rome on Monday"
            return True
        if w in _ADJECTIVE_ED or w in _STATIVE or w in ("was", "were", "is", "are", "been"):
            continue
        if is_past_form(w) or (w.endswith("ed") and len(w) > 4) or (w.endswith("ing") and len(w) > 5):
            return True
    return False


# something in the speaker's life happened: "the car broke down on Monday", "boiler died last
# week", "the sale went through in May" (a thing as subject, a past verb after it)
_THING_HAPPENED = re.compile(
    r"^(?:the\s+|my\s+|our\s+)?(?-i:[a-z]+)(?:\s+(?-i:[a-z]+))?\s+(?:finally\s+|just\s+|only\s+)?"
    r"(?P<verb>died|broke|failed|crashed|flooded|burst|collapsed|went\s+through|fell\s+through|arrived|"
    r"came\s+through|sold|closed|completed|ended|started|began|happened|exploded|leaked|packed\s+in|gave\s+out)\b",
    I,
)


def _told_by_speaker(s: Sentence, message: str) -> bool:
    """The sentence is the speaker's own story: first person, a dropped subject, or a story
    sentence about a named pet or a month ("April was mostly sailing") in a first-person message."""
    if _FIRST_PERSON.search(s.text) or _dropped_subject(s.text) or _THING_HAPPENED.match(s.text):
        return True
    if not message or not (_FIRST_PERSON.search(message) or _PET_WORD.search(message)):
        return False
    first = s.text.split()[0] if s.text.split() else ""
    return bool(
        re.match(rf"(?:(?-i:[A-Z])[a-z]+$|{'|'.join(MONTH_NAMES)}$)", first, I)
        and not re.match(r"(?:the|this|that|it|there|he|she|they|you)$", first, I)
    )


_PET_WORD = re.compile(
    rf"\b(?:{'|'.join(sorted(map(re.escape, PET_SPECIES), key=len, reverse=True))})s?\b", I
)
MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december",
)  # fmt: skip


# What a group undertakes, as opposed to what happens to it ("we're expecting"), or a chore
# ("we're repainting the hall"): launching, moving, booking, buying, hiring …
_UNDERTAKINGS = {
    "launch", "ship", "release", "move", "relocate", "book", "buy", "sell", "sign", "hire", "open",
    "close", "migrate", "switch", "adopt", "cancel", "complete", "exchange", "marry", "merge", "rebrand",
    "start", "begin", "freeze", "cut", "cap", "raise", "list", "rent", "lease", "build",
}  # fmt: skip
_GROUP_PLAN = re.compile(
    rf"(?:^|[,;]\s*|\b(?:till|until|before|when)\s+){_GROUP}\s+(?:have\s+|had\s+|are\s+|will\s+|all\s+)?(?:just\s+)?"
    r"(?P<verb>[a-z]+)\b",
    I,
)


# "we're relocating to Ghent in March", "we're seeing flats on Saturday": a bare "we" in the
# present progressive is people's own arrangement (a plan), not an organisation's commitment;
# "we're going to …" and "our team is …" stay decisions.
_HOUSEHOLD = re.compile(
    r"\bwe\s+are\s+(?:(?:just|also|finally|all|both)\s+)?"
    r"(?!going\s+to\b)(?:[a-z]+ing|at|in|off|away|back|home|out)\b",
    I,
)


# what an organisation does, not a household: "we're shipping the beta next sprint"
_ORGANISATION_VERBS = {
    "launch", "ship", "release", "hire", "migrate", "merge", "rebrand", "freeze", "cut", "cap", "raise",
    "list", "open", "close", "deploy", "roll", "onboard", "acquire", "expand", "restructure", "pivot",
}  # fmt: skip


def _household_arrangement(text: str) -> bool:
    for m in _HOUSEHOLD.finditer(text):
        verb = m.group(0).split()[-1].lower()
        if (lemmas(verb).get("VERB") or (verb,))[0] not in _ORGANISATION_VERBS:
            return True
    return False


def _group_undertaking(text: str) -> bool:
    for m in _GROUP_PLAN.finditer(text):
        verb = m["verb"].lower()
        lemma = (lemmas(verb).get("VERB") or (verb,))[0]
        if lemma in _UNDERTAKINGS:
            return True
    return False


_OUTING_WORDS = re.compile(
    rf"\b(?:{'|'.join(sorted(_OUTINGS))})(?:s|ing|ed)?\b|\b(?:off|away)\s+(?:to|for)\b",
    I,
)


def _outing(text: str) -> bool:
    return bool(_OUTING_WORDS.search(text) or _TRIP.search(text))


# a date that comes round every year is a fact, not a plan: "my birthday is 3 May"
_ANNUAL = re.compile(
    r"^(?:my|our)\s+(?:\w+\s+)?(?:birthday|bday|b-day|anniversary|name\s+day)(?:'s|\s+is|\s+falls\s+on)\b", I
)


# a time of one's life instead of a date: "when I was 12", "as a teenager", "back at uni"
_LIFE_PAST = re.compile(
    r"^(?:(?:so|and|also|honestly)\s+)?(?:when\s+(?:I|we)\s+(?:was|were)\s+(?:\d{1,2}|a\s+(?:kid|child|teen|teenager|student|baby)|young|little|small|at\s+(?:school|uni|university|college))|"
    r"as\s+a\s+(?:kid|child|boy|girl|teen|teenager|student)|growing\s+up|back\s+in\s+(?:the\s+day|school|uni|college)|in\s+my\s+(?:teens|twenties|thirties|twenties|student\s+days))\b",
    I,
)


def _did_something(text: str) -> bool:
    """The story goes on with something done ("I spent a summer …"), not a state ("I wanted …")."""
    if not _FIRST_PERSON.search(text):
        return False
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    return any(
        (is_past_form(w) or (w.endswith("ed") and len(w) > 4))
        and w not in _STATIVE
        and w not in _ADJECTIVE_ED
        and w not in ("wanted", "wished", "hoped", "dreamed", "dreamt", "had", "did", "used")
        for w in words
    )


_ONLY_WOULD = re.compile(r"\b(?:would|could|might)\s+(?:\w+\s+)?\w+", I)
_WOULD_CLAUSE = re.compile(r"\b(?:would|could|might)\b[^,;.]*", I)


# "Friday the electrician came round", "on the 8th the fridge gets fitted", "the 5th is when
# the removal van arrives", "on Monday the boiler broke": something of the speaker's household
# happens on a day. Read with the dates taken out: a "the/my/our" noun (not a relative: that is a
# people note) and then a verb that is done or arranged.
_NOT_HAPPENING = {
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "will", "would", "could", "should",
    "might", "may", "must", "can", "looks", "looked", "seems", "seemed", "feels", "felt", "sounds",
    "needs", "wants", "costs", "cost", "belongs", "means", "smells", "tastes",
}  # fmt: skip
_OBJECT_WORDS = {
    "the",
    "a",
    "an",
    "my",
    "our",
    "it",
    "them",
    "up",
    "down",
    "in",
    "out",
    "off",
    "back",
    "round",
}
_RELATION_SET = {r.lower() for r in RELATION_WORDS}


def _household_happening(raw: str, mentions: list[DateMention]) -> bool:
    if not any(m.granularity == "day" or (m.granularity == "week" and not m.end) for m in mentions):
        return False  # a day, or a count of weeks from one ("three weeks from today")
    text = raw
    for mention in sorted(mentions, key=lambda d: d.span, reverse=True):
        text = text[: mention.span[0]] + " " + text[mention.span[1] :]
    text = re.sub(r"^[\s,;:-]*(?:(?:is|was)\s+when\s+)?", "", text)
    words = [w.lower() for w in re.findall(r"[A-Za-z-]+|'s", text)]
    if len(words) < 3 or words[0] not in ("the", "my", "our"):
        return False
    words = ["is" if w == "'s" else w for w in words]
    for j in range(1, min(len(words), 5)):
        w = words[j]
        if j == 1 and (w in _RELATION_SET or w in ("new", "old")):
            if w in _RELATION_SET:
                return False
            continue
        following = words[j + 1] if j + 1 < len(words) else ""
        if w in ("is", "are") and following.endswith("ing") and len(following) > 4:
            return j > 1
        if w in _NOT_HAPPENING:
            return False
        found = lemmas(w)
        if "VERB" not in found:
            continue
        if "NOUN" not in found or is_past_form(w) or following in _OBJECT_WORDS:
            return j > 1
    return False


# "signed off on the 4th, and on the 18th I start the new job", "ran Leeds on Sunday, Bath
# next month": one sentence, a day behind and a day ahead in clauses of their own, is
# two notes (an event and a plan), each dated by its own clause
_CLAUSE_JOINT = re.compile(r"\s*;\s*|,\s+(?:(?:and|but|then|so|while)\s+)?", I)


def dated_clauses(sentence: str, reference: datetime) -> list[str]:
    """`sentence`, or its two clauses where one is dated only behind today and the other only ahead."""
    joints = list(_CLAUSE_JOINT.finditer(sentence))
    if not joints:
        return [sentence]
    mentions = resolve_dates(sentence, reference)
    if len(mentions) < 2:
        return [sentence]
    today = reference.date()

    def side(m: DateMention) -> int:
        return -1 if (m.end or m.start) < today else 1 if m.start > today else 0

    for joint in joints:
        before = {side(m) for m in mentions if m.span[1] <= joint.start()}
        after = {side(m) for m in mentions if m.span[0] >= joint.end()}
        if len(before) == len(after) == 1 and before | after == {-1, 1}:
            return [sentence[: joint.start()].rstrip(" ,;"), sentence[joint.end() :]]
    return [sentence]


def dated_note(s: Sentence, reference: datetime, speaker: str | None, message: str = "") -> NoteOp | None:
    s = _unquoted(s)
    if s.question or s.conditional or _PRONOUN_START.match(s.text) or _ANNUAL.match(s.text):
        return None
    mentions = resolve_dates(s.raw, reference, default_tense=s.tense_hint)
    happening = _household_happening(s.raw, mentions)
    if not (
        _told_by_speaker(s, message)
        or re.search(rf"\b(?:{_EVENT_NOUNS})\b", s.text, I)
        or _RELATIVE_SUBJECT.match(s.text)
        or happening
    ):
        return None
    if _TALK.match(s.text):
        return None
    if not (happening or _has_activity(s.text) or _scheduled(s.text, mentions, reference.date())):
        return None
    if mentions:
        grounded, _ = ground(s.raw.rstrip(), reference, default_tense=s.tense_hint)
        # the most precise mention dates the note: "the move was last year; the lease began 5 weeks back"
        mention = min(mentions, key=lambda d: _GRANULARITY[d.granularity])
        kind = _kind(mention, s.text, reference.date())
        if (
            kind == "plan"
            and _ONLY_WOULD.search(s.text)
            and sentence_tense(_WOULD_CLAUSE.sub(" ", s.text)) != "future"
        ):
            return None  # "would go again tomorrow": a wish, nothing arranged
        if (
            kind == "plan"
            and _group_undertaking(s.text)
            and not _outing(s.text)
            and not _household_arrangement(s.text)
        ):
            kind = "decision"  # a group's dated undertaking: "we launch in May", "our team moves office on the 3rd"
        return _note(kind, grounded, occurred_at=_at(mention.start, reference), speaker=speaker)
    if _just_happened(s.text):
        return _note("event", s.raw, occurred_at=_at(reference.date(), reference), speaker=speaker)
    if (life := _LIFE_PAST.match(s.text)) and _did_something(s.text[life.end() :]):
        return _note("event", s.raw, occurred_at=None, speaker=speaker)  # a time of life, no calendar date
    return None


# "on Friday I see the consultant", "tomorrow we're off to the coast": the present tense of a
# first person with a coming day is a timetable (English says what is arranged in the present)
_FIRST_PERSON_VERB = re.compile(
    r"\b(?:I|we)\s+(?:(?:also|then|finally|just|only)\s+)?(?P<v>[a-z]+)\b(?:\s+(?P<next>[a-z]+)\b)?",
    I,
)
# nothing arranged: "on Saturday I have no plans", "I don't work on the 3rd"
_NOTHING = re.compile(r"\b(?:no|not|never|nothing|don't|do\s+not|won't)\b", I)
_NOT_ARRANGED = {
    "love", "like", "hate", "want", "need", "know", "think", "feel", "hope", "wish", "prefer", "miss",
    "mind", "remember", "forget", "believe", "mean", "guess", "suppose", "doubt", "wonder", "bet",
    "reckon", "do", "can", "could", "should", "would", "will", "may", "might", "must", "shall",
    "always", "never", "usually", "often", "sometimes", "still", "normally", "generally", "rarely",
}  # fmt: skip
_BE_AWAY = {"back", "off", "away", "out", "home"}  # not "I am at the Hilton until Sunday": a state


def _scheduled(text: str, mentions: list[DateMention], today: date) -> bool:
    if not any(m.granularity == "day" and m.start >= today for m in mentions) or _NOTHING.search(text):
        return False
    for m in _FIRST_PERSON_VERB.finditer(text):
        verb = m["v"].lower()
        if verb in ("am", "are"):
            if (m["next"] or "").lower() in _BE_AWAY:
                return True
            continue
        if verb in _NOT_ARRANGED:
            return False
        lemma = lemmas(verb).get("VERB")
        return lemma is not None and bool(lemma) and lemma[0] == verb
    return False


# a clause that asks, without its question mark: "…, what should she do", "…, any tips"
_ASKS = re.compile(
    r"[,;:-]\s*(?:so\s+)?(?:(?:what|how|which|where|who|why)\s+(?:should|do|does|can|could|would|is|are)|"
    r"(?:should|can|could|would)\s+(?:I|she|he|they|we)|any\s+(?:tips|advice|ideas|thoughts))\b",
    I,
)


# --- people in the speaker's life -------------------------------------------------------------

_RELATIONS = "|".join(sorted((re.escape(r) for r in RELATION_WORDS), key=len, reverse=True))
# "Mum's coming to stay …", "Grandpa turns 90 …": a relative named by the word alone
_RELATIVE_SUBJECT = re.compile(rf"^(?:my\s+|our\s+)?(?:{_RELATIONS})(?:'s|\s+is|\s+and)?\b", I)
_PEOPLE = re.compile(
    rf"^(?:my|our)\s+(?:(?:best|close|old|good|older|younger|little|big|twin|step|ex)[- ]?)?(?P<rel>{_RELATIONS})\b",
    I,
)


_SPECIES_WORDS = "|".join(sorted(map(re.escape, PET_SPECIES), key=len, reverse=True))
# "my neighbour's dog barks": the sentence is about the thing owned ("'s getting married" is not)
_OWNED_THING = re.compile(
    rf"^'s\s+(?:new\s+|old\s+|little\s+|big\s+)?(?:{_SPECIES_WORDS}|car|house|flat|place|kid|kids|laptop|phone)\b",
    I,
)


def people_note(s: Sentence, reference: datetime, speaker: str | None) -> NoteOp | None:
    """What the speaker says about someone else ("my brother lives in Toronto")."""
    if s.question or s.conditional or not _PEOPLE.match(s.text) or len(s.text.split()) < 4:
        return None
    if _OWNED_THING.match(s.text[_PEOPLE.match(s.text).end() :]):  # type: ignore[union-attr]
        return None
    if _ASKS.search(s.text):  # "my cousin may be moving, how do I help her pack": a request for advice
        return None
    grounded, day = ground(s.raw.rstrip(), reference, default_tense=s.tense_hint)
    note = _note("people", grounded, occurred_at=_at(day, reference) if day else None, speaker=speaker)
    if _PEOPLE.match(s.text) and "family" not in note.tags:
        rel = _PEOPLE.match(s.text)["rel"].lower()  # type: ignore[index]
        if rel not in (
            "friend",
            "buddy",
            "mate",
            "bestie",
            "bff",
            "boss",
            "manager",
            "coworker",
            "co-worker",
            "colleague",
            "roommate",
            "flatmate",
            "housemate",
            "neighbor",
            "neighbour",
            "teammate",
            "classmate",
            "ex",
        ):
            note.tags.insert(1, "family")
    return note
