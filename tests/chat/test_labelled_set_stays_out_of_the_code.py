"""No held-out or development message of the labelled extraction set is copied into the code.

The rules were written against the "dev" cases; every later split was written to measure them,
so none of its wording may sit in a rule, a comment standing for a rule, or a unit test (which
is where a rule fixed for one sentence would leave its trace). Five consecutive words of any
such message found in a .py file of the project fail the test.
"""

import re
from pathlib import Path

from chat.reflection.evaluation import load_cases

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("chat", "memory", "consolidation", "memoryweb", "tests")
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
N = 5


def words(text: str) -> list[str]:
    # regex escapes (\b, \s, \w …) would glue words of a pattern to a stray letter
    return WORD.findall(re.sub(r"\\[a-zA-Z]", " ", text.lower()).replace("\u2019", "'"))


def shingles(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + N]) for i in range(len(w) - N + 1)}


def copied_shingles() -> list[str]:
    _, cases = load_cases()
    measured: dict[tuple[str, ...], str] = {}
    for case in cases:
        if case.get("split", "dev") != "dev":
            measured |= {s: case["id"] for s in shingles(case["text"])}
    hits = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            for s in shingles(path.read_text()) & measured.keys():
                hits.append(f"{path.relative_to(ROOT)}: {' '.join(s)!r} ({measured[s]})")
    return hits


def test_the_shingle_check_finds_a_copied_sentence():
    assert shingles("Remind me: I'm flying to Oslo on Friday") & shingles('r"\\bflying to Oslo on Friday\\b"')


def test_no_measured_message_is_copied_into_the_code():
    assert copied_shingles() == []
