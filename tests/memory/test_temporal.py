from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from memory.temporal import ground, resolve_dates

# A LoCoMo-style historical reference (a Monday) and a Thursday.
MON = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
THU = datetime(2024, 3, 14, 10, 30, tzinfo=UTC)
D = date.fromisoformat

RESOLVES = [
    # text, reference, phrase, start, end, granularity
    ("we ship it in Q3", THU, "Q3", "2024-07-01", "2024-09-30", "month"),
    ("we shipped it in Q1", THU, "Q1", "2024-01-01", "2024-03-31", "month"),
    ("the budget for Q4 2025", THU, "Q4 2025", "2025-10-01", "2025-12-31", "month"),
    (
        "planned for the second quarter of 2023",
        THU,
        "the second quarter of 2023",
        "2023-04-01",
        "2023-06-30",
        "month",
    ),
    ("next quarter we hire", THU, "next quarter", "2024-04-01", "2024-06-30", "month"),
    ("last quarter was slow", MON, "last quarter", "2023-01-01", "2023-03-31", "month"),
    ("done by the end of this year", THU, "the end of this year", "2024-12-01", "2024-12-31", "month"),
    ("I promised her I'd call in June", THU, "in June", "2024-06-01", "2024-06-30", "month"),
    ("I went hiking yesterday", MON, "yesterday", "2023-05-07", None, "day"),
    ("I'm off today", MON, "today", "2023-05-08", None, "day"),
    ("see you tomorrow", MON, "tomorrow", "2023-05-09", None, "day"),
    ("the day before yesterday was rough", MON, "the day before yesterday", "2023-05-06", None, "day"),
    ("the day after tomorrow works", MON, "the day after tomorrow", "2023-05-10", None, "day"),
    ("last night we cooked", MON, "last night", "2023-05-07", None, "day"),
    ("this morning I ran", MON, "this morning", "2023-05-08", None, "day"),
    ("I'm flying to Tokyo next Friday", THU, "next Friday", "2024-03-22", None, "day"),
    ("next Friday works", MON, "next Friday", "2023-05-19", None, "day"),
    ("last Friday was fun", MON, "last Friday", "2023-05-05", None, "day"),
    ("this Friday then", MON, "this Friday", "2023-05-12", None, "day"),
    ("this Monday is busy", MON, "this Monday", "2023-05-08", None, "day"),
    ("We went to Lisbon on Saturday", MON, "on Saturday", "2023-05-06", None, "day"),
    ("I'm seeing her on Saturday", MON, "on Saturday", "2023-05-13", None, "day"),
    ("I have a meeting on Thursday", THU, "on Thursday", "2024-03-21", None, "day"),
    ("Friday was fun", THU, "Friday", "2024-03-08", None, "day"),
    ("3 days ago", MON, "3 days ago", "2023-05-05", None, "day"),
    ("three days ago", MON, "three days ago", "2023-05-05", None, "day"),
    ("a couple of days ago", MON, "a couple of days ago", "2023-05-06", None, "day"),
    ("a few days ago", MON, "a few days ago", "2023-05-05", None, "day"),
    ("twelve days ago", MON, "twelve days ago", "2023-04-26", None, "day"),
    ("two weeks ago", MON, "two weeks ago", "2023-04-24", None, "week"),
    ("a month ago", MON, "a month ago", "2023-04-08", None, "month"),
    ("6 months ago", MON, "6 months ago", "2022-11-08", None, "month"),
    ("two years ago", MON, "two years ago", "2021-05-08", None, "year"),
    ("in 3 days", MON, "in 3 days", "2023-05-11", None, "day"),
    ("in two weeks", MON, "in two weeks", "2023-05-22", None, "week"),
    ("last week", MON, "last week", "2023-05-01", "2023-05-07", "week"),
    ("this week", MON, "this week", "2023-05-08", "2023-05-14", "week"),
    ("next week", MON, "next week", "2023-05-15", "2023-05-21", "week"),
    ("last month", MON, "last month", "2023-04-01", "2023-04-30", "month"),
    ("next month", MON, "next month", "2023-06-01", "2023-06-30", "month"),
    ("last year", MON, "last year", "2022-01-01", "2022-12-31", "year"),
    ("next year", MON, "next year", "2024-01-01", "2024-12-31", "year"),
    ("last weekend", MON, "last weekend", "2023-05-06", "2023-05-07", "day"),
    ("this weekend", THU, "this weekend", "2024-03-16", "2024-03-17", "day"),
    ("next weekend", THU, "next weekend", "2024-03-23", "2024-03-24", "day"),
    ("two weekends ago", MON, "two weekends ago", "2023-04-29", "2023-04-30", "day"),
    ("earlier this week", THU, "earlier this week", "2024-03-11", "2024-03-13", "week"),
    ("next March", MON, "next March", "2024-03-01", "2024-03-31", "month"),
    ("last May", MON, "last May", "2022-05-01", "2022-05-31", "month"),
    ("we go in July", MON, "in July", "2023-07-01", "2023-07-31", "month"),
    ("I went there in April", MON, "in April", "2023-04-01", "2023-04-30", "month"),
    ("I moved in December", MON, "in December", "2022-12-01", "2022-12-31", "month"),
    ("last summer", MON, "last summer", "2022-06-01", "2022-08-31", "month"),
    ("We met on May 8", THU, "May 8", "2023-05-08", None, "day"),
    ("the deadline is May 3", THU, "May 3", "2024-05-03", None, "day"),
    ("on the 14th", MON, "on the 14th", "2023-05-14", None, "day"),
    ("8 May 2023", THU, "8 May 2023", "2023-05-08", None, "day"),
    ("2023-05-08", THU, "2023-05-08", "2023-05-08", None, "day"),
    ("05/08/2023", THU, "05/08/2023", "2023-05-08", None, "day"),
    ("May 2023", THU, "May 2023", "2023-05-01", "2023-05-31", "month"),
    ("back in 2019", THU, "back in 2019", "2019-01-01", "2019-12-31", "year"),
]


