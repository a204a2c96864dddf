"""Temporal grounding: turn "yesterday" or "next Friday" into absolute dates.

Everything is resolved against the *message's* time (`reference`), never the clock, so a
conversation imported from 2023 is grounded in 2023. Pure Python: no Django, no database.

Conventions (stated once, because English is ambiguous here):

* Weeks start on Monday. "last week" is the previous Monday–Sunday, "next week" the following one.
* "next Friday" is the Friday of next week (as Duckling reads it); "this Friday" is the coming
  Friday (today if it is Friday); "last Friday" is the most recent Friday before today.
* A bare weekday ("on Saturday") looks back in past-tense sentences and forward otherwise.
* A month-day without a year ("May 3") looks back in past-tense sentences, forward in
  future-tense ones, and otherwise picks the nearer occurrence.
* Numbers in US order: "05/08/2023" is 8 May 2023, and "6/14" (no year) is 14 June, the nearest
  one in the sentence's tense.
* Easter and the feasts around it (Good Friday, Easter Monday) are computed (dateutil's Western
  computus); fixed holidays are their calendar day.

How a text is read: chat spellings are first rewritten into the grammar's own words
(`rewrite_spellings`: "nxt tues", "sept", "the twelfth", "in '19", "twenty nineteen", "couple
weeks", "Monday just gone"), keeping each character's origin so spans stay on the original text.
Then every rule matches and the longest reading of a stretch wins. The composable rules read
[modifier] [ordinal | number] [unit | weekday | month | season | holiday] [anchor]: a named thing
counted back ("two summers ago"), stepped past ("the Christmas before last"), set against an
anchor the grammar resolves itself ("the Tuesday after Easter", "the week before Christmas"), a
part of a period ("the tail end of June"), so many units back from a day ("two years ago
today"). A date's own words fix its tense before the sentence's do: "since" looks back, "by" and
"until" ahead, and so does a copula on the date ("Saturday was …", "the 3rd is …").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache
from typing import Literal

import lemminflect
from dateutil.easter import easter as _easter

from memory.text import sentence_breaks

Granularity = Literal["day", "week", "month", "year"]
Tense = Literal["past", "future"] | None


@dataclass(frozen=True)
class DateMention:
    span: tuple[int, int]
    phrase: str
    start: date
    end: date | None
    granularity: Granularity

    def label(self) -> str:
        """The absolute date as it is written into grounded text."""
        if self.granularity == "year":
            return str(self.start.year)
        if self.granularity == "month":
            label = f"{calendar.month_name[self.start.month]} {self.start.year}"
            if self.end and (self.end.year, self.end.month) != (self.start.year, self.start.month):
                label += f" to {calendar.month_name[self.end.month]} {self.end.year}"
            return label
        if self.granularity == "week":
            # Calendar weeks ("last week") have a range; "2 weeks ago" is only roughly a day.
            return f"week of {self.start.isoformat()}" if self.end else f"around {self.start.isoformat()}"
        if self.end and self.end != self.start:
            return f"{self.start.isoformat()} to {self.end.isoformat()}"
        return self.start.isoformat()


WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = {
    name: index
    for index in range(1, 13)
    for name in {calendar.month_name[index].lower(), calendar.month_abbr[index].lower()}
}
MONTHS["sept"] = 9
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2,
    "a few": 3, "few": 3,
}  # fmt: skip

_WD = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# with a "next"/"last"/"on" before it a short form is a weekday too: "next Thurs", "on Weds"
_WD_SHORT = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|weds?|thu|thurs?|fri|sat|sun)\b\.?"
_SHORT_WEEKDAYS = {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_MONTH = r"(?P<month>january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_NUM = r"(?P<num>\d{1,3}|a couple(?: of)?|couple of|a few|few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?P<unit>day|weekend|fortnight|week|month|year)s?"
_DAY = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

# --- Chat spellings: a lexical pass before the grammar ----------------------------------------
# People write "nxt tues", "sept", "the twelfth", "in '19", "couple weeks back". Rather than a
# rule per spelling, the text is first rewritten into the grammar's own words (keeping, for
# every character, where it came from, so spans and grounding stay on the original text).

_ORDINAL_UNITS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
_ORDINAL_WORDS = {w: i + 1 for i, w in enumerate(_ORDINAL_UNITS)} | {
    w: i + 10
    for i, w in enumerate(
        ["tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
         "seventeenth", "eighteenth", "nineteenth", "twentieth"]
    )
} | {f"twenty{sep}{w}": 21 + i for i, w in enumerate(_ORDINAL_UNITS) for sep in ("-", " ")} | {
    "thirtieth": 30, "thirty-first": 31, "thirty first": 31,
}  # fmt: skip
_ORDINAL_WORD = "|".join(sorted(_ORDINAL_WORDS, key=len, reverse=True)).replace(" ", r"\s+")
_MONTH_NAMES = "january|february|march|april|may|june|july|august|september|october|november|december"
_NUMBER_WORDS_99 = {
    w: i for i, w in enumerate(
        ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"],
        start=10,
    )
} | {
    f"{tens}{sep}{unit}".strip("-").strip(): t * 10 + u
    for t, tens in enumerate(["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])
    if tens
    for u, unit in enumerate(["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])
    for sep in (("",) if not unit else ("-", " "))
}  # fmt: skip
_YEAR_TAIL = "|".join(sorted(_NUMBER_WORDS_99, key=len, reverse=True)).replace(" ", r"\s+")
_UNITS_ONE_TO_NINE = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def _ordinal_suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _ordinal(word: str) -> str:
    n = _ORDINAL_WORDS[" ".join(word.lower().split()).replace("twenty ", "twenty ")]
    return f"{n}{_ordinal_suffix(n)}"


def _year_words(m: re.Match[str]) -> str:
    head = m["head"].lower()
    tail = " ".join(m["tail"].lower().replace("-", " ").split())
    if head == "two thousand":
        return str(2000 + _UNITS_ONE_TO_NINE.index(tail) + 1)
    n = _NUMBER_WORDS_99.get(tail) or _NUMBER_WORDS_99.get(tail.replace(" ", "-"))
    return str((1900 if head == "nineteen" else 2000) + (n or 0))


_FULL_MONTHS = {calendar.month_name[i].lower(): calendar.month_name[i] for i in range(1, 13)}
_MONTH_ABBREVIATIONS = {
    "jan": "January", "feb": "February", "apr": "April", "jun": "June", "jul": "July", "aug": "August",
    "sep": "September", "sept": "September", "oct": "October", "nov": "November", "dec": "December",
}  # fmt: skip
_REL_WORDS = r"next|last|this|on|by|from|until|till|coming|every|each"
_Spelling = tuple[re.Pattern[str], Callable[[re.Match[str], date], str]]
_SPELLINGS: list[_Spelling] = [
    (re.compile(p, re.IGNORECASE), f)
    for p, f in [
        (r"\bnxt\b", lambda m, ref: "next"),
        (
            r"\b(?:tmrw|tmrow|tmw|tmoz|tomoz|2moro|2morrow|tomorow|tommorow|tommorrow|tomorro)\b",
            lambda m, ref: "tomorrow",
        ),
        (r"\b(?:yday|yesterdy|yesturday|yestarday)\b", lambda m, ref: "yesterday"),
        (r"\b(?:tonite|2nite)\b", lambda m, ref: "tonight"),
        (r"\b(?:wknd|wkend)\b", lambda m, ref: "weekend"),
        (r"\bwks\b", lambda m, ref: "weeks"),
        (r"\bwk\b", lambda m, ref: "week"),
        (r"\b(?:xmas|x-mas|crimbo|chrimbo)\b", lambda m, ref: "Christmas"),
        (r"\bhols\b", lambda m, ref: "holidays"),
        (r"\btues?\b\.?", lambda m, ref: "Tuesday"),
        (r"\bweds\b\.?", lambda m, ref: "Wednesday"),
        (r"\bthu(?:rs?)?\b\.?", lambda m, ref: "Thursday"),
        (r"\bfri\b\.?", lambda m, ref: "Friday"),
        # "mon", "wed", "sat", "sun" are words too: only after a word that introduces a day
        (
            rf"\b(?:{_REL_WORDS})\s+(?P<w>mon|wed|sat|sun)\b\.?",
            lambda m, ref: (
                m.group(0)[: m.start("w") - m.start()]
                + {"mon": "Monday", "wed": "Wednesday", "sat": "Saturday", "sun": "Sunday"}[m["w"].lower()]
            ),
        ),
        # "Monday just gone", "Wednesday gone": last Monday; "this Friday coming": this coming Friday
        (rf"\b(?P<wd>{_WD[7:-1]})\s+(?:just\s+)?gone\b", lambda m, ref: f"last {m['wd']}"),
        (rf"\bthis\s+(?P<wd>{_WD[7:-1]})\s+coming\b", lambda m, ref: f"this coming {m['wd']}"),
        (
            r"\b(?P<w>jan|feb|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?",
            lambda m, ref: _MONTH_ABBREVIATIONS[m["w"].lower()],
        ),
        # a lower-case month name ("june was mad") is a month as a capitalised one is
        (
            r"(?-i:\b(?:january|february|april|june|july|august|september|october|november|december)\b)",
            lambda m, ref: _FULL_MONTHS[m.group(0)],
        ),
        (r"\bcouple\s+(?P<u>days|weeks|months|years|weekends)\b", lambda m, ref: f"couple of {m['u']}"),
        (
            r"\b(?P<u>fortnight|week|month|year)'s\s+time\b|\b(?P<us>days|weeks|months|years)'\s+time\b",
            lambda m, ref: m["u"] or m["us"],
        ),
        # ordinals in words, where they name a day: "the twelfth", "the twenty-third of May", "March first"
        (
            rf"\bthe\s+(?P<w>{_ORDINAL_WORD})\b(?=\s+of\s+(?:{_MONTH_NAMES}|{'|'.join(_MONTH_ABBREVIATIONS)}|next|last|this|the)\b"
            r"|\s*[,.;:!?)]|\s*$|\s+(?:was|is|I|I'm|we|we're|and|or|at|for|till|until)\b)",
            lambda m, ref: "the " + _ordinal(m["w"]),
        ),
        (
            rf"\b(?P<mo>{_MONTH_NAMES})\s+(?:the\s+)?(?P<w>{_ORDINAL_WORD})\b",
            lambda m, ref: f"{m['mo']} {_ordinal(m['w'])}",
        ),
        # years in words: "twenty nineteen", "two thousand and nine", "nineteen ninety-eight"
        (
            rf"\b(?P<head>twenty|nineteen|two\s+thousand)\s+(?:and\s+)?(?P<tail>{_YEAR_TAIL}|{'|'.join(_UNITS_ONE_TO_NINE)})\b"
            r"(?![\s-]*(?:years?|-year|minutes?|hours?|people|of\b|times?|pounds|quid|dollars|euros|kg|miles|km))",
            lambda m, ref: (
                _year_words(m)
                if m["head"].lower() != "two thousand" or m["tail"].lower() in _UNITS_ONE_TO_NINE
                else m.group(0)
            ),
        ),
        # a clipped year: "in '19", "summer of '24" (a decade "the '90s" stays)
        (
            r"(?<![\w'])['\u2019](?P<yy>\d\d)\b(?!s\b|['\u2019])",
            lambda m, ref: str(
                2000 + int(m["yy"]) if 2000 + int(m["yy"]) <= ref.year + 5 else 1900 + int(m["yy"])
            ),
        ),
    ]
]


@dataclass(frozen=True)
class _Rewritten:
    """Text rewritten into the grammar's words; `starts`/`ends` give, for each of its characters,
    the span of the original text it came from."""

    text: str
    starts: list[int]
    ends: list[int]

    def original(self, start: int, end: int) -> tuple[int, int]:
        return self.starts[start], self.ends[end - 1]


def rewrite_spellings(text: str, ref: date) -> _Rewritten:
    """`text` with chat spellings of dates in the grammar's words ("nxt tues" → "next Tuesday")."""
    current = _Rewritten(text, list(range(len(text))), list(range(1, len(text) + 1)))
    for pattern, spell in _SPELLINGS:
        pieces: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        last = 0
        for m in pattern.finditer(current.text):
            new = spell(m, ref)
            if new == m.group(0):
                continue
            pieces.append(current.text[last : m.start()])
            starts += current.starts[last : m.start()]
            ends += current.ends[last : m.start()]
            origin = current.original(*m.span())
            pieces.append(new)
            starts += [origin[0]] * len(new)
            ends += [origin[1]] * len(new)
            last = m.end()
        if not pieces:
            continue
        pieces.append(current.text[last:])
        starts += current.starts[last:]
        ends += current.ends[last:]
        current = _Rewritten("".join(pieces), starts, ends)
    return current


