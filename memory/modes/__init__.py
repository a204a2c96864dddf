"""Assistant modes (docs/modes.md): JSON manifests that say what a context may hold and how it
is weighed — allowed scopes, preferred kinds, a privacy ceiling over the consent categories,
section caps, retrieval parameters, the applicability knobs and what else renders.

The seven built-in manifests live in `builtin/`; a deployment adds its own from the folder named
by `MEMORYWEB_MODES_DIR` (one `NAME.json` per mode; a custom manifest named like a built-in one
replaces it). Every manifest is validated against `schema.json` (the `jsonschema` library); an
error names the file and the field. A conversation's mode must be a known one; "" means the
default, `general_qa`.
"""

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from jsonschema import Draft202012Validator

from memory.config import MemoryConfig
from memoryweb.errors import ConfigError, InvalidInput

DEFAULT_MODE = "general_qa"
BUILTIN_DIR = Path(__file__).parent / "builtin"
SCHEMA_PATH = Path(__file__).parent / "schema.json"

# a manifest's section name → the configuration key of that section's token cap
SECTION_KEYS = {
    "profile": "profile.maxTokens",
    "recalled": "recallInjection.maxTokens",
    "memory-index": "index.maxTokens",
    "lessons": "lessons.maxTokens",
    "procedures": "procedures.maxTokens",
    "mental_models": "memories.mentalModelsMaxTokens",
    "topics": "topics.maxTokens",
    "contract": "contract.maxTokens",
    "state": "state.maxTokens",
    "consequences": "consequences.maxTokens",
    "transcript": "recentTranscript.budgetTokens",
}
# a manifest's retrieval parameter → its configuration key
RETRIEVAL_KEYS = {
    "k": "recallInjection.k",
    "candidates": "recallInjection.candidates",
    "indexLimit": "index.limit",
    "minApplicability": "applicability.minApplicability",
}


@dataclass(frozen=True)
class Mode:
    name: str
    title: str
    description: str
    scopes: tuple[str, ...]
    preferred_kinds: tuple[str, ...]
    allowed_categories: frozenset[str]
    sections: dict[str, int]
    retrieval: dict[str, Any]
    applicability: dict[str, float]
    renders: dict[str, bool]
    builtin: bool
    source: str  # the manifest's file
    manifest: dict = field(repr=False, compare=False, hash=False, default_factory=dict)

    def category_allowed(self, category: str) -> bool:
        """Whether an item of consent `category` may render in this mode ("" always may)."""
        return not category or category in self.allowed_categories

    def scope_allowed(self, item_scope: str, conversation_scope: str) -> bool:
        """Whether an item scoped `item_scope` is within reach of a conversation scoped
        `conversation_scope` ("same", "unscoped", "other" in the manifest's `scopes`)."""
        if not item_scope:
            return "unscoped" in self.scopes
        if item_scope == conversation_scope:
            return "same" in self.scopes
        return "other" in self.scopes

    def config_overrides(self) -> dict:
        """The configuration tree this mode sets on top of the App's (section caps, retrieval
        parameters, the score weights). A key the manifest leaves out keeps its configured value."""
        tree: dict = {}

        def put(dotted: str, value) -> None:
            node = tree
            *parents, leaf = dotted.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = value

        for section, cap in self.sections.items():
            put(SECTION_KEYS[section], cap)
        for name, value in self.retrieval.items():
            if name == "weights":
                for weight, number in value.items():
                    put(f"applicability.weights.{weight}", float(number))
            else:
                put(RETRIEVAL_KEYS[name], float(value) if name == "minApplicability" else value)
        return tree

    def apply(self, config: MemoryConfig) -> MemoryConfig:
        overrides = self.config_overrides()
        return config.with_overrides(overrides) if overrides else config

    def as_dict(self) -> dict:
        return {**self.manifest, "builtin": self.builtin}


def policy_hash(mode: Mode, config: MemoryConfig) -> str:
    """A digest of what decides a context besides the memory itself: the mode's manifest and
    the configuration in force (cache keys and RetrievalEvents carry it)."""
    manifest = json.dumps(mode.manifest, sort_keys=True, default=str)
    key = f"policy_hash:{manifest}"
    # once per configuration and mode: copying and dumping the whole tree was ~1 ms of a build,
    # and the builder's configurations are the same objects build after build (with_overrides)
    digest = config.memo.get(key)
    if digest is None:
        payload = json.dumps({"mode": mode.manifest, "config": config.as_dict()}, sort_keys=True, default=str)
        digest = config.memo[key] = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return digest


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def manifest_schema() -> dict:
    return _validator().schema