@pytest.mark.parametrize(("text", "reference", "phrase", "start", "end", "granularity"), RESOLVES)
def test_resolve_dates_turns_the_phrase_into_an_absolute_date(
    text, reference, phrase, start, end, granularity
):
    [mention] = resolve_dates(text, reference)

    assert mention.phrase == phrase
    assert text[mention.span[0] : mention.span[1]] == phrase
    assert mention.start == D(start)
    assert mention.end == (D(end) if end else None)
    assert mention.granularity == granularity


@pytest.mark.parametrize(
    "text",
    [
        "I may go, I may not",
        "March on, soldiers",
        "May I ask something?",
        "Black Friday deals are a scam",
        "I go to the gym on Mondays",
        "I always fall asleep on the couch",
        "version 3.5 is out",
        "call me at 5",
        "music from the 1990s",
        "",
    ],
)
def test_resolve_dates_ignores_words_that_only_look_like_dates(text):
    assert resolve_dates(text, MON) == []


def test_resolve_dates_finds_every_mention_in_order():
    mentions = resolve_dates("Yesterday I booked the flight for next Friday", THU)

    assert [(m.phrase, m.start) for m in mentions] == [
        ("Yesterday", D("2024-03-13")),
        ("next Friday", D("2024-03-22")),
    ]


def test_resolve_dates_uses_the_reference_and_not_the_clock():
    assert resolve_dates("yesterday", datetime(1999, 1, 1))[0].start == D("1998-12-31")


def test_resolve_dates_reads_the_day_in_the_references_own_time_zone():
    late_in_sydney = datetime(2023, 5, 8, 23, 30, tzinfo=timezone(timedelta(hours=10)))

    assert resolve_dates("yesterday", late_in_sydney)[0].start == D("2023-05-07")


def test_resolve_dates_accepts_a_plain_date_as_reference():
    assert resolve_dates("tomorrow", D("2023-05-08"))[0].start == D("2023-05-09")


GROUNDS = [
    ("I went hiking yesterday", MON, "I went hiking yesterday (2023-05-07)", "2023-05-07"),
    ("I'm flying to Tokyo next Friday!", THU, "I'm flying to Tokyo next Friday (2024-03-22)!", "2024-03-22"),
    ("It was last month", MON, "It was last month (April 2023)", "2023-04-01"),
    ("We met three years ago", MON, "We met three years ago (2020)", "2020-05-08"),
    ("busy last week", MON, "busy last week (week of 2023-05-01)", "2023-05-01"),
    ("camping last weekend", MON, "camping last weekend (2023-05-06 to 2023-05-07)", "2023-05-06"),
    ("I was born on 8 May 1990", MON, "I was born on 8 May 1990", "1990-05-08"),
    ("Deployed 2023-05-08", THU, "Deployed 2023-05-08", "2023-05-08"),
    (
        "Yesterday I booked it for tomorrow",
        MON,
        "Yesterday (2023-05-07) I booked it for tomorrow (2023-05-09)",
        "2023-05-07",
    ),
    ("No dates here", MON, "No dates here", None),
]