# Past and future cues for the sentence around a mention. Future cues win: "I've got a
# dentist appointment on Tuesday" is about the coming Tuesday although "got" is a past form.
_FUTURE_CUES = re.compile(
    r"\b(will|won't|shall|gonna|going to|plan(?:s|ning)? to|about to|can't wait|cannot wait|"
    r"upcoming|coming up|(?:i'?ve|we'?ve|have|has) got|deadline|due|scheduled|appointment|"
    r"reservation|booked|rescheduled|postponed|until|hope to|want to|need to|have to|"
    r"(?:agreed|decided|promised|planned|intend(?:ed)?|expect(?:ed)?|set|committed) to|promised|"
    # entered for something still to come: "registered for the Berlin half in April"
    r"signed up|registered for|enrolled (?:in|on|for)|"
    r"(?:plan|goal|idea|aim) is (?:to|that)|(?:from|starting|until|till|by) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    # a promise of something still to come: "I promised Tom I'd paint the fence in May"
    r"(?:agreed|promised|swore|vowed|told\s+\w+)\s+(?:\w+\s+){0,3}(?:that\s+)?(?:I|we)(?:'d|\s+would))\b|"
    r"'ll\b|\b(?:am|'m|are|'re|is|'s)\s+(?:\w+ly\s+)?\w+ing\b|"
    # "got the physio Tuesday", "I got an interview on the 9th": "got" holding an appointment is
    # "have got", the present of something booked (not "got a ticket on the 3rd", a thing received)
    r"(?:^|\b(?:I|we)\s+)got\s+(?:a|an|the|my|our|this|that|another)?\s*(?:\w+\s+)?"
    r"(?:appointment|appt|dentist|doctor|gp|gig|interview|exam|meeting|match|flight|scan|class|party|"
    r"wedding|shift|date|test|check-?up|hearing|viewing|audition|concert|show)"
    r"(?=\s+(?:on|at|in|this|next|tomorrow|tonight|today|for|with|and)\b|\s*(?:[,.;!]|$))|"
    # the present of a timetable is about what is coming: "the course starts on the 20th"
    r"\b(?:starts|begins|kicks\s+off|opens|departs|arrives|lands|ends|finishes|closes|is\s+on|are\s+on)\b|"
    # "I start on the 4th": a first person's timetable
    r"\b(?:I|we)\s+(?:start|begin|leave|fly|finish|graduate|launch|move|open|close|ship|sign|exchange|complete)\b|"
    # a present passive is what is arranged: "the sofa gets delivered on the 20th"
    r"\b(?:gets|get)\s+(?:\w+ed|done|fitted|built|sent|taken|seen|shown|sold|paid|made)\b|"
    # rescheduled: "the review got moved to Friday"
    r"\b(?:got|was|were|has\s+been|have\s+been)\s+(?:moved|pushed(?:\s+back)?|bumped|changed)\s+to\b",
    re.IGNORECASE,
)
_PAST_CUES = re.compile(
    r"\b(was|were|went|did|had|got|came|saw|met|took|made|spent|ran|left|bought|ate|told|said|"
    r"flew|drove|began|felt|found|gave|heard|kept|lost|paid|sent|sat|slept|spoke|thought|won|"
    r"wrote|broke|caught|fell|forgot|grew|hit|held|led|rode|sang|sold|swam|taught|threw|wore|"
    # "last" is past only as a time ("last week", "last March"): "my last day" is no tense
    r"ago|used to|(?<!the )(?<!my )(?<!our )last(?=\s+(?:night|time|week|weekend|month|year|term|semester|season|summer|winter|spring|autumn|"
    r"fall|christmas|easter|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|"
    r"april|may|june|july|august|september|october|november|december)\b)|"
    r"earlier|already|done|split up|broke up|passed away|(?<!fingers )(?!(?:ne|fe|se|spe|procee|exce|succee)ed\b)\w{2,}ed)\b",
    re.IGNORECASE,
)