def _field_path(error) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        path = f"{path}.{missing}" if path else missing
    if error.validator == "additionalProperties":
        extra = error.message.split("'")[1] if "'" in error.message else ""
        path = f"{path}.{extra}" if path else extra
    return path or "(manifest)"


def manifest_errors(document: Any) -> list[tuple[str, str]]:
    """Every schema violation of `document` as (field path, message), in path order."""
    errors = sorted(_validator().iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    return [(_field_path(e), e.message) for e in errors]


def mode_from_manifest(document: Any, *, source: str, builtin: bool = False) -> Mode:
    """A validated Mode; ConfigError naming `source` and the first offending field otherwise."""
    errors = manifest_errors(document)
    if errors:
        path, message = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ConfigError(f"mode manifest {source}: {path}: {message}{more}", key=path)
    stem = Path(source).stem
    if not builtin and stem != document["name"]:
        raise ConfigError(
            f"mode manifest {source}: name: {document['name']!r} must match the file name {stem!r}",
            key="name",
        )
    return Mode(
        name=document["name"],
        title=document["title"],
        description=document["description"],
        scopes=tuple(document["scopes"]),
        preferred_kinds=tuple(document["preferredKinds"]),
        allowed_categories=frozenset(document["privacyCeiling"]["allow"]),
        sections=dict(document["sections"]),
        retrieval=dict(document["retrieval"]),
        applicability={k: float(v) for k, v in document["applicability"].items()},
        renders={"consequences": True, **document["renders"]},
        builtin=builtin,
        source=source,
        manifest=document,
    )


def _load(path: Path, *, builtin: bool) -> Mode:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"mode manifest {path}: cannot be read ({exc})", key=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"mode manifest {path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            key=str(path),
        ) from exc
    return mode_from_manifest(document, source=str(path), builtin=builtin)


def modes_dir() -> Path | None:
    folder = getattr(settings, "MEMORYWEB_MODES_DIR", "") or ""
    return Path(folder) if folder else None


@lru_cache(maxsize=4)
def _registry(folder: str) -> dict[str, Mode]:
    modes = {p.stem: _load(p, builtin=True) for p in sorted(BUILTIN_DIR.glob("*.json"))}
    if folder:
        path = Path(folder)
        if not path.is_dir():
            raise ConfigError(f"MEMORYWEB_MODES_DIR {folder}: not a folder", key="MEMORYWEB_MODES_DIR")
        for manifest in sorted(path.glob("*.json")):
            mode = _load(manifest, builtin=False)
            modes[mode.name] = mode
    return modes


def modes_all() -> list[Mode]:
    """Every known mode, the default first, then by name."""
    folder = modes_dir()
    registry = _registry(str(folder) if folder else "")
    return sorted(registry.values(), key=lambda m: (m.name != DEFAULT_MODE, m.name))


def mode_names() -> list[str]:
    return [m.name for m in modes_all()]


def mode_get(name: str, *, field: str = "mode") -> Mode:
    """The mode called `name` ("" is the default). InvalidInput naming `field` when unknown."""
    folder = modes_dir()
    registry = _registry(str(folder) if folder else "")
    mode = registry.get(name or DEFAULT_MODE)
    if mode is None:
        raise InvalidInput(f"unknown mode {name!r}; known modes: {', '.join(sorted(registry))}", field=field)
    return mode


def mode_of(conversation) -> Mode:
    """The mode a stored conversation runs in. A label stored before modes were validated (or
    whose custom manifest was since removed) reads as the default."""
    try:
        return mode_get(conversation.mode if conversation is not None else "")
    except InvalidInput:
        return mode_get("")


def reset_modes_cache() -> None:
    _registry.cache_clear()


__all__ = [
    "DEFAULT_MODE",
    "Mode",
    "manifest_errors",
    "manifest_schema",
    "mode_from_manifest",
    "mode_get",
    "mode_names",
    "mode_of",
    "modes_all",
    "policy_hash",
    "reset_modes_cache",
]