@pytest.mark.parametrize(("text", "reference", "grounded", "event_date"), GROUNDS)
def test_ground_appends_the_absolute_date_after_each_relative_mention(text, reference, grounded, event_date):
    assert ground(text, reference) == (grounded, D(event_date) if event_date else None)


def test_ground_is_safe_to_run_twice():
    once, day = ground("I went hiking yesterday and swam on Saturday", MON)

    assert ground(once, MON) == (once, day)


# --- holidays, "N units back", "the weekend after next", "end of <month>", recurring days ---------

_WED = date(2025, 6, 11)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we host Christmas this year", date(2025, 12, 25)),
        ("we went skiing at Christmas", date(2024, 12, 25)),
        ("off to the coast for Easter", date(2026, 4, 5)),
        ("my sister's Halloween party", date(2025, 10, 31)),
        ("started the new meds three weeks back", date(2025, 5, 21)),
        ("a dinner the weekend after next", date(2025, 6, 28)),
        ("the lease runs to the end of April", date(2026, 4, 1)),
        ("the lease ran out at the end of April", date(2025, 4, 1)),
    ],
)
def test_holidays_back_after_next_and_end_of_month(text, expected):
    assert resolve_dates(text, _WED)[0].start == expected


def test_easter_follows_the_calendar():
    assert resolve_dates("over Easter", date(2024, 1, 10))[0].start == date(2024, 3, 31)
    assert resolve_dates("over Easter", date(2027, 1, 10))[0].start == date(2027, 3, 28)


def test_a_recurring_weekday_is_not_a_date():
    mentions = resolve_dates("code reviews every other Friday starting next month", _WED)
    assert [m.phrase for m in mentions] == ["next month"]
    assert resolve_dates("yoga on Mondays", _WED) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("registered for the Berlin half in April", date(2026, 4, 1)),
        ("I've committed to a sober month in May", date(2026, 5, 1)),
        ("promised the kids a zoo trip in March", date(2026, 3, 1)),
        ("plan is to repaint from Monday", date(2025, 6, 16)),
        ("the race is done, ran it on Sunday", date(2025, 6, 8)),
        ("Sam and I split up in May", date(2025, 5, 1)),
    ],
)
def test_sign_ups_and_promises_look_forward_and_done_looks_back(text, expected):
    assert resolve_dates(text, _WED)[0].start == expected


# 2025-06-11 is a Wednesday
_WED_NOON = datetime(2025, 6, 11, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "phrase", "expected"),
    [
        # a short weekday after next/last/this
        ("the review slipped to next Weds", "next Weds", date(2025, 6, 18)),
        ("it broke last Fri", "last Fri", date(2025, 6, 6)),
        # fortnights are two weeks
        ("the hearing is in a fortnight", "in a fortnight", date(2025, 6, 25)),
        ("quit smoking a fortnight ago", "a fortnight ago", date(2025, 5, 28)),
        # "a week today", "Friday week", "two weeks on Monday"
        ("the plumber comes a week today", "a week today", date(2025, 6, 18)),
        ("dinner with the in-laws Friday week", "Friday week", date(2025, 6, 20)),
        ("results come two weeks on Monday", "two weeks on Monday", date(2025, 6, 30)),
        # a count up to something ahead
        ("three days till we close on the flat", "three days till", date(2025, 6, 14)),
        # "this coming weekend" is the next one, not the one after
        ("this coming weekend we paint the fence", "coming weekend", date(2025, 6, 14)),
        # vague or overnight
        ("tripped on the stairs the other day", "the other day", date(2025, 6, 9)),
        ("the pipe burst overnight", "overnight", date(2025, 6, 11)),
    ],
)
def test_colloquial_dates(text, phrase, expected):
    mentions = resolve_dates(text, _WED_NOON)
    assert [(m.phrase, m.start) for m in mentions] == [(phrase, expected)]


def test_short_weekdays_need_a_cue_and_weekday_weeks_are_not_recurring():
    # "sat" and "sun" alone are words, not days
    assert resolve_dates("I sat in the sun all afternoon", _WED_NOON) == []
    assert resolve_dates("we run every Friday", _WED_NOON) == []