@cache
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's lemmas of `word` by part of speech ({} for a word its lexicon lacks)."""
    return lemminflect.getAllLemmas(word)


@cache
def _simple_past(word: str) -> bool:
    """Is `word` the simple past of a verb ("drove", "spent", "quit"), by lemminflect's tables?"""
    lemma = lemmas(word).get("VERB")
    if not lemma:
        return False
    return word in (lemminflect.getInflection(lemma[0], tag="VBD") or ())


_WORD = re.compile(r"[a-z]+")
# a form that is both present and past ("quit", "put", "read") is past right after a subject
_SUBJECT_THEN = re.compile(
    r"\b(?:I|we|he|she|they|you)\s+(?:just\s+|then\s+|finally\s+)?(?P<w>[a-z]+)\b|"
    # a noun subject, with an object after the verb: "the council cut the bins back"
    r"\b(?:the|my|our|his|her|their)\s+[a-z]+\s+(?P<w2>[a-z]+)\b"
    r"(?=\s+(?:the|a|an|my|our|his|her|their|it|them|up|down|in|out|off|on|back|away)\b)",
    re.I,
)
# simple-past forms that are also everyday adjectives or nouns
_NOT_PAST = {
    "left", "used", "felt", "saw", "found", "lay", "bore", "ground", "wound", "rose", "fell",
    "would", "could", "should", "might", "must",
}  # fmt: skip


def sentence_tense(text: str) -> Tense:
    """A rough tense for one sentence: "future", "past", or None when there is no cue.
    Irregular pasts come from lemminflect ("drove", "spent", "I quit")."""
    if _FUTURE_CUES.search(text):
        return "future"
    if _PAST_CUES.search(text):
        return "past"
    lower = text.lower()
    if any(_simple_past(w) and lemmas(w)["VERB"][0] != w for w in _WORD.findall(lower) if w not in _NOT_PAST):
        return "past"
    for m in _SUBJECT_THEN.finditer(text):
        w = (m["w"] or m["w2"]).lower()
        if _simple_past(w) and w not in _NOT_PAST:
            return "past"
    return None


_CLAUSE_BREAK = re.compile(
    r",\s+(?:and|but|then|so|while)\s+(?=(?:\w+\s+){0,4}?(?:I|we|I'm|we're|I've|we've|I'll|we'll)\b)"
)


def _sentence_around(text: str, start: int, end: int) -> str:
    # a clause after ";" has a tense of its own
    breaks = sentence_breaks(text, ends=".!?;", abbreviations=False)
    # so do ", and …", ", but …", ", then …": "sold it on the 4th, and I'm buying a new one on the 30th"
    breaks = sorted(breaks + [m.span() for m in _CLAUSE_BREAK.finditer(text)])
    left = max((stop for _, stop in breaks if stop <= start), default=0)
    right = next((begin for begin, _ in breaks if begin >= end), len(text))
    return text[left:start] + " " + text[end:right]


# a date's own clause inside a sentence joined without a comma: "took up chess in May and won't
# stop bragging" (the date is the taking up, not the bragging)
_BARE_JOINT = re.compile(r"\s+(?:and|but|then|so|because|though|while)\s+", re.IGNORECASE)


_PRESENT_STATE = re.compile(r"\b(?:is|are|am|'s|'re)\s+(?:\w+\s+)?\w+ed\b", re.IGNORECASE)


def _clause_tense(text: str, start: int, end: int) -> Tense:
    """The tense of the clause the date sits in, when a bare "and"/"but" joins it to another
    that has a tense of its own; None when its clause has no cue."""
    breaks = sentence_breaks(text, ends=".!?;,", abbreviations=False) + [
        m.span() for m in _BARE_JOINT.finditer(text)
    ]
    left = max((stop for _, stop in breaks if stop <= start), default=0)
    right = min((begin for begin, _ in breaks if begin >= end), default=len(text))
    clause = text[left:start] + " " + text[end:right]
    # "the hall is booked up on Friday": a present state, whose "-ed" is no past
    if (left == 0 and right == len(text)) or _PRESENT_STATE.search(clause):
        return None
    return sentence_tense(clause)


