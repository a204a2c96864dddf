"""Reading the LoCoMo file (Maharana et al., ACL 2024; CC BY-NC 4.0): sessions, turns, questions.

The file is read from wherever the caller keeps it; nothing of it is copied into the project.
Schema and its known flaws: ../shared/bench/README.md.
"""

import datetime
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

CATEGORIES = ["1", "2", "3", "4", "5"]
CATEGORY_NAMES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}
SESSION_KEY = re.compile(r"^session_(\d+)$")
DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
SESSION_DATE = re.compile(
    r"^\s*(\d{1,2})[:.](\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}


def normalise_evidence(raw) -> list[str]:
    """Canonical dia_ids ("D<session>:<turn>", no leading zeros) in order, without repeats.

    Copes with the malformed forms in the data: several ids in one string ("D8:6; D9:17"), a
    stray colon ("D:11:26"), leading zeros ("D30:05"); anything without two numbers ("D") is
    dropped. Whether the turn exists is checked by the caller.
    """
    if raw is None:
        return []
    items = [raw] if isinstance(raw, str) else raw
    found: dict[str, None] = {}
    for item in items:
        for session, turn in DIA_ID.findall(str(item)):
            found.setdefault(f"D{int(session)}:{int(turn)}")
    return list(found)


def canonical_dia_id(dia_id: str) -> str | None:
    ids = normalise_evidence(dia_id)
    return ids[0] if len(ids) == 1 else None


def parse_session_date(text: str) -> datetime.datetime:
    """'1:56 pm on 8 May, 2023' → 2023-05-08 13:56 UTC. Raises ValueError on anything else."""
    match = SESSION_DATE.match(text or "")
    if not match:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    hour, minute, meridiem, day, month_name, year = match.groups()
    month = MONTHS.get(month_name.lower())
    hour = int(hour)
    if month is None or not 1 <= hour <= 12:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    hour = hour % 12 + (12 if meridiem.lower() == "p" else 0)
    return datetime.datetime(int(year), month, int(day), hour, int(minute), tzinfo=datetime.UTC)


@dataclass
class Turn:
    dia_id: str  # as in the data (the message's external id)
    canonical: str
    speaker: str
    text: str
    caption: str = ""

    @property
    def note_content(self) -> str:
        content = f"{self.speaker}: {self.text}"
        return content + (f" [shares an image: {self.caption}]" if self.caption else "")

    @property
    def message_text(self) -> str:
        return self.text + (f" [shares an image: {self.caption}]" if self.caption else "")


@dataclass
class Session:
    number: int
    date: datetime.datetime | None
    turns: list[Turn]


@dataclass
class Question:
    text: str
    category: str
    evidence: list[str]  # canonical and existing
    dropped: list[str] = field(default_factory=list)  # malformed or pointing at no turn


@dataclass
class Sample:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[Session]
    questions: list[Question]


def parse_sample(raw: dict) -> Sample:
    conv = raw["conversation"]
    numbers = sorted(int(m.group(1)) for key in conv if (m := SESSION_KEY.match(key)))
    sessions, last_date = [], None
    for number in numbers:
        date_text = conv.get(f"session_{number}_date_time")
        date = parse_session_date(date_text) if date_text else last_date  # undated: as the one before
        last_date = date
        turns = []
        for t in conv[f"session_{number}"]:
            text, caption = (t.get("text") or "").strip(), (t.get("blip_caption") or "").strip()
            canonical = canonical_dia_id(t.get("dia_id", ""))
            if canonical is None or not (text or caption):
                continue
            turns.append(
                Turn(
                    dia_id=t["dia_id"],
                    canonical=canonical,
                    speaker=t.get("speaker", ""),
                    text=text,
                    caption=caption,
                )
            )
        sessions.append(Session(number=number, date=date, turns=turns))
    existing = {turn.canonical for s in sessions for turn in s.turns}
    questions = []
    for q in raw.get("qa", []):
        raw_evidence = q.get("evidence") or []
        ids = normalise_evidence(raw_evidence)
        kept = [i for i in ids if i in existing]
        dropped = [str(e) for e in raw_evidence if not set(normalise_evidence(e)) & set(kept)]
        questions.append(
            Question(text=str(q["question"]), category=str(q["category"]), evidence=kept, dropped=dropped)
        )
    return Sample(
        sample_id=str(raw["sample_id"]),
        speaker_a=conv.get("speaker_a", ""),
        speaker_b=conv.get("speaker_b", ""),
        sessions=sessions,
        questions=questions,
    )


def load(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of LoCoMo conversations")
    return data
