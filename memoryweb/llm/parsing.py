"""Reading JSON out of model answers, defensively, and checking it against a schema.

Models wrap JSON in ```json fences, put a sentence before it, think aloud in <think> blocks
(local reasoning models) or answer in plain prose. `extract_json` finds the first JSON object
in all of those; `schema_problem` checks the subset of JSON Schema our prompts use (type,
required, properties, items, enum, anyOf) and says what is wrong, without echoing values.
"""

import json
import re
from typing import Any

FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
THINKING = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
MAX_OBJECT_STARTS = 20  # a prose answer with many braces must not cost quadratic time

_decoder = json.JSONDecoder()


def _first_object(text: str) -> dict | None:
    start = text.find("{")
    tried = 0
    while start != -1 and tried < MAX_OBJECT_STARTS:
        try:
            value, _ = _decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        tried += 1
        start = text.find("{", start + 1)
    return None


def extract_json(text: str) -> dict | None:
    """The first JSON object in a model's text answer, or None."""
    text = THINKING.sub("", text or "").strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return value
    for block in FENCE.findall(text):
        found = _first_object(block)
        if found is not None:
            return found
    return _first_object(text)


def looks_like_prose(text: str) -> bool:
    """A non-empty answer with no JSON object in sight: the model declined or chatted."""
    text = THINKING.sub("", text or "").strip()
    return bool(text) and "{" not in text


_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _has_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    expected = _TYPES.get(name)
    return expected is None or isinstance(value, expected)


def schema_problem(value: Any, schema: dict, path: str = "$") -> str | None:
    """What makes `value` invalid under `schema` (a path and a rule), or None if it is valid."""
    if "anyOf" in schema:
        if not any(schema_problem(value, branch, path) is None for branch in schema["anyOf"]):
            return f"{path}: matches none of anyOf"
        return None
    kind = schema.get("type")
    if kind is not None:
        names = kind if isinstance(kind, list) else [kind]
        if not any(_has_type(value, name) for name in names):
            return f"{path}: expected {'/'.join(names)}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: not one of the allowed values"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{path}: missing required key {key!r}"
        for key, subschema in (schema.get("properties") or {}).items():
            if key in value and isinstance(subschema, dict):
                problem = schema_problem(value[key], subschema, f"{path}.{key}")
                if problem:
                    return problem
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problem = schema_problem(item, schema["items"], f"{path}[{i}]")
            if problem:
                return problem
    return None


def strict_compatible(schema: Any) -> bool:
    """Whether OpenAI's strict structured outputs accept the schema: every object closes its
    properties (`additionalProperties: false`) and requires all of them."""
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    properties = schema.get("properties") or {}
    if "object" in kinds and (
        schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(properties)
    ):
        return False
    parts = list(properties.values()) + list(schema.get("anyOf", []))
    if isinstance(schema.get("items"), dict):
        parts.append(schema["items"])
    return all(strict_compatible(part) for part in parts)