# --- issue 18, dev9: more spoken relative dates ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "phrase", "expected"),
    [
        # one step further back than "last"
        ("the roof leaked the week before last", "the week before last", date(2025, 5, 26)),
        ("we argued the night before last", "the night before last", date(2025, 6, 9)),
        ("she visited the Sunday before last", "the Sunday before last", date(2025, 6, 1)),
        ("three Thursdays ago the boiler died", "three Thursdays ago", date(2025, 5, 22)),
        # the same day a period on
        ("this time next week I'm on a beach", "this time next week", date(2025, 6, 18)),
        ("this time last year we were broke", "this time last year", date(2024, 6, 11)),
        # a season still to begin; a season of a named year
        ("this coming autumn we repaint", "this coming autumn", date(2025, 9, 1)),
        ("the autumn of 2021 was rough", "the autumn of 2021", date(2021, 9, 1)),
        # a year's edges
        ("got sober end of last year", "end of last year", date(2024, 12, 1)),
        ("a new role from the start of next year", "the start of next year", date(2026, 1, 1)),
        # counted days in a month, and a weekday past the next one
        ("the gig is the last Friday of next month", "the last Friday of next month", date(2025, 7, 25)),
        ("the audit is the Tuesday after next", "the Tuesday after next", date(2025, 6, 24)),
        # counts ahead in British phrasings
        ("four weeks from now the course ends", "four weeks from now", date(2025, 7, 9)),
        ("the recital is a fortnight on Sunday", "a fortnight on Sunday", date(2025, 6, 29)),
        ("the hearing is Monday fortnight", "Monday fortnight", date(2025, 6, 30)),
        ("a week from Thursday the builders come", "a week from Thursday", date(2025, 6, 19)),
        ("at the weekend we're seeing friends", "at the weekend", date(2025, 6, 14)),
        ("due end of next week, latest", "end of next week", date(2025, 6, 20)),
        # vague or just gone
        ("the other week the car broke down", "the other week", date(2025, 6, 1)),
        ("stayed in all weekend just gone", "weekend just gone", date(2025, 6, 7)),
        # a frequency is no date: only the weekday counts
        ("swimming twice a week from Monday", "Monday", date(2025, 6, 16)),
    ],
)
def test_dev9_colloquial_dates(text, phrase, expected):
    mentions = resolve_dates(text, _WED_NOON)
    assert [(m.phrase, m.start) for m in mentions] == [(phrase, expected)]


# --- issue 18, dev10: the composable grammar and chat spellings ---------------------------------

