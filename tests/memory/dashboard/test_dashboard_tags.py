"""The dashboard's template filters for times: `ago`, `duration` and `took`."""

import re
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.template import Context, Template

from memory.dashboard.tags import ago, duration, key_label, took

NOW = datetime(2026, 3, 14, 12, 0, 0, tzinfo=UTC)


def nb(text: str) -> str:
    """`text` with a no-break space between each number and its unit, as the filters write it."""
    return re.sub(r"(\d) (?=[a-z])", "\\1\xa0", text)


@pytest.fixture
def frozen():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.mark.parametrize("seconds", [0, 1, 59])
def test_ago_says_just_now_within_the_first_minute(frozen, seconds):
    assert ago(NOW - timedelta(seconds=seconds)) == "just now"


def test_ago_says_just_now_for_a_time_a_little_ahead_of_this_clock(frozen):
    assert ago(NOW + timedelta(seconds=20)) == "just now"


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (timedelta(seconds=60), "1 minute ago"),
        (timedelta(minutes=5, seconds=30), "5 minutes ago"),
        (timedelta(hours=2, minutes=5), "2 hours, 5 minutes ago"),
        (timedelta(days=3), "3 days ago"),
    ],
)
def test_ago_counts_minutes_and_more_like_timesince(frozen, before, expected):
    assert ago(NOW - before) == nb(expected)


def test_ago_of_nothing_is_empty():
    assert ago(None) == ""


def test_ago_takes_a_plain_date(frozen):
    assert ago(date(2026, 3, 7)) == nb("1 week ago")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "under 1 ms"),
        (0.0004, "under 1 ms"),
        (0.042, "42 ms"),
        (0.9999, "999 ms"),
        (1, "1.0 s"),
        (3.27, "3.2 s"),
        (9.99, "9.9 s"),
        (42.7, "42 s"),
        (60, "1 min"),
        (192, "3 min 12 s"),
        (3600, "1 h"),
        (2 * 3600 + 5 * 60 + 9, "2 h 5 min"),
        (timedelta(milliseconds=340), "340 ms"),
        (timedelta(minutes=4), "4 min"),
        (-2, "under 1 ms"),  # clocks of two machines disagree: never a negative duration
    ],
)
def test_duration_keeps_short_times_precise(value, expected):
    assert duration(value) == nb(expected)


def test_duration_of_nothing_is_empty():
    assert duration(None) == ""


def test_took_is_the_duration_between_two_times():
    assert took(NOW, NOW + timedelta(seconds=3, milliseconds=400)) == nb("3.4 s")


def test_took_while_still_running_is_empty():
    assert took(NOW, None) == ""


def test_the_filters_are_available_to_templates(frozen):
    template = Template(
        "{% load dashboard %}{{ found|ago }} · took {{ start|took:end }} · {{ seconds|duration }}"
    )
    context = Context({"found": NOW, "start": NOW, "end": NOW + timedelta(seconds=75), "seconds": 0.25})

    assert template.render(context) == nb("just now · took 1 min 15 s · 250 ms")


def test_key_label_turns_a_stats_key_into_words():
    assert key_label("linked_candidates") == "Linked candidates"
    assert key_label("clusters") == "Clusters"
    assert key_label("") == ""
