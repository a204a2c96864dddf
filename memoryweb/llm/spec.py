"""Which provider and model each LLM-backed component uses (DESIGN §8).

A spec is `none`, `anthropic/MODEL`, `openai/MODEL` or `openai-compatible/MODEL`; the last one
needs `memory.llm.baseUrl` (llama.cpp, Ollama, vLLM, …). Model names may contain slashes
(`openai-compatible/meta-llama/Llama-3.1-8B`): only the first slash separates the provider.
API keys never live in the configuration tree; they come from the environment.
"""

import os
from dataclasses import dataclass
from typing import Any, Protocol

from memoryweb.errors import ConfigError


class Settings(Protocol):
    """What the LLM layer reads of the configuration: dotted keys such as `llm.reflection`
    (memory.config.MemoryConfig is one; this layer sits below it and never imports it)."""

    def __getitem__(self, dotted: str) -> Any: ...


COMPONENTS = (
    "reflection",
    "rewriter",
    "consolidation",
    "summaries",
    "chat",
    "applicability",
    "chunking",
    "revision",
    "consequences",
)

NONE = "none"
ANTHROPIC = "anthropic"
OPENAI = "openai"
OPENAI_COMPATIBLE = "openai-compatible"
PROVIDERS = (ANTHROPIC, OPENAI, OPENAI_COMPATIBLE)

API_KEY_ENV = {
    ANTHROPIC: "ANTHROPIC_API_KEY",
    OPENAI: "OPENAI_API_KEY",
    OPENAI_COMPATIBLE: "OPENAI_COMPATIBLE_API_KEY",
}
# Local servers usually accept any key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"


@dataclass(frozen=True)
class LLMSpec:
    provider: str  # "none" or one of PROVIDERS
    model: str = ""
    base_url: str = ""

    @property
    def is_none(self) -> bool:
        return self.provider == NONE

    def __str__(self) -> str:
        return NONE if self.is_none else f"{self.provider}/{self.model}"


def parse_spec(spec: str, base_url: str = "", *, key: str = "memory.llm") -> LLMSpec:
    """Parse a component's spec; a malformed one raises ConfigError naming `key`.

    `base_url` (the shared `memory.llm.baseUrl`) is used only by `openai-compatible`, so one
    local server can serve some components while others talk to Anthropic or OpenAI.
    """
    text = (spec or "").strip()
    if text.lower() == NONE:
        return LLMSpec(NONE)
    provider, slash, model = text.partition("/")
    provider = provider.strip().lower()
    model = model.strip()
    if provider not in PROVIDERS:
        raise ConfigError(
            f"{key}: unknown LLM provider {provider or text!r} in {text!r} — use none, "
            "anthropic/MODEL, openai/MODEL or openai-compatible/MODEL",
            key=key,
        )
    if not slash or not model:
        raise ConfigError(f"{key}: {text!r} names no model — write {provider}/MODEL", key=key)
    if provider == OPENAI_COMPATIBLE:
        url = base_url.strip()
        if not url:
            raise ConfigError(
                f"{key}: {text!r} needs memory.llm.baseUrl (for example http://localhost:8080/v1)",
                key=key,
            )
        return LLMSpec(provider, model, url)
    return LLMSpec(provider, model)


# components whose spec "none" means "the default role's model" (`llm.default`), and only then
# the heuristic path
FALLS_BACK_TO_DEFAULT = ("summaries",)


def component_spec(component: str, config: Settings) -> LLMSpec:
    if component not in COMPONENTS:
        raise ValueError(f"unknown LLM component {component!r}; expected one of {', '.join(COMPONENTS)}")
    spec = parse_spec(config[f"llm.{component}"], config["llm.baseUrl"], key=f"memory.llm.{component}")
    if spec.is_none and component in FALLS_BACK_TO_DEFAULT:
        return parse_spec(config["llm.default"], config["llm.baseUrl"], key="memory.llm.default")
    return spec


def api_key_for(spec: LLMSpec, *, key: str = "memory.llm") -> str:
    """The provider's key from the environment; a missing Anthropic/OpenAI key is a ConfigError."""
    variable = API_KEY_ENV[spec.provider]
    value = os.environ.get(variable, "").strip()
    if value:
        return value
    if spec.provider == OPENAI_COMPATIBLE:
        return PLACEHOLDER_API_KEY
    raise ConfigError(f"{key} is {spec} but {variable} is not set in the environment", key=key)


def provider_status(config: Settings) -> list[dict[str, Any]]:
    """For diagnose: each component's provider and model, and whether it can run.

    Never raises: a malformed spec or a missing key is reported in `problem`. Keys are never
    shown, only whether they are set.
    """
    rows = []
    for component in COMPONENTS:
        row: dict[str, Any] = {
            "component": component,
            "spec": config[f"llm.{component}"],
            "provider": "",
            "model": "",
            "base_url": "",
            "api_key": "",
            "problem": "",
        }
        try:
            spec = component_spec(component, config)
        except ConfigError as exc:
            row["problem"] = exc.message
            rows.append(row)
            continue
        row.update(provider=spec.provider, model=spec.model, base_url=spec.base_url)
        if not spec.is_none:
            variable = API_KEY_ENV[spec.provider]
            if os.environ.get(variable, "").strip():
                row["api_key"] = f"{variable} set"
            elif spec.provider == OPENAI_COMPATIBLE:
                row["api_key"] = "placeholder (none set)"
            else:
                row["api_key"] = f"{variable} missing"
                row["problem"] = f"{variable} is not set; {component} falls back to no LLM"
        rows.append(row)
    return rows