_LEAP_DAY = datetime(2028, 2, 29, 9, 0, tzinfo=UTC)  # a Tuesday
_NEW_YEARS_EVE = datetime(2025, 12, 31, 18, 0, tzinfo=UTC)  # a Wednesday
_AUG_SATURDAY = datetime(2025, 8, 9, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "reference", "phrase", "expected"),
    [
        # chat spellings, rewritten before the grammar reads them; the phrase is the original text
        ("nxt weds we sign", _LEAP_DAY, "nxt weds", date(2028, 3, 8)),
        ("the dentist is on thurs", _LEAP_DAY, "on thurs", date(2028, 3, 2)),
        ("sept was quiet", _LEAP_DAY, "sept", date(2027, 9, 1)),
        ("my cast came off on the fourteenth", _LEAP_DAY, "on the fourteenth", date(2028, 2, 14)),
        ("the party is the twenty-first of March", _LEAP_DAY, "the twenty-first of March", date(2028, 3, 21)),
        ("we met in '09", _LEAP_DAY, "in '09", date(2009, 1, 1)),
        ("we married in twenty sixteen", _LEAP_DAY, "in twenty sixteen", date(2016, 1, 1)),
        ("Wednesday just gone we painted", _AUG_SATURDAY, "Wednesday just gone", date(2025, 8, 6)),
        ("mid-Oct we fly", _AUG_SATURDAY, "mid-Oct", date(2025, 10, 1)),
        ("a couple weeks back", _AUG_SATURDAY, "a couple weeks back", date(2025, 7, 26)),
        # a named thing counted back or stepped past
        ("we toured Peru three summers ago", _LEAP_DAY, "three summers ago", date(2025, 6, 1)),
        ("the Christmas before last we hosted", _LEAP_DAY, "the Christmas before last", date(2026, 12, 25)),
        # placed against an anchor the grammar resolves itself (Easter by the computus)
        ("we fly the Friday after Easter", _NEW_YEARS_EVE, "the Friday after Easter", date(2026, 4, 10)),
        ("Good Friday we walk the hills", _NEW_YEARS_EVE, "Good Friday", date(2026, 4, 3)),
        ("the week before Christmas was chaos", _LEAP_DAY, "the week before Christmas", date(2027, 12, 13)),
        # so many units back from a day; a year back from a leap day is the 28th
        ("three years ago tomorrow we moved", _LEAP_DAY, "three years ago tomorrow", date(2025, 3, 1)),
        ("a year ago today I proposed", _LEAP_DAY, "a year ago today", date(2027, 2, 28)),
        # parts of a month or a year: the month
        ("the tail end of April suits", _NEW_YEARS_EVE, "the tail end of April", date(2026, 4, 1)),
        ("the back half of June is free", _NEW_YEARS_EVE, "the back half of June", date(2026, 6, 1)),
        ("the first week of June works", _NEW_YEARS_EVE, "the first week of June", date(2026, 6, 1)),
        ("at month end the lease renews", _NEW_YEARS_EVE, "at month end", date(2025, 12, 1)),
        (
            "the third Friday of the month is payday",
            _AUG_SATURDAY,
            "the third Friday of the month",
            date(2025, 8, 15),
        ),
        # a day and month with a year told by its step
        ("we wed the 3rd of Feb next year", _LEAP_DAY, "the 3rd of Feb next year", date(2029, 2, 3)),
        # month first, as "05/08/2023" is, and without a year in the sentence's tense
        ("on 7/4 we barbecue", _NEW_YEARS_EVE, "on 7/4", date(2026, 7, 4)),
        ("the boxes came on 12/20", _NEW_YEARS_EVE, "on 12/20", date(2025, 12, 20)),
        # the words on a date fix its tense: a copula, "since"
        ("Saturday was a washout", _NEW_YEARS_EVE, "Saturday", date(2025, 12, 27)),
        ("Saturday is the final", _NEW_YEARS_EVE, "Saturday", date(2026, 1, 3)),
        ("sober since Xmas", _NEW_YEARS_EVE, "Xmas", date(2025, 12, 25)),
    ],
)
def test_dev10_composable_grammar(text, reference, phrase, expected):
    mentions = resolve_dates(text, reference)
    assert (mentions[0].phrase, mentions[0].start) == (phrase, expected)


def test_dev10_what_is_no_date():
    assert resolve_dates("open 24/7 and half price 1/2 the time", _NEW_YEARS_EVE) == []
    # a holiday naming a thing, a decade
    assert resolve_dates("the Christmas tree is up", _NEW_YEARS_EVE) == []
    assert resolve_dates("I love '90s music", _NEW_YEARS_EVE) == []


def test_dev10_the_second_clause_keeps_its_own_tense():
    mentions = resolve_dates("sold it on the 9th, and I'm buying another on the 20th", _AUG_SATURDAY)
    assert [m.start for m in mentions] == [date(2025, 8, 9), date(2025, 8, 20)]


def test_dev10_grounding_annotates_the_original_spelling():
    grounded, day = ground("nxt tues we fly, back on the twelfth", _LEAP_DAY)
    assert grounded == "nxt tues (2028-03-07) we fly, back on the twelfth (2028-03-12)"
    assert day == date(2028, 3, 7)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a date's own clause gives its tense when a bare "and"/"but" joins a clause of another tense
        ("I took up rowing in January and I will keep at it", date(2026, 1, 1)),
        ("we collected the puppy on Friday and will name her soon", date(2026, 3, 6)),
        ("I gave up crisps in February but I will probably crack", date(2026, 2, 1)),
        # a present state's "-ed" is no past: the sentence's future stands
        ("the lido is booked out on Friday so I will swim Saturday", date(2026, 3, 13)),
    ],
)
def test_a_dates_own_clause_gives_its_tense(text, expected):
    assert resolve_dates(text, date(2026, 3, 11))[0].start == expected


def test_a_stretch_of_time_before_an_event_is_no_count_to_it():
    assert resolve_dates("we dated for three years before we married", date(2026, 3, 11)) == []
    assert resolve_dates("two weeks before we fly", date(2026, 3, 11))[0].start == date(2026, 3, 25)
