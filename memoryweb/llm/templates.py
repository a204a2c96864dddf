"""Prompt templates in `memoryweb/llm/prompts/`: `NAME.txt` and the answer's schema `NAME.schema.json`.

Templates use `string.Template` placeholders (`$message`, `${history}`), so the JSON examples
in a prompt need no escaping; a literal dollar sign is written `$$`. Values that are not
strings are rendered as JSON. A missing variable is a programming error and raises.
"""

import json
import re
import string
from functools import lru_cache
from pathlib import Path
from typing import Any

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _path(name: str, suffix: str) -> Path:
    if not NAME.match(name):
        raise ValueError(f"invalid prompt name {name!r}")
    return PROMPTS_DIR / f"{name}{suffix}"


@lru_cache(maxsize=32)
def _template(name: str) -> string.Template:
    path = _path(name, ".txt")
    if not path.exists():
        raise ValueError(f"no prompt template {path.name} in {PROMPTS_DIR}")
    return string.Template(path.read_text(encoding="utf-8"))


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
