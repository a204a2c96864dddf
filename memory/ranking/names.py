"""The people and things a message names, as the ranking reads them (memory/ranking/notes.py,
`full` mode).

A question about one person ("What is Caroline's relationship status?") holds that person's
name, and in a transcript every turn that person said holds it too, as its speaker prefix
("Caroline: Cool! What did it look like?"). Searched as a word, the name matches all of them,
and the full-text list fills its places with that person's shortest turns, whatever they say.
With `retrieve.nameTerms` "signals" the names of the people who speak are left out of the
words searched (when other words remain) and count through `scoring.speakerMatch` and
`scoring.entityMatch` instead.
"""

import re
from collections.abc import Iterable

# a capitalised word of three letters or more: a name, unless it is one of these
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
_NOT_NAMES = frozenset(
    "What When Where Which Who Whom Whose Why How Did Does Do Is Are Was Were Has Have Had Can "
    "Could Would Should Will The This That These Those And But For Based Given According "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May "
    "June July August September October November December".split()
)
# "Melanie: …", "Dr Smith: …": a turn stored with its speaker's name before a colon
SPEAKER_PREFIX = re.compile(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}):\s")


def named_entities(text: str) -> set[str]:
    """The capitalised words of `text` that are no question word, weekday or month: the
    people and things it names."""
    return {w for w in _NAME.findall(text) if w not in _NOT_NAMES}


def speaker_and_text(text: str, name: str = "") -> tuple[str, str]:
    """Who said a turn and what they said: the `name` it was posted with, else the name the
    text opens with ("Melanie: …", SPEAKER_PREFIX); ("", text) when neither names one."""
    if name:
        return name, text
    prefix = SPEAKER_PREFIX.match(text)
    return (prefix.group(1), text[prefix.end() :]) if prefix else ("", text)


def without_names(terms: Iterable[str], names: set[str]) -> list[str]:
    """The search terms but the names (`query_terms` lower-cases them)."""
    lowered = {name.lower() for name in names}
    return [t for t in terms if t not in lowered]
