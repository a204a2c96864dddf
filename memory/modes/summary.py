"""What a mode does, in plain sentences, read off its manifest (the REST list and the dashboard's
Modes page show them). Every sentence follows from a field of the manifest, so a custom mode is
described as truly as a built-in one."""

from memory.modes import SECTION_KEYS, Mode

CATEGORY_NAMES = {
    "health": "health",
    "sexual_life": "sexual life",
    "religion": "religion",
    "politics": "politics",
    "finances": "finances",
    "precise_location": "precise location",
    "government_ids": "government ids",
    "credentials": "credentials",
    "relationships": "relationships",
    "minors": "minors",
}
KIND_NAMES = {
    "fact": "facts",
    "note": "notes",
    "evidence": "the person's own turns",
    "lesson": "lessons",
    "procedure": "procedures",
}
SECTION_NAMES = {
    "profile": "profile",
    "recalled": "recalled",
    "memory-index": "memory-index",
    "lessons": "lessons",
    "procedures": "procedures",
    "mental_models": "mental models",
    "topics": "topics",
    "transcript": "transcript",
}
HIGH, LOW = 0.7, 0.3
# knob → (said when ≥ HIGH, said when ≤ LOW)
KNOBS = {
    "personalization": ("personal facts weigh heavily", "personal facts matter little"),
    "evidenceFirst": (
        "first-hand, confirmed evidence outranks inference",
        "inferred items count as much as first-hand evidence",
    ),
    "uncertaintyTolerance": (
        "unconfirmed or low-confidence items are welcome",
        "unconfirmed or low-confidence items are held back",
    ),
    "emotionalSensitivity": (
        "feelings, relationships and wellbeing weigh heavily",
        "feelings and wellbeing carry little weight",
    ),
    "association": ("loosely related items are welcome", "only direct matches are taken"),
}
RENDERS = {
    "contract": (
        "how the person likes to work here (the interaction contract) renders",
        "no interaction contract renders",
    ),
    "state": ("the person's current state (urgency, focus, frustration) renders", "no current state renders"),
    "topics": ("the conversation's topic working set renders", "no topic working set renders"),
    "transcript": ("the recent transcript renders", "no recent transcript renders"),
    "consequences": (
        "earlier advice and what came of it renders when the person is stuck",
        "no consequence chains render",
    ),
}


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _scopes(mode: Mode) -> list[str]:
    lines = []
    lines.append(
        "reaches the conversation's own scope"
        if "same" in mode.scopes
        else "leaves out the conversation's own scope"
    )
    lines.append("reaches unscoped memories" if "unscoped" in mode.scopes else "leaves out unscoped memories")
    lines.append(
        "reaches other projects' memories"
        if "other" in mode.scopes
        else "never reaches other projects' memories"
    )
    return lines


def _privacy(mode: Mode) -> str:
    allowed = [CATEGORY_NAMES.get(c, c) for c in sorted(mode.allowed_categories)]
    if not allowed:
        return "no sensitive category renders, even when approved"
    if set(mode.allowed_categories) >= set(CATEGORY_NAMES):
        return "every sensitive category may render when approved"
    return f"{', '.join(allowed)} may render when approved; other sensitive categories never do"


def mode_summary(mode: Mode) -> list[str]:
    """The plain-language sentences that say what `mode` does, in manifest order: scopes,
    preferred kinds, privacy ceiling, left-out sections, retrieval, the judgement knobs that
    stand out (≥ 0.7 or ≤ 0.3), what else renders."""
    lines = _scopes(mode)
    if mode.preferred_kinds:
        lines.append(f"favours {_join([KIND_NAMES[k] for k in mode.preferred_kinds])}, in that order")
    else:
        lines.append("favours no kind of memory over another")
    lines.append(_privacy(mode))
    for section in SECTION_KEYS:
        if mode.sections.get(section) == 0:
            lines.append(f"no {SECTION_NAMES[section]} section")
    retrieval = mode.retrieval
    if "k" in retrieval:
        lines.append(f"shows up to {retrieval['k']} notes or turns in full")
    if "indexLimit" in retrieval:
        lines.append(f"points to up to {retrieval['indexLimit']} more in the memory index")
    if "candidates" in retrieval:
        lines.append(f"weighs {retrieval['candidates']} candidates per search")
    if "minApplicability" in retrieval:
        floor = float(retrieval["minApplicability"])
        lines.append(
            f"leaves out items whose applicability is under {floor:g}"
            if floor > 0
            else "leaves out no item for low applicability"
        )
    for weight, value in (retrieval.get("weights") or {}).items():
        lines.append(f"score weight of {weight}: {float(value):g}")
    for knob, (high, low) in KNOBS.items():
        value = mode.applicability.get(knob)
        if value is None:
            continue
        if value >= HIGH:
            lines.append(high)
        elif value <= LOW:
            lines.append(low)
    for part, (shown, hidden) in RENDERS.items():
        lines.append(shown if mode.renders.get(part) else hidden)
    return lines
