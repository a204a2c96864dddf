"""Prompt templates in `memoryweb/llm/prompts/`: `NAME.txt` or `NAME.md`, and the answer's
schema `NAME.schema.json`.

`.txt` templates use `string.Template` placeholders (`$message`, `${history}`), so the JSON
examples in a prompt need no escaping; a literal dollar sign is written `$$`. `.md` templates
(the session-summary pipeline's, in `prompts/memories/` and named as the seed names them:
`memories/stage_one_system`, `memories/read-path`) use `{{name}}` placeholders and nothing else is special. Values that are not
strings are rendered as JSON. A missing variable is a programming error and raises.
"""

import json
import re
import string
from functools import lru_cache
from pathlib import Path
from typing import Any

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
# the session-summary pipeline's templates live in prompts/memories/ (its consolidation.md is
# not consolidation.txt, the lessons prompt)
NAME = re.compile(r"^(?:memories/)?[a-z][a-z0-9_-]*$")
BRACES = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class BraceTemplate:
    """A `.md` template: `{{name}}` placeholders, the rest literal (the shape string.Template has)."""

    def __init__(self, template: str):
        self.template = template

    def get_identifiers(self) -> list[str]:
        return list(dict.fromkeys(BRACES.findall(self.template)))

    def substitute(self, values: dict[str, str]) -> str:
        return BRACES.sub(lambda m: values[m.group(1)], self.template)


def _path(name: str, suffix: str) -> Path:
    if not NAME.match(name):
        raise ValueError(f"invalid prompt name {name!r}")
    return PROMPTS_DIR / f"{name}{suffix}"


@lru_cache(maxsize=32)
def _template(name: str) -> string.Template | BraceTemplate:
    path = _path(name, ".txt")
    if path.exists():
        return string.Template(path.read_text(encoding="utf-8"))
    markdown = _path(name, ".md")
    if markdown.exists():
        return BraceTemplate(markdown.read_text(encoding="utf-8"))
    raise ValueError(f"no prompt template {path.name} or {markdown.name} in {PROMPTS_DIR}")


def template_variables(name: str) -> set[str]:
    """The placeholders a template expects."""
    return set(_template(name).get_identifiers())


def render_prompt(name: str, variables: dict[str, Any]) -> str:
    """Fill the template `name` with `variables`; raise ValueError naming any missing one."""
    template = _template(name)
    missing = sorted(set(template.get_identifiers()) - set(variables))
    if missing:
        raise ValueError(f"prompt {name!r} needs the variables {', '.join(missing)}")
    values = {
        key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
        for key, value in variables.items()
    }
    return template.substitute(values)


@lru_cache(maxsize=32)
def _schema_text(name: str) -> str:
    path = _path(name, ".schema.json")
    if not path.exists():
        raise ValueError(f"no answer schema {path.name} in {PROMPTS_DIR}")
    return path.read_text(encoding="utf-8")


def prompt_schema(name: str) -> dict:
    """The JSON Schema of the answer the template `name` asks for (a fresh copy)."""
    return json.loads(_schema_text(name))


def prompt_names() -> list[str]:
    return sorted(path.stem for path in PROMPTS_DIR.glob("*.txt"))
