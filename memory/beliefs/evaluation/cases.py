"""The labelled revision set: its cases, where they live and what makes one unmeasurable."""

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

from memory.models import RevisionAction

DATA_DIR = Path(__file__).resolve().parents[3] / "tests" / "data" / "revisions"
# heldout2 is held out twice over: scored only on its own (`--split heldout2`), never part of
# "all", so a routine `--split all --show-misses` does not show its cases to whoever tunes.
SPLITS = ("dev", "test", "dev2", "dev3", "heldout2")
ALL_SPLITS = ("dev", "test", "dev2", "dev3")
ACTIONS: tuple[str, ...] = tuple(RevisionAction.values)
NONE = "NONE"  # no revision on the belief
LABELS = (*ACTIONS, NONE)
KINDS = ("fact", "note")
CASE_KEYS = ("id", "split", "belief", "evidence", "expected", "why")
BELIEF_KEYS = ("kind", "key", "value", "content", "mode", "scope", "said", "at")
EVIDENCE_KEYS = ("text", "key", "value", "content", "mode", "scope", "at")


def split_path(split: str, data_dir: Path | str = DATA_DIR) -> Path:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    return Path(data_dir) / f"{split}.json"


def load_split(split: str, data_dir: Path | str = DATA_DIR) -> list[dict]:
    """The cases of one split file (a document {"description", "version", "split", "cases"})."""
    document = json.loads(split_path(split, data_dir).read_text(encoding="utf-8"))
    cases = document.get("cases") if isinstance(document, dict) else None
    if not isinstance(cases, list):
        raise ValueError(f"{split}.json: no list of cases")
    return cases


def load_cases(split: str = "all", data_dir: Path | str = DATA_DIR) -> list[dict]:
    """The cases of `split` (one of SPLITS, or "all": dev, test, dev2 and dev3, never heldout2)."""
    if split == "all":
        return [case for name in ALL_SPLITS for case in load_split(name, data_dir)]
    return load_split(split, data_dir)


def parse_time(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def case_errors(case) -> list[str]:
    """Everything that makes `case` unmeasurable, each naming the field; [] when it is sound."""
    from memory.modes import mode_names

    if not isinstance(case, dict):
        return ["a case must be an object"]
    name = case.get("id") if isinstance(case.get("id"), str) and case.get("id") else "?"
    errors = []

    def bad(where: str, problem: str) -> None:
        errors.append(f"{name}: {where} {problem}")

    if set(case) != set(CASE_KEYS):
        bad("keys", f"must be exactly {', '.join(CASE_KEYS)} (got {', '.join(sorted(case))})")
    if name == "?":
        bad("id", "must be a non-empty string")
    if case.get("split") not in SPLITS:
        bad("split", f"must be one of {', '.join(SPLITS)}")
    if case.get("expected") not in ACTIONS:
        bad("expected", f"must be one of {', '.join(ACTIONS)}")
    if not isinstance(case.get("why"), str) or not case.get("why", "").strip():
        bad("why", "must say why")
    modes = set(mode_names())
    for part, keys in (("belief", BELIEF_KEYS), ("evidence", EVIDENCE_KEYS)):
        body = case.get(part)
        if not isinstance(body, dict):
            bad(part, "must be an object")
            continue
        if set(body) != set(keys):
            bad(part, f"keys must be exactly {', '.join(keys)} (got {', '.join(sorted(body))})")
        for key in keys:
            if key in body and not isinstance(body[key], str):
                bad(f"{part}.{key}", "must be a string")
        if body.get("mode") and body["mode"] not in modes:
            bad(f"{part}.mode", f"{body['mode']!r} is not a known mode")
        if parse_time(body.get("at")) is None:
            bad(f"{part}.at", "must be an ISO time with its zone")
    belief, evidence = case.get("belief"), case.get("evidence")
    if not isinstance(belief, dict) or not isinstance(evidence, dict):
        return errors
    kind = belief.get("kind")
    if kind not in KINDS:
        bad("belief.kind", f"must be one of {', '.join(KINDS)}")
    elif kind == "fact":
        for part, body in (("belief", belief), ("evidence", evidence)):
            if not str(body.get("key") or "").strip():
                bad(f"{part}.key", "a fact needs its key")
            if body.get("content"):
                bad(f"{part}.content", "a fact has no content")
        if not str(belief.get("value") or "").strip():
            bad("belief.value", "a fact needs its value")
    else:
        for part, body in (("belief", belief), ("evidence", evidence)):
            if not str(body.get("content") or "").strip():
                bad(f"{part}.content", "a note needs its content")
            if body.get("key") or body.get("value"):
                bad(f"{part}.key", "a note has no key or value")
    if not str(belief.get("said") or "").strip():
        bad("belief.said", "must be the message the belief was learned from")
    if not str(evidence.get("text") or "").strip():
        bad("evidence.text", "must be the message of the new evidence")
    said, heard = parse_time(belief.get("at")), parse_time(evidence.get("at"))
    if said and heard and heard < said:
        bad("evidence.at", "must not be before the belief's time")
    return errors


def set_errors(cases: list) -> list[str]:
    """Every case's errors, plus ids that repeat."""
    errors = [error for case in cases for error in case_errors(case)]
    repeated = Counter(c.get("id") for c in cases if isinstance(c, dict))
    errors += [f"{cid}: id repeats" for cid, n in repeated.items() if n > 1]
    return errors