def _number(word: str) -> int:
    word = word.lower()
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _month_range(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


class _Alias:
    """A match whose group may sit under a second name, in the other alternative of one rule
    ("a week on Friday" and "Friday week" both give "wd")."""

    def __init__(self, m: re.Match[str], **second: str) -> None:
        self._m, self._second = m, second

    def __getitem__(self, key: str) -> str | None:
        value = self._m[key]
        return value if value is not None or key not in self._second else self._m[self._second[key]]


@dataclass(frozen=True)
class _Resolved:
    start: date
    end: date | None
    granularity: Granularity


_Resolver = Callable[[re.Match[str], date, Tense], _Resolved | None]


def _day(d: date) -> _Resolved:
    return _Resolved(d, None, "day")


def _fixed(offset: int) -> _Resolver:
    return lambda m, ref, tense: _day(ref + timedelta(days=offset))


def _ago(m: re.Match[str], ref: date, tense: Tense, sign: int = -1) -> _Resolved:
    n, unit = _number(m["num"]) * sign, m["unit"].lower()
    if unit == "fortnight":
        n, unit = 2 * n, "week"
    if unit == "day":
        return _day(ref + timedelta(days=n))
    if unit == "weekend":  # "two weekends ago": the weekend before last
        saturday = (
            ref - timedelta(days=(ref.weekday() - 5) % 7 or 7)
            if n < 0
            else ref + timedelta(days=(5 - ref.weekday()) % 7 or 7)
        )
        saturday += timedelta(weeks=n + 1 if n < 0 else n - 1)
        return _Resolved(saturday, saturday + timedelta(days=1), "day")
    if unit == "week":
        return _Resolved(ref + timedelta(weeks=n), None, "week")
    if unit == "month":
        return _Resolved(add_months(ref, n), None, "month")
    return _Resolved(add_months(ref, 12 * n), None, "year")


def _in_n(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    return _ago(m, ref, tense, sign=1)


def _relative_period(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    shift = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[m["rel"].lower()]
    unit = m["unit"].lower()
    if unit == "week":
        start = _monday(ref) + timedelta(weeks=shift)
        return _Resolved(start, start + timedelta(days=6), "week")
    if unit == "weekend":
        if m["rel"].lower() == "coming":  # "this coming weekend": the next one to come
            saturday = ref + timedelta(days=(5 - ref.weekday()) % 7)
        else:
            saturday = _monday(ref) + timedelta(weeks=shift, days=5)
        return _Resolved(saturday, saturday + timedelta(days=1), "day")
    if unit == "month":
        first = add_months(ref.replace(day=1), shift)
        return _Resolved(*_month_range(first.year, first.month), "month")
    year = ref.year + shift
    return _Resolved(date(year, 1, 1), date(year, 12, 31), "year")


def _past_weekend(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    saturday = ref - timedelta(days=(ref.weekday() - 5) % 7 or 7)
    return _Resolved(saturday, saturday + timedelta(days=1), "day")


def _earlier_this(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    if m["unit"].lower() == "week":
        start = _monday(ref)
        return _Resolved(start, max(start, ref - timedelta(days=1)), "week")
    start = ref.replace(day=1)
    return _Resolved(start, max(start, ref - timedelta(days=1)), "month")


def _weekday_index(name: str) -> int:
    name = name.lower()
    return WEEKDAYS.index(name) if name in WEEKDAYS else _SHORT_WEEKDAYS[name]


def _weekday(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    target = _weekday_index(m["wd"])
    rel = (m["rel"] or "").lower()
    if rel == "next":
        return _day(_monday(ref) + timedelta(weeks=1, days=target))
    if rel in ("last", "past", "previous"):
        return _day(ref - timedelta(days=(ref.weekday() - target) % 7 or 7))
    if rel in ("this", "this coming", "coming"):
        return _day(ref + timedelta(days=(target - ref.weekday()) % 7))
    if tense == "past":
        return _day(ref - timedelta(days=(ref.weekday() - target) % 7 or 7))
    return _day(ref + timedelta(days=(target - ref.weekday()) % 7 or 7))


_PAST_PREPOSITIONS = ("since", "last")
_FUTURE_PREPOSITIONS = ("next", "by", "until", "till", "before")


def _relative_month(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    month = MONTHS[m["month"].lower()]
    rel = (m["rel"] or "").lower()
    if rel == "since":
        tense = "past"
    elif rel in ("by", "until", "till", "before", "come"):
        tense = "future"
    if rel == "next" or (rel not in _PAST_PREPOSITIONS and tense != "past"):
        strict = rel == "next"
        year = ref.year if month > ref.month or (month == ref.month and not strict) else ref.year + 1
    elif rel == "last":
        year = ref.year if month < ref.month else ref.year - 1
    else:  # "in May" in a past-tense sentence
        year = ref.year if month <= ref.month else ref.year - 1
    return _Resolved(*_month_range(year, month), "month")


SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _season_range(name: str, year: int) -> tuple[date, date]:
    """The season `name` that begins in `year` (winter runs into the next year)."""
    start = date(year, SEASONS[name.lower()], 1)
    last = add_months(start, 2)
    return start, last.replace(day=calendar.monthrange(last.year, last.month)[1])


def _season(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """Meteorological seasons, northern hemisphere: summer is June–August."""

    def instance(year: int) -> tuple[date, date]:
        return _season_range(m["season"], year)

    rel = " ".join((m["rel"] or "").lower().split())
    if rel in ("in", "during", "over", ""):
        rel = "last" if tense == "past" else "this"
    if rel in ("coming", "this coming"):  # "this coming spring": the next one to begin
        rel = "next"
    candidates = [instance(year) for year in range(ref.year - 2, ref.year + 2)]
    if rel == "last":
        start, end = max(c for c in candidates if c[1] < ref)
    elif rel == "next":
        start, end = min(c for c in candidates if c[0] > ref)
    else:  # "this summer": the one under way, else the coming one
        start, end = min(c for c in candidates if c[1] >= ref)
    return _Resolved(start, end, "month")


def _day_of_month(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    day = int(m["day"])
    this_month = _safe_date(ref.year, ref.month, day)
    if tense == "past":
        d = this_month if this_month and this_month <= ref else None
        previous = add_months(ref.replace(day=1), -1)
        d = d or _safe_date(previous.year, previous.month, day)
    else:
        d = this_month if this_month and this_month >= ref else None
        following = add_months(ref.replace(day=1), 1)
        d = d or _safe_date(following.year, following.month, day)
    return _day(d) if d else None


# "the 2nd of May next year", "June 3rd last year": the year named by its step from this one
_YEAR_REL = r"\s+(?P<yrel>next|last|this)\s+year"


def _month_day(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    month, day = MONTHS[m["month"].lower()], int(m["day"])
    if m["year"] or m["yrel"]:
        year = (
            int(m["year"]) if m["year"] else ref.year + {"next": 1, "last": -1, "this": 0}[m["yrel"].lower()]
        )
        d = _safe_date(year, month, day)
        return _day(d) if d else None
    this_year = _safe_date(ref.year, month, day)
    candidates = [c for c in (_safe_date(ref.year + k, month, day) for k in (-1, 0, 1)) if c]
    if this_year is None or not candidates:
        return None
    if tense == "past":
        return _day(max(c for c in candidates if c <= ref)) if any(c <= ref for c in candidates) else None
    if tense == "future":
        return _day(min(c for c in candidates if c >= ref)) if any(c >= ref for c in candidates) else None
    return _day(min(candidates, key=lambda c: abs((c - ref).days)))


_ORDINAL_QUARTERS = {"first": 1, "second": 2, "third": 3, "fourth": 4}


def _quarter_range(year: int, quarter: int) -> _Resolved:
    start = date(year, 3 * quarter - 2, 1)
    return _Resolved(start, _month_range(year, 3 * quarter)[1], "month")


def _quarter(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """ "Q3", "Q3 2025", "the third quarter": calendar quarters. Without a year, the coming one
    (this year's when it has not ended) unless the sentence is in the past tense."""
    quarter = int(m["q"]) if m["q"] else _ORDINAL_QUARTERS[m["ord"].lower()]
    if m["year"]:
        return _quarter_range(int(m["year"]), quarter)
    current = (ref.month - 1) // 3 + 1
    if tense == "past":
        year = ref.year if quarter <= current else ref.year - 1
    else:
        year = ref.year if quarter >= current else ref.year + 1
    return _quarter_range(year, quarter)


def _relative_quarter(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    shift = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[m["rel"].lower()]
    index = ref.year * 4 + (ref.month - 1) // 3 + shift
    return _quarter_range(index // 4, index % 4 + 1)


def _end_of_year(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """ "end of last year" is its December, "start of next year" its January."""
    year = ref.year + {"next": 1, "last": -1, "past": -1, "previous": -1}.get((m["rel"] or "").lower(), 0)
    month = 1 if (m["edge"] or "").lower() in ("start", "beginning") else 12
    return _Resolved(*_month_range(year, month), "month")


def _before_last(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """ "the week before last", "the Friday before last", "the night before last": one more
    step back than "last"."""
    unit = m["unit"].lower()
    if unit in ("day", "night"):
        return _day(ref - timedelta(days=2))
    if unit == "week":
        start = _monday(ref) - timedelta(weeks=2)
        return _Resolved(start, start + timedelta(days=6), "week")
    if unit == "weekend":
        saturday = _monday(ref) - timedelta(weeks=2) + timedelta(days=5)
        return _Resolved(saturday, saturday + timedelta(days=1), "day")
    if unit == "month":
        first = add_months(ref.replace(day=1), -2)
        return _Resolved(*_month_range(first.year, first.month), "month")
    if unit == "year":
        return _Resolved(date(ref.year - 2, 1, 1), date(ref.year - 2, 12, 31), "year")
    return _nth_weekday_ago(_weekday_index(unit), 2, ref)


def _nth_weekday_ago(target: int, n: int, ref: date) -> _Resolved:
    last = ref - timedelta(days=(ref.weekday() - target) % 7 or 7)
    return _day(last - timedelta(weeks=n - 1))


def _weekdays_ago(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """ "two Fridays ago": the Friday before last Friday (the most recent one is "a Friday ago")."""
    return _nth_weekday_ago(_weekday_index(m["wd"]), _number(m["num"]), ref)


def _coming_weekend(ref: date) -> _Resolved:
    """The next weekend to come (this one if today is Saturday), as "this coming weekend"."""
    saturday = ref + timedelta(days=(5 - ref.weekday()) % 7)
    return _Resolved(saturday, saturday + timedelta(days=1), "day")


def _weekday_after_next(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """ "the Monday after next": the one after "next Monday" (the Monday of next week)."""
    return _day(_monday(ref) + timedelta(weeks=2, days=_weekday_index(m["wd"])))


_ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "fifth": 5,
    "5th": 5,
    "last": -1,
    "final": -1,
}


def _nth_in_month(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    """ "the second weekend of next month", "the last Friday in June": a day counted in a month."""
    if m["month"]:
        month = MONTHS[m["month"].lower()]
        year = ref.year + (month < ref.month if tense != "past" else -(month > ref.month))
    else:
        shift = {"next": 1, "last": -1, "this": 0, "the": 0}[m["rel"].lower()]
        first = add_months(ref.replace(day=1), shift)
        year, month = first.year, first.month
    target = 5 if m["unit"].lower() == "weekend" else _weekday_index(m["unit"])
    days = [date(year, month, d) for d in range(1, calendar.monthrange(year, month)[1] + 1)]
    matching = [d for d in days if d.weekday() == target]
    n = _ORDINALS[m["ord"].lower()]
    if n > len(matching):
        return None
    day = matching[n - 1] if n > 0 else matching[-1]
    if m["unit"].lower() == "weekend":
        return _Resolved(day, day + timedelta(days=1), "day")
    return _day(day)


def _this_time(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """ "this time next week": the same day a week (month, year) on; "this time last year" back."""
    sign = 1 if m["rel"].lower() == "next" else -1
    unit = m["unit"].lower()
    if unit == "week":
        return _day(ref + timedelta(weeks=sign))
    return _day(add_months(ref, sign * (1 if unit == "month" else 12)))


def _month_year(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    return _Resolved(*_month_range(int(m["year"]), MONTHS[m["month"].lower()]), "month")


def _year(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    year = int(m["year"])
    return _Resolved(date(year, 1, 1), date(year, 12, 31), "year")


def _iso(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    d = _safe_date(int(m["y"]), int(m["m"]), int(m["d"]))
    return _day(d) if d else None


def _us(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    year = int(m["y"])
    d = _safe_date(year + 2000 if year < 100 else year, int(m["m"]), int(m["d"]))
    return _day(d) if d else None


_FIXED_HOLIDAYS = {
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25),
    "boxing day": (12, 26), "new year's eve": (12, 31), "new years eve": (12, 31), "nye": (12, 31),
    "new year's day": (1, 1), "halloween": (10, 31), "valentine's day": (2, 14), "valentine's": (2, 14),
    "valentines": (2, 14), "valentines day": (2, 14), "new years day": (1, 1), "bonfire night": (11, 5),
}  # fmt: skip


# movable feasts: days from Western Easter Sunday (dateutil's computus)
_EASTER_OFFSETS = {
    "easter": 0, "easter sunday": 0, "easter day": 0, "easter monday": 1, "easter saturday": -1,
    "good friday": -2, "maundy thursday": -3, "shrove tuesday": -47, "pancake day": -47,
}  # fmt: skip


def holiday_on(name: str, year: int) -> date:
    """The day of a named holiday in `year` ("christmas", "easter monday" …, lower case)."""
    name = " ".join(name.lower().replace("\u2019", "'").split())
    if name in _EASTER_OFFSETS:
        return _easter(year) + timedelta(days=_EASTER_OFFSETS[name])
    month, day = _FIXED_HOLIDAYS[name]
    return date(year, month, day)


def _holiday(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    """Christmas, Easter, Halloween …: this year's unless it has passed (or, told in the past
    tense, has not yet come), then the neighbouring year's. "last"/"next" shift by a year."""
    name = m["holiday"]

    def on(year: int) -> date:
        return holiday_on(name, year)

    rel = (m["rel"] or "").lower()
    this = on(ref.year)
    if rel == "last" or (not rel and tense == "past"):
        d = this if this < ref else on(ref.year - 1)
    elif rel == "next":
        d = this if this > ref else on(ref.year + 1)
    else:
        d = this if this >= ref or rel == "this" else on(ref.year + 1)
    return _day(d)


_HOLIDAYS = (
    r"christmas\s+eve|christmas\s+day|christmas|xmas|boxing\s+day|new\s+year'?s\s+eve|nye|new\s+year'?s\s+day|"
    r"halloween|valentine'?s(?:\s+day)?|valentines|bonfire\s+night|easter\s+(?:sunday|day|monday|saturday)|easter|"
    r"good\s+friday|maundy\s+thursday|shrove\s+tuesday|pancake\s+day"
)


def _week_on(m: re.Match[str] | _Alias, ref: date, tense: Tense) -> _Resolved:
    """ "a week today", "a week on Friday", "Saturday week", "two weeks tomorrow": the day named,
    then that many weeks on."""
    unit = (m["wunit"] or m["wunit2"] or "").lower()
    weeks = (_number(m["num"]) if m["num"] else 1) * (2 if unit.startswith("fortnight") else 1)
    base = (m["base"] or "").lower()
    if base in ("today", "tonight"):
        day = ref
    elif base == "tomorrow":
        day = ref + timedelta(days=1)
    else:
        day = ref + timedelta(days=(_weekday_index(m["wd"] or "") - ref.weekday()) % 7 or 7)
    return _day(day + timedelta(weeks=weeks))


def _until(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    """ "ten days till the move", "3 weeks until we fly": a count to something ahead; in a story
    ("two years before we married") the count is to a day the sentence does not give."""
    return None if tense == "past" else _ago(m, ref, tense, sign=1)


def _weekend_after_next(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    unit = m["unit"].lower()
    if unit == "week":
        start = _monday(ref) + timedelta(weeks=2)
        return _Resolved(start, start + timedelta(days=6), "week")
    saturday = _monday(ref) + timedelta(weeks=2, days=5)
    return _Resolved(saturday, saturday + timedelta(days=1), "day")


# --- The composable part of the grammar ----------------------------------------------------------
# [modifier] [ordinal | number] [unit | weekday | month | season | holiday] [anchor]: a named
# thing (a season, a holiday, a weekday) counted back ("two summers ago"), stepped past
# ("the Christmas before last"), placed against another date ("the Tuesday after Easter", "the
# week before Christmas"), or a part of a period ("the tail end of June", "the back half of the
# month", "the second week of May"). The anchor is itself resolved by the grammar, so any
# date it knows can be an anchor.

_SEASON_WORD = r"spring|summer|autumn|fall|winter"
_NAMED = rf"(?:{_SEASON_WORD}|christmas|easter|halloween|new\s+year|bonfire\s+night|valentine'?s(?:\s+day)?)"
_NAMED_PLURAL = {
    "springs": "spring", "summers": "summer", "autumns": "autumn", "falls": "fall", "winters": "winter",
    "christmases": "christmas", "easters": "easter", "halloweens": "halloween", "new years": "new year's day",
}  # fmt: skip


def _named_instances(name: str, ref: date, back: int) -> _Resolved | None:
    """The `back`-th past instance of a season or holiday: 1 is the last one that has ended
    ("last summer"), 2 the one before ("two summers ago", "the summer before last")."""
    name = " ".join(name.lower().split())
    name = {"new year": "new year's day", "valentines": "valentine's", "valentine's day": "valentine's"}.get(
        name, name
    )
    if name in SEASONS:
        past = [
            r
            for r in (_season_range(name, y) for y in range(ref.year - back - 2, ref.year + 1))
            if r[1] < ref
        ]
        start, end = past[-back]
        return _Resolved(start, end, "month")
    past_days = [
        d for d in (holiday_on(name, y) for y in range(ref.year - back - 1, ref.year + 1)) if d < ref
    ]
    return _day(past_days[-back])


def _named_ago(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    name = " ".join(m["things"].lower().split())
    return _named_instances(_NAMED_PLURAL.get(name, name.rstrip("s")), ref, _number(m["num"]) + 0)


def _named_before_last(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    return _named_instances(m["named"], ref, 2)


def _anchor(text: str, ref: date, tense: Tense) -> date | None:
    mentions = resolve_dates(text, ref, default_tense=tense)
    return mentions[0].start if mentions else None


def _against_anchor(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    """ "the Tuesday after Easter", "the week before Christmas", "the day after Boxing Day",
    "the weekend after my birthday on the 9th": a step from a date the grammar resolves."""
    anchor = _anchor(m["anchor"], ref, tense)
    if anchor is None:
        return None
    what, after = m["what"].lower(), m["dir"].lower() == "after"
    if what in ("day", "night"):
        return _day(anchor + timedelta(days=1 if after else -1))
    if what == "week":
        start = _monday(anchor) + timedelta(weeks=1 if after else -1)
        return _Resolved(start, start + timedelta(days=6), "week")
    target = 5 if what == "weekend" else _weekday_index(what)
    if after:
        day = anchor + timedelta(days=(target - anchor.weekday()) % 7 or 7)
    else:
        day = anchor - timedelta(days=(anchor.weekday() - target) % 7 or 7)
        if what == "weekend" and (anchor - day).days < 2:  # Saturday before a Sunday is that weekend
            day -= timedelta(weeks=1)
    return _Resolved(day, day + timedelta(days=1), "day") if what == "weekend" else _day(day)


def _ago_on_day(m: re.Match[str], ref: date, tense: Tense) -> _Resolved:
    """ "two years ago today", "a month ago yesterday": that very day, so many units back."""
    base = ref + timedelta(days={"today": 0, "yesterday": -1, "tomorrow": 1}[m["base"].lower()])
    n, unit = _number(m["num"]), m["unit"].lower()
    if unit == "week":
        return _day(base - timedelta(weeks=n))
    return _day(add_months(base, -n * (12 if unit == "year" else 1)))


_START_PARTS = {
    "start",
    "beginning",
    "first week",
    "first few days",
    "first days",
    "first half",
    "front end",
    "early part",
}
_END_PARTS = {
    "end", "tail end", "back end", "close", "last week", "final week", "last few days", "last days",
    "second half", "back half", "latter half", "latter part", "later part",
}  # fmt: skip
_PARTS = (
    r"tail\s+end|back\s+end|front\s+end|back\s+half|front\s+half|first\s+half|second\s+half|latter\s+half|"
    r"latter\s+part|early\s+part|later\s+part|(?:first|second|third|fourth|last|final)\s+week|"
    r"(?:first|last)\s+(?:few\s+)?days|start|beginning|end|middle|close"
)


def _part_of(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    """A part of a month or year: the month itself (a month is as precise as its weeks are told),
    or a year's first or last month for its start or end, else the year."""
    part = " ".join(m["part"].lower().split())
    if m["month"]:
        if m["year"]:
            return _Resolved(*_month_range(int(m["year"]), MONTHS[m["month"].lower()]), "month")
        return _relative_month(m, ref, tense)
    shift = {"next": 1, "last": -1, "past": -1, "previous": -1}.get((m["prel"] or "").lower(), 0)
    if m["unit"].lower() == "month":
        first = add_months(ref.replace(day=1), shift)
        return _Resolved(*_month_range(first.year, first.month), "month")
    year = ref.year + shift
    if part in _START_PARTS:
        return _Resolved(*_month_range(year, 1), "month")
    if part in _END_PARTS and "half" not in part and "part" not in part:
        return _Resolved(*_month_range(year, 12), "month")
    return _Resolved(date(year, 1, 1), date(year, 12, 31), "year")


def _period_of_ref(m: re.Match[str] | _Alias, ref: date, tense: Tense) -> _Resolved:
    """ "at month end", "before the month is out", "before next month ends": that month (year)."""
    shift = {"next": 1, "last": -1}.get((m["prel"] or "").lower(), 0)
    if (m["unit"] or "").lower() == "year":
        return _Resolved(date(ref.year + shift, 1, 1), date(ref.year + shift, 12, 31), "year")
    first = add_months(ref.replace(day=1), shift)
    return _Resolved(*_month_range(first.year, first.month), "month")


def _numeric_day(m: re.Match[str], ref: date, tense: Tense) -> _Resolved | None:
    """ "on 03/15", "6/14 is the wedding": month first, as the module's numbers are, and without a
    year the nearest in the sentence's tense (as "May 3")."""
    month, day = int(m["m"]), int(m["d"])
    candidates = [c for c in (_safe_date(ref.year + k, month, day) for k in (-1, 0, 1)) if c]
    if not candidates:
        return None
    if tense == "past":
        past = [c for c in candidates if c <= ref]
        return _day(max(past)) if past else None
    if tense == "future":
        coming = [c for c in candidates if c >= ref]
        return _day(min(coming)) if coming else None
    return _day(min(candidates, key=lambda c: abs((c - ref).days)))


def _numeric_day_plausible(text: str, m: re.Match[str]) -> bool:
    """ "1/2 the cake", "24/7", "60/40" are no dates: a bare m/d needs a preposition before it,
    to open the sentence, or to be what the sentence is ("6/14 is our day")."""
    if m["pre"]:
        return True
    before = text[: m.start()].rstrip()
    after = text[m.end() :]
    if re.match(r"\s+(?:of|the|a|an|cups?|tsp|tbsp|inch\w*|miles?|km|kg|lbs?|mg|ml|split)\b", after, re.I):
        return False
    return not before or before[-1] in ",.;:!?(-" or bool(re.match(r"\s+(?:is|was|it\s+is)\b", after, re.I))


def _plain(pattern: str) -> str:
    """`pattern` without its group names, to sit inside another (an anchor resolved on its own)."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


# Ordered longest-first; overlapping later matches are dropped.
_RULES: list[tuple[re.Pattern[str], _Resolver]] = [
    (re.compile(p, re.IGNORECASE), r)
    for p, r in [
        (r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b", _iso),
        (r"\b(?P<m>0?[1-9]|1[0-2])/(?P<d>0?[1-9]|[12]\d|3[01])/(?P<y>\d{4}|\d{2})\b", _us),
        (
            r"(?:\b(?P<pre>on|by|from|until|till|before|after|since)\s+)?(?<![\w/.])"
            r"(?P<m>0?[1-9]|1[0-2])/(?P<d>0?[1-9]|[12]\d|3[01])(?![\w/%.]|\.\d)",
            _numeric_day,
        ),
        (
            rf"\bthe\s+(?P<what>{_WD[7:-1]}|day|night|weekend|week)\s+(?P<dir>after|before)\s+"
            rf"(?P<anchor>(?:(?:last|next|this)\s+)?(?:{_HOLIDAYS})|{_plain(_MONTH)}\s+{_plain(_DAY)}|"
            rf"(?:the\s+)?{_plain(_DAY)}\s+(?:of\s+)?{_plain(_MONTH)})\b",
            _against_anchor,
        ),
        (
            rf"\b{_NUM}\s+(?P<things>springs|summers|autumns|falls|winters|christmases|easters|halloweens|new\s+years)\s+(?:ago|back)\b",
            _named_ago,
        ),
        (rf"\b(?:the\s+)?(?P<named>{_NAMED})\s+before\s+last\b", _named_before_last),
        (
            rf"\b{_NUM}\s+(?P<unit>week|month|year)s?\s+(?:ago|back)\s+(?P<base>today|yesterday|tomorrow)\b",
            _ago_on_day,
        ),
        (
            rf"\b(?:the\s+)?(?P<part>{_PARTS})\s+of\s+(?:(?P<prel>next|last|this|the|past|previous)\s+(?P<unit>month|year)\b|"
            rf"(?P<rel>){_MONTH}(?:,?\s+{_YEAR})?\b)",
            _part_of,
        ),
        (
            r"\b(?:at\s+)?(?:the\s+)?(?P<unit>month|year)(?:'s)?[\s-]end\b(?P<prel>)|"
            r"\b(?:the|(?P<prel2>next|this))\s+(?P<unit2>month|year)\s+(?:ends|is\s+out|is\s+over|runs\s+out)\b",
            lambda m, ref, tense: _period_of_ref(_Alias(m, prel="prel2", unit="unit2"), ref, tense),
        ),
        (
            r"\b(?P<when>earlier|later)\s+in\s+the\s+(?P<unit>week|month)\b",
            lambda m, ref, tense: (
                _earlier_this(m, ref, tense)
                if m["when"].lower() == "earlier"
                else _Resolved(*_month_range(ref.year, ref.month), "month")
            ),
        ),
        (r"\bthe day before yesterday\b", _fixed(-2)),
        (r"\bthe day after tomorrow\b", _fixed(2)),
        (
            r"\b(?:the\s+)?(?P<unit>day|night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+before\s+last\b",
            _before_last,
        ),
        (rf"\b{_NUM}\s+{_WD}s\s+(?:ago|back)\b", _weekdays_ago),
        (r"\bthis\s+time\s+(?P<rel>next|last)\s+(?P<unit>week|month|year)\b", _this_time),
        (rf"\bthe\s+{_WD}\s+after\s+next\b", _weekday_after_next),
        (
            r"\b(?:the\s+)?(?P<ord>first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last|final)\s+"
            r"(?P<unit>weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+(?:of|in)\s+"
            rf"(?:(?P<rel>next|last|this|the)\s+month|{_MONTH})\b",
            _nth_in_month,
        ),
        (rf"\b{_NUM}\s+{_UNIT}\s+(?:from\s+now|from\s+today|from\s+tomorrow|on\s+from\s+now|out)\b", _in_n),
        # "done by end of week": this week (its Friday, as a working week ends)
        (
            r"\b(?:the\s+)?end\s+of\s+(?:the|this)\s+week\b",
            lambda m, ref, tense: _day(max(ref, _monday(ref) + timedelta(days=4))),
        ),
        # "at the weekend" (British): the coming one, or the one just gone in a story
        (
            r"\b(?:at|on)\s+the\s+weekend\b",
            lambda m, ref, tense: _past_weekend(m, ref, tense) if tense == "past" else _coming_weekend(ref),
        ),
        (rf"\b{_NUM}\s+{_UNIT}\s+(?:ago|back|before\s+now)\b", _ago),
        (r"\bthe\s+(?P<unit>weekend|week)\s+after\s+next\b", _weekend_after_next),
        (
            rf"\b(?<!times\s)(?<!once\s)(?<!twice\s)(?:{_NUM}\s+(?P<wunit>weeks?|fortnights?)\s+(?:on\s+|from\s+)?(?:(?P<base>today|tonight|tomorrow)|(?:on\s+)?{_WD_SHORT})|"
            rf"(?:on\s+)?(?<!every\s){_WD.replace('wd', 'wd2')}\s+(?P<wunit2>week|fortnight)(?!\w|\s+(?:after|before|of)\b))",
            lambda m, ref, tense: _week_on(_Alias(m, wd="wd2"), ref, tense),
        ),
        (
            # not a stretch of time: "for six years before I left" dates nothing
            rf"\b(?<!for\s)(?<!for\sabout\s)(?<!for\sover\s){_NUM}\s+{_UNIT}\s+(?:till|until|til|to\s+go\s+(?:till|until)|before)(?=\s+(?:I|we|the|my|our)\b)",
            _until,
        ),
        (
            rf"\b(?:the\s+)?(?:end|start|beginning|middle)\s+of\s+(?:(?P<rel>next|last|this)\s+)?{_MONTH}\b",
            _relative_month,
        ),
        (
            rf"\b(?:(?P<rel>last|next|this)\s+)?(?P<holiday>{_HOLIDAYS})\b"
            r"(?!\s+(?:tree|trees|jumper|jumpers|cards?|lights|decorations|presents?|shopping|markets?|films?|"
            r"movies?|songs?|music|spirit|pudding|cake|number|list|costumes?|egg|eggs|bunny|hunt|chocolate)\b)",
            _holiday,
        ),
        (rf"\bin\s+{_NUM}\s+{_UNIT}\b", _in_n),
        (
            rf"\b(?:(?-i:Q)(?P<q>[1-4])|the\s+(?P<ord>first|second|third|fourth)\s+quarter)"
            rf"(?:\s+(?:of\s+)?{_YEAR})?\b",
            _quarter,
        ),
        (r"\b(?P<rel>last|next|this|coming|past|previous)\s+quarter\b", _relative_quarter),
        (
            r"\b(?:the\s+)?(?P<edge>end|start|beginning)\s+of\s+(?:the\s+|(?P<rel>this|next|last|past|previous)\s+)?year\b",
            _end_of_year,
        ),
        # "in the new year": the coming one (in January, the one just begun)
        (
            r"\b(?:in|after|from)\s+the\s+new\s+year\b",
            lambda m, ref, tense: _Resolved(
                date(ref.year + (ref.month > 1), 1, 1), date(ref.year + (ref.month > 1), 12, 31), "year"
            ),
        ),
        # "due by month end", "the middle of this month": the month the message is in
        (
            r"\b(?:the\s+)?(?:end|last\s+day|last\s+week|middle)\s+of\s+(?:the|this)\s+month\b",
            lambda m, ref, tense: _Resolved(*_month_range(ref.year, ref.month), "month"),
        ),
        (r"\bearlier\s+this\s+(?P<unit>week|month)\b", _earlier_this),
        # "this past week": the seven days up to today, not the calendar week before this one
        (r"\bthis\s+past\s+week\b", lambda m, ref, tense: _Resolved(ref - timedelta(days=6), ref, "week")),
        (
            r"\b(?:this|the)\s+past\s+weekend\b|\bover\s+the\s+weekend\b|\b(?:the\s+|this\s+)?weekend\s+just\s+gone\b",
            _past_weekend,
        ),
        # "the weekend after this": the weekend of next week
        (
            r"\bthe\s+weekend\s+after\s+(?:this|the\s+coming)(?:\s+one)?\b",
            lambda m, ref, tense: _coming_weekend(ref + timedelta(days=7)),
        ),
        (
            r"\b(?:the\s+)?(?:end|close)\s+of\s+next\s+week\b",
            lambda m, ref, tense: _day(_monday(ref) + timedelta(weeks=1, days=4)),
        ),
        (rf"\b(?:on\s+)?(?P<rel>next|last|this coming|this|coming|past|previous)\s+{_WD_SHORT}", _weekday),
        (
            r"\b(?P<rel>last|next|this|coming|past|previous)\s+(?P<unit>weekend|week|month|year)\b",
            _relative_period,
        ),
        (rf"\b{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR}|{_YEAR_REL})?\b(?!:)", _month_day),
        (rf"\b(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR}|{_YEAR_REL})?\b", _month_day),
        # "the autumn of 2021", "summer 2019": that season of that year
        (
            rf"\b(?:the\s+)?(?P<season>spring|summer|autumn|fall|winter)\s+(?:of\s+)?{_YEAR}\b",
            lambda m, ref, tense: _Resolved(
                date(int(m["year"]), SEASONS[m["season"].lower()], 1),
                add_months(date(int(m["year"]), SEASONS[m["season"].lower()], 1), 2),
                "month",
            ),
        ),
        (rf"\b{_MONTH},?\s+{_YEAR}\b", _month_year),
        (
            rf"\b(?P<rel>next|last|this|in|by|until|till|since|before|of|for|during|around|early|mid|late|come)"
            rf"(?:\s+|(?<=mid)-|(?<=early)-|(?<=late)-)(?:(?:early|mid|late)-?\s*)?{_MONTH}\b",
            _relative_month,
        ),
        (
            r"\b(?:(?P<rel>last|this\s+coming|this|next|coming|in|during|over)\s+(?:the\s+)?|the\s+)(?P<season>spring|summer|autumn|fall|winter)\b",
            _season,
        ),
        (rf"\b(?:in|since|during|back in)\s+{_YEAR}\b", _year),
        (
            rf"(?:\b(?:spent|throughout|all\s+of|most\s+of|over|around|from|until|till|by)\s+|^){_YEAR}\b(?![\d/.-]|\s+(?:people|of|pounds|quid|dollars|euros|steps|calories|words|miles|km|feet|metres|meters)\b)",
            _year,
        ),
        (r"\b(?:yesterday|last night)\b", _fixed(-1)),
        # vague but recent: "the other day" is a few days back
        (
            r"\bthe\s+other\s+(?:day|night)\b",
            lambda m, ref, tense: _Resolved(ref - timedelta(days=2), None, "week"),
        ),
        # "the other week": a week or two back
        (
            r"\bthe\s+other\s+week\b",
            lambda m, ref, tense: _Resolved(ref - timedelta(days=10), None, "week"),
        ),
        (r"\b(?:in\s+the\s+night|overnight|during\s+the\s+night)\b", _fixed(0)),
        (r"\btomorrow\b", _fixed(1)),
        (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", _fixed(0)),
        # not a recurring day: "every other Wednesday", "each Monday", "Mondays"
        (
            rf"\b(?:on\s+)?(?<!black )(?<!good )(?<!cyber )(?<!every )(?<!every other )(?<!each ){_WD}\b(?!s\b)(?P<rel>)",
            _weekday,
        ),
        (
            r"\b(?:on\s+|from\s+|by\s+|until\s+|till\s+|before\s+)?the\s+(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)\b"
            r"(?!\s+(?:century|time|times|floor|place|grade|anniversary|birthday|edition|round|row|street|"
            r"avenue|percentile|generation|gen|draft|version|attempt|person|day|week|month|year|of\s+\w+\s+(?:kids|children)))",
            _day_of_month,
        ),
        (rf"(?-i:\b(?=[A-Z])){_MONTH}\b(?P<rel>)", _relative_month),
    ]
]
# "may" and "march" are also verbs: only take them as months when capitalised or introduced.
_AMBIGUOUS_MONTHS = {"may", "mar", "march"}
_BARE_MONTHS = {calendar.month_name[i].lower() for i in range(1, 13)} - _AMBIGUOUS_MONTHS


# "in may", "by march", "since mar": a preposition before it makes the verb a month
_INTRODUCED_MONTH = re.compile(
    r"(?:\b(?:in|by|until|till|since|from|during|early|late|mid|of)\s+|-)$", re.IGNORECASE
)


def _plausible(m: re.Match[str]) -> bool:
    month, rel = m.groupdict().get("month"), m.groupdict().get("rel")
    if month and rel == "" and "day" not in m.groupdict():  # a bare month name: "we met in October"
        if month.lower() in _AMBIGUOUS_MONTHS and _INTRODUCED_MONTH.search(m.string, 0, m.start("month")):
            return True
        return month.lower() in _BARE_MONTHS
    if not month or month.lower() not in _AMBIGUOUS_MONTHS:
        return True
    return month[0].isupper() or bool(rel)


def _reference_date(reference: datetime | date) -> date:
    return reference.date() if isinstance(reference, datetime) else reference


def resolve_dates(text: str, reference: datetime | date, *, default_tense: Tense = None) -> list[DateMention]:
    """Every date mention in `text`, resolved against `reference` (the message's own time).

    `default_tense` is the tense of the story around `text` (the sentence before it), used
    when `text` itself has no cue: "I left in March. April was spent in Vietnam." Chat spellings
    are first rewritten into the grammar's words (`rewrite_spellings`); spans and phrases are
    the original text's."""
    ref = _reference_date(reference)
    rewritten = rewrite_spellings(text, ref)
    words = rewritten.text
    # every rule's matches compete: the longest reading of a stretch of text wins ("the 2nd of
    # May next year" over "next year"), and among equals the rule listed first
    candidates = sorted(
        (
            (m, index, resolver)
            for index, (pattern, resolver) in enumerate(_RULES)
            for m in pattern.finditer(words)
        ),
        key=lambda c: (c[0].start() - c[0].end(), c[1], c[0].start()),
    )
    taken: list[tuple[int, int]] = []
    mentions: list[DateMention] = []
    for m, _, resolver in candidates:
        start, end = m.span()
        if (
            start == end
            or any(start < t_end and t_start < end for t_start, t_end in taken)
            or not _plausible(m)
        ):
            continue
        if resolver is _numeric_day and not _numeric_day_plausible(words, m):
            continue
        around = _sentence_around(words, start, end)
        tense = (
            _attached_tense(words, start, end)
            or _clause_tense(words, start, end)
            or sentence_tense(around)
            or _timetable(around)
            or default_tense
        )
        resolved = resolver(m, ref, tense)
        if resolved is None:
            continue
        taken.append((start, end))
        span = rewritten.original(start, end)
        mentions.append(
            DateMention(span, text[span[0] : span[1]], resolved.start, resolved.end, resolved.granularity)
        )
    return sorted(mentions, key=lambda mention: mention.span)


# "on Monday I fly home", after a story in the past: a first person in the present
# simple is a timetable, not the story going on (the story's tense is for sentences with none)
_PRESENT_FIRST_PERSON = re.compile(
    r"\b(?:I|we)\s+(?:(?:also|then|just|only|finally)\s+)?(?P<v>[a-z]+)\b", re.IGNORECASE
)
_NO_TIMETABLE = {
    "love", "like", "hate", "want", "need", "know", "think", "feel", "hope", "wish", "prefer", "miss", "mind",
    "remember", "forget", "believe", "mean", "guess", "suppose", "doubt", "wonder", "bet", "reckon", "can",
    "could", "should", "would", "may", "might", "must", "shall", "always", "never", "usually", "often",
    "sometimes", "still", "normally", "rarely", "was", "were", "had", "did", "do", "is", "am",
}  # fmt: skip


def _timetable(text: str) -> Tense:
    for m in _PRESENT_FIRST_PERSON.finditer(text):
        verb = m["v"].lower()
        lemma = lemmas(verb).get("VERB")
        if verb not in _NO_TIMETABLE and lemma and lemma[0] == verb and not _simple_past(verb):
            return "future"
    return None


# The words right around a date can fix its tense for it, whatever the rest of the sentence
# says: "since" looks back and "by"/"until" ahead ("since Christmas", "by the 9th"), and so does a
# copula the date is the subject or complement of ("Saturday was …", "the 28th is …",
# "Housewarming's on the 12th", "the wedding was on the 3rd").
_LOOKS_BACK_BEFORE = re.compile(
    # "since the merger in June", "since my op on the 3rd": the date of what "since" counts from
    r"(?:\bsince(?:\s+(?:the|my|our|his|her|their)\s+[\w-]+(?:\s+[\w-]+)?(?:\s+(?:in|on|at|of))?)?|"
    r"\b(?:was|were)(?:\s+on)?)\s*$",
    re.IGNORECASE,
)
_LOOKS_AHEAD_BEFORE = re.compile(
    r"(?:\b(?:by|until|till|til)|(?:\bis|'s|\bare|\bwill\s+be)(?:\s+on)?)\s*$", re.IGNORECASE
)
_LOOKS_BACK_AFTER = re.compile(r"^\s*(?:was|were|had\s+been)\b", re.IGNORECASE)
_LOOKS_AHEAD_AFTER = re.compile(r"^\s*(?:is|are|will\s+be|'ll\s+be)\b", re.IGNORECASE)


def _attached_tense(text: str, start: int, end: int) -> Tense:
    phrase = text[start:end].lower()
    if phrase.startswith("since "):
        return "past"
    if phrase.startswith(("by ", "until ", "till ")):
        return "future"
    before, after = text[max(0, start - 40) : start], text[end : end + 16]
    if _LOOKS_BACK_BEFORE.search(before) or _LOOKS_BACK_AFTER.match(after):
        return "past"
    if _LOOKS_AHEAD_BEFORE.search(before) or _LOOKS_AHEAD_AFTER.match(after):
        return "future"
    return None


_HAS_YEAR = re.compile(r"\b(?:19|20)\d\d\b|\d{1,2}/\d{1,2}/\d{2}\b")


def ground(text: str, reference: datetime | date, *, default_tense: Tense = None) -> tuple[str, date | None]:
    """Append the absolute date after each relative mention; return the text and the first date.

    Safe to repeat: a mention already followed by its annotation is left alone, and mentions
    that already carry a year ("8 May 2023", "2023-05-08") are not annotated.
    """
    mentions = resolve_dates(text, reference, default_tense=default_tense)
    grounded = text
    for mention in reversed(mentions):
        if _HAS_YEAR.search(mention.phrase):
            continue
        annotation = f" ({mention.label()})"
        end = mention.span[1]
        if grounded[end:].startswith(annotation):
            continue
        grounded = grounded[:end] + annotation + grounded[end:]
    return grounded, (mentions[0].start if mentions else None)
