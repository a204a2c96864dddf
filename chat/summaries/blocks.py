"""The raw memory block: how phase 1 writes what one conversation left, and phase 2 reads it.

A block is Markdown, one `### Section` per kind of item, one `- ` bullet per item:

    ### Decisions
    - Tests use a fresh temporary directory each.
    ### Failures and fixes
    - The integration suite failed at random on CI. Fix: give each test its own directory.
    ### Workflows
    - release-checklist: Run the full test suite. | Bump the version. | Tag and push.

Workflows carry a lowercase-hyphenated name, then their steps separated by " | ". Unknown
sections and stray lines are ignored on reading, so a model's block that drifts a little still
parses.
"""

import re
from dataclasses import dataclass, field

# key → heading, in the order a block is written
SECTIONS: dict[str, str] = {
    "decisions": "Decisions",
    "constraints": "Constraints",
    "failures": "Failures and fixes",
    "workflows": "Workflows",
    "tools": "Tools",
    "preferences": "Preferences",
    "open_questions": "Open questions",
}
HEADINGS = {heading.lower(): key for key, heading in SECTIONS.items()}
STEP_SEPARATOR = " | "
FIX_MARKER = " Fix: "
WORKFLOW = re.compile(r"^([a-z0-9][a-z0-9-]{0,63}):\s+(.+)$")


def slug(text: str, *, limit: int = 48) -> str:
    """A lowercase-hyphenated name for `text` ("Release checklist!" → "release-checklist")."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    name = ""
    for word in words:
        candidate = f"{name}-{word}" if name else word
        if len(candidate) > limit:
            break
        name = candidate
    return name


def workflow_item(name: str, steps: list[str]) -> str:
    return f"{slug(name) or 'workflow'}: " + STEP_SEPARATOR.join(
        " ".join(s.split()) for s in steps if s.strip()
    )


def workflow_parse(item: str) -> tuple[str, list[str]] | None:
    """`name: step | step` → (name, steps); None when the item is not shaped so."""
    match = WORKFLOW.match(item.strip())
    if not match:
        return None
    steps = [s.strip() for s in match.group(2).split("|") if s.strip()]
    return (match.group(1), steps) if steps else None


def failure_item(problem: str, fix: str) -> str:
    problem = " ".join(problem.split()).rstrip(".")
    fix = " ".join(fix.split())
    return f"{problem}.{FIX_MARKER}{fix}" if fix else f"{problem}."


def failure_parse(item: str) -> tuple[str, str]:
    problem, _, fix = item.partition(FIX_MARKER.strip())
    return problem.strip().rstrip(".") + ".", fix.strip()


def render_block(sections: dict[str, list[str]]) -> str:
    """The block for `sections` (keys of SECTIONS; empty sections are left out)."""
    parts = []
    for key, heading in SECTIONS.items():
        items = [" ".join(i.split()) for i in sections.get(key, []) if i and i.strip()]
        if items:
            parts.append(f"### {heading}\n" + "\n".join(f"- {i}" for i in dict.fromkeys(items)))
    return "\n".join(parts)


def parse_block(text: str) -> dict[str, list[str]]:
    """The items of each section of a block (every key of SECTIONS present, maybe empty)."""
    sections: dict[str, list[str]] = {key: [] for key in SECTIONS}
    current = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if line.startswith("#"):
            current = HEADINGS.get(line.lstrip("#").strip().lower())
            continue
        if current and line.startswith(("- ", "* ")):
            item = line[2:].strip()
            if item:
                sections[current].append(item)
    return sections


# --- what the phases hand the pipeline ------------------------------------------------------


@dataclass
class Extraction:
    """Phase 1's answer for one conversation (chat.summaries.extract.session_extract)."""

    title: str
    synopsis: str
    sections: dict[str, list[str]]  # keys of SECTIONS
    method: str  # "heuristic" or the model's spec
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def raw_memory(self) -> str:
        return render_block(self.sections)

    @property
    def empty(self) -> bool:
        return not any(self.sections.get(key) for key in SECTIONS)


@dataclass
class Skill:
    name: str  # lowercase-hyphenated (memory/documents.py NAME)
    description: str  # when to use it
    steps: list[str]
    pitfalls: list[str] = field(default_factory=list)


@dataclass
class Composition:
    """Phase 2's answer for one scope (chat.summaries.compose.documents_compose)."""

    memory_md: str
    summary_md: str
    skills: list[Skill]
    method: str
    input_tokens: int = 0
    output_tokens: int = 0
