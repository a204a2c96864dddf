"""The MEMORY configuration tree (DESIGN §7).

Keys are addressed with dots from the `memory` root: `memory.profile.maxTokens`,
`memory.notes.maxEntries`, … Values come, later layers winning, from:

1. the seed defaults below,
2. the JSON file named by `MEMORYWEB_CONFIG` (shaped like `{"memory": {"notes": {...}}}`),
3. environment variables `MEMORY__<SECTION>__<KEY>` (case-insensitive; values parsed as JSON,
   else taken as a string), e.g. `MEMORY__NOTES__MAXENTRIES=500`,
4. the App's own `config` (same shape as the file).

An unknown key is an error that names it and suggests the nearest valid key; a value of the
wrong type is an error that names the key and the expected type. Nothing is silently ignored.
"""

import copy
import difflib
import json
import os
from functools import lru_cache
from typing import Any

from django.conf import settings

from memory.embedding_models import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from memory.embedding_models import MODELS as LOCAL_MODELS
from memory.embedding_models import model_problem
from memoryweb.errors import ConfigError, InvalidInput
from memoryweb.profiles import PROFILES


def local_embeddings_installed() -> bool:
    """Whether the `local` provider's default model can run here (`make install` installs it):
    onnxruntime, tokenizers and the model's package, looked up without importing them."""
    return model_problem(LOCAL_MODELS[DEFAULT_LOCAL_MODEL]) is None


DEFAULTS: dict[str, Any] = {
    # the session-summary pipeline (chat/summaries/): "off", or "local" (whole conversations
    # distilled into MEMORY.md, the injected summary and skills). The fabric (facts, notes,
    # lessons…) runs either way. A layer that sets the legacy memories.enabled true and no
    # backend means "local" (merge() below)
    "backend": "off",
    "memories": {
        "enabled": False,  # legacy switch, see "backend"
        # phase 1 skips conversations whose last message is older than this…
        "maxRolloutAgeDays": 30,
        # …or newer than this (still receiving messages)
        "minRolloutIdleHours": 12,
        # conversations extracted per run at most (the rest wait for the next run)
        "maxRolloutsPerStartup": 64,
        # the summary's share of the stable prefix ("Memory Guidance"), in tokens
        "summaryInjectionTokenLimit": 5000,
        # a run holds its subject's lease this long without a heartbeat
        "leaseSeconds": 600,
        # phase 1: a conversation's messages sent to the model (the newest kept), its answer
        "stageOneInputTokens": 12000,
        "stageOneOutputTokens": 2000,
        # phase 2: the extractions sent to the model (the newest kept), its answer
        "consolidationInputTokens": 24000,
        "consolidationOutputTokens": 4000,
        # MEMORY.md and skills written by one run at most
        "memoryMaxTokens": 6000,
        "maxSkills": 12,
        # the context tail's <mental_models> block, in tokens
        "mentalModelsMaxTokens": 800,
    },
    "notes": {
        # false turns the whole context off: /context answers empty without touching the DB
        "enabled": True,
        # seed 1000; ours 10000: eviction deletes for good, and a 10,000-note subject still builds
        # a context in 13.6 ms p95 (README, bench context)
        "maxEntries": 10000,
        "maxChars": 4000,
        "maxTags": 16,
        # k of explicit recall (GET …/notes without k); seed 5, ours 10: the endpoint's old default
        "recallDefaultK": 10,
    },
    # every user and assistant turn as a retrievable memory of its own (memory.models.Evidence),
    # ranked with the notes; false: reflection writes none and the context searches none.
    # maxEntries: the subject's live turns kept (the oldest go first, like notes.maxEntries)
    "evidence": {"enabled": True, "maxEntries": 20000},
    # false: no `### profile` in the context and no facts extracted by reflection
    # contextualKeywordGate false: contextual facts render without a keyword hit (after those with one)
    # keywordSimilarity: with embeddings on, a contextual fact also renders when a word of the
    # message is this near one of its keywords (cosine of the word vectors; 1 turns it off).
    # 0.55 on all-MiniLM-L6-v2: dinner ~ food 0.69, meal ~ food 0.80; git ~ editor 0.39
    "profile": {"enabled": True, "maxTokens": 512, "contextualKeywordGate": True, "keywordSimilarity": 0.55},
    "recallInjection": {"enabled": True, "k": 3, "maxTokens": 400, "candidates": 40},
    # enabled false: no section, and consolidation distils no lesson (no procedure either)
    "lessons": {"enabled": True, "k": 2, "maxTokens": 300},
    # enabled false: no section, and consolidation writes lessons without their procedure
    "procedures": {"enabled": True, "k": 1, "maxTokens": 400},
    # `### memory-index`: at most `limit` pointers; also accepted under its old name memoryIndex
    # (with maxEntries for limit), see ALIASES
    "index": {"enabled": True, "limit": 12, "maxTokens": 300, "gistChars": 72},
    "stablePrefix": {"maxTokens": 400},
    # seed 0.85, ours 0.8: LoCoMo dev with reflection gives 189 vs 190 notes and the same recall
    "dedup": {"enabled": True, "fts5Threshold": 0.8, "candidates": 8, "minTerms": 4},
    # reflection's EVOLVE: refine the tags of an existing note instead of storing a repeat
    "evolution": {"enabled": True},
    "eviction": {"utilityWeighted": False},
    # the note link graph (memory/links.py): edges written after a note is stored, BFS at recall
    "links": {
        "enabled": True,
        "neighbours": 5,
        "minSimilarity": 0.2,
        "expansionDepth": 1,
        "maxExpanded": 12,
        "expandedScoreFactor": 0.5,
        # type the edges with llm.consolidation's model when one is configured
        "llmTyping": True,
    },
    # signalDecay: every vote_score is multiplied by it on each decay tick (consolidation/);
    # seed 0.95, ours 0.9: ticks are 6 h apart, so a vote's half-life is 40 h (0.95: 81 h).
    # enabled false: votes are refused (409), decay skips the app and ranking ignores vote scores
    "voting": {"enabled": True, "maxVotePerItem": 5.0, "signalDecay": 0.9},
    # distilling clusters of linked notes into lessons and procedures (consolidation/); enabled
    # false: the periodic sweep skips the app's subjects and "consolidate now" is refused (409)
    "consolidation": {
        "enabled": True,
        "minClusterSize": 3,
        # a bigger cluster is distilled in pieces of this size (a prompt stays small)
        "maxClusterSize": 20,
        "maxClustersPerTick": 5,
        "requireSharedTag": True,
        # read from the global configuration when the beat schedule is installed
        "intervalHours": 6,
    },
    "retention": {"retrievalEventDays": 30},
    "consent": {"pendingExpiryDays": 30},
    # seed 3/2, ours 6/4: one call covers every message since the last finished run (two per
    # turn, more after a superseded run); single labelled messages carry up to 4 facts
    "reflection": {"enabled": True, "maxFactsPerCall": 6, "maxNotesPerCall": 4},
    "retrieve": {
        # gateMode: heuristic (short or referential messages only), always, never (REWRITER_GATES)
        "rewriter": {
            "enabled": True,
            "gateMode": "heuristic",
            "maxWords": 6,
            "historyTurns": 3,
            # the LLM rewriter's budget inside the hot read; past it the message is searched as typed
            "timeoutMs": 1500,
        },
        # fts | vector | hybrid | full (memory/ranking/); full without embeddings is fts + signals
        "mode": "full",
        # weighted reciprocal rank of the full-text and vector lists: weight / (rrfK + rank)
        "fusion": {"lexicalWeight": 1.0, "vectorWeight": 0.6, "rrfK": 4.0},
        # mode full: the names of the people who speak ("Melanie: …") that the message holds are
        # searched as words (search) or, when it holds other words that are no date, left to
        # scoring.speakerMatch / entityMatch (signals; memory/ranking/names.py)
        "nameTerms": "signals",
    },
    # provider-qualified model per component: "none", "anthropic/MODEL", "openai/MODEL" or
    # "openai-compatible/MODEL" (with baseUrl); API keys come from the environment
    "llm": {
        "reflection": "none",
        "rewriter": "none",
        "consolidation": "none",
        # session summaries; "none" falls back to llm.default, then to the heuristic path
        "summaries": "none",
        "chat": "none",
        # the chat model's context window in tokens, for the dashboard's context-window bar;
        # 0: from the table of known models (memoryweb/llm/context_windows.json)
        "chatContextWindow": 0,
        # judging the candidates' applicability (one batched call per context build)
        "applicability": "none",
        # semantic cut points for very long pasted messages (chunking level 1)
        "chunking": "none",
        # choosing a belief revision when new evidence conflicts with a belief (memory/beliefs/)
        "revision": "none",
        # the action → outcome → tendency of a reported consequence (memory/person/consequences.py)
        "consequences": "none",
        # the model of a component that names none of its own (read by summaries only)
        "default": "none",
        "baseUrl": "",
        "timeoutSeconds": 30.0,
        "maxRetries": 2,
        "maxOutputTokens": 1024,
    },
    # vectors for recall (memory/embeddings/): provider "none", "local" (a small model on
    # onnxruntime, memory/embedding_models.py; the default all-MiniLM-L6-v2 comes with the
    # memoryweb[embeddings] extra, the others with embeddings-extra), "openai" or "openai-compatible" (any
    # /v1/embeddings at baseUrl). A failing provider degrades recall to full-text search.
    # The default is "local" when its modules are installed (`manage.py check` says when not).
    "embeddings": {
        "enabled": True,
        "provider": "local" if local_embeddings_installed() else "none",
        # "" picks the provider's default: all-MiniLM-L6-v2 (local), text-embedding-3-small (openai);
        # local: one of memory/embedding_models.py's MODELS (switching means `manage.py memory reembed`)
        "model": "",
        "baseUrl": "",
        # the environment variable holding the API key ("" = OPENAI_API_KEY for openai, none
        # for openai-compatible)
        "apiKeyEnv": "",
        # 0 = the model's own size; otherwise asked of the provider (text-embedding-3-*)
        "dimensions": 0,
        "timeoutSeconds": 10.0,
        "batchSize": 32,
        # after a failure the provider is not asked again for this long (recall uses FTS)
        "retryAfterSeconds": 30.0,
    },
    # assistant modes (memory/modes/, docs/modes.md): the mode of a conversation that names none
    "modes": {"default": "general_qa"},
    # selection by applicability (memory/ranking/applicability.py): final = applicability ·
    # weights.applicability + retrieval · weights.retrieval + vitality · weights.vitality +
    # confirmation · weights.confirmation − privacy and contradiction penalties; items whose
    # applicability is under minApplicability are not rendered (a mode may raise it).
    # llm.applicability judges fit in one batched call bounded by timeoutMs
    "applicability": {
        "enabled": True,
        "weights": {"applicability": 0.65, "retrieval": 0.15, "vitality": 0.10, "confirmation": 0.10},
        "privacyPenalty": 1.0,
        "contradictionPenalty": 0.3,
        "minApplicability": 0.0,
        # near-duplicate candidates (word Jaccard at least this) do not fill a section
        "diversityThreshold": 0.8,
        "timeoutMs": 2500,
        # candidates sent to the LLM judge at most (the rest keep the heuristic's judgement)
        "llmMaxCandidates": 24,
    },
    # the adaptive context cache (memory/context_cache.py): a follow-up turn whose staleness
    # stays under maxStaleness is served from the last build of the same conversation, policy
    # and operational profile; any change to the subject's memory invalidates it
    "cache": {
        "enabled": True,
        "maxStaleness": 0.5,
        # staleness reaches 1 after this many messages, or this many seconds
        "fullAfterMessages": 6,
        "fullAfterSeconds": 900,
        "ttlSeconds": 3600,
    },
    # `### transcript`: the newest turns of the same conversation that fit budgetTokens, oldest
    # first (memory/working.py); a budget under 2048 counts as 2048 (TRANSCRIPT_MIN_TOKENS). Off
    # by default: most chat apps send their own history
    "recentTranscript": {"enabled": False, "budgetTokens": 2048},
    # `### topics`: the conversation's active and parked topics (chat/topics.py), refreshed after
    # messages; a topic not mentioned in the newest parkAfterMessages messages is parked
    "topics": {"enabled": True, "maxTokens": 200, "maxActive": 3, "maxParked": 5, "parkAfterMessages": 6},
    # belief revision (memory/beliefs/): new evidence that bears on a belief is REINFORCEd,
    # WEAKENed, SUPERSEDEs it, SPLITs it BY_MODE/BY_SCOPE/BY_TIME, is MARKed as an EXCEPTION or
    # ARCHIVEs it; by rules offline, by llm.revision when set
    "beliefs": {
        "revision": {
            "enabled": True,
            # confidence moved by one REINFORCE / WEAKEN (clamped to [0, 1])
            "reinforceStep": 0.1,
            "weakenStep": 0.2,
            # a belief weakened below this is ARCHIVEd instead
            "archiveBelow": 0.15,
        },
        # mirror retrieval: a selected belief under this confidence (or contested) brings the
        # evidence unit it rests on into ### recalled beside it
        "mirror": {"enabled": True, "belowConfidence": 0.6, "maxEvidence": 2},
    },
    # `### contract`: how this person likes to work in the mode (memory/person/contract.py);
    # a dimension renders once its confidence reaches minConfidence
    "contract": {"enabled": True, "maxTokens": 120, "minConfidence": 0.35},
    # `### state`: urgency, focus, frustration in this conversation, halved every halfLifeMinutes;
    # a level renders from minLevel
    "state": {"enabled": True, "maxTokens": 80, "halfLifeMinutes": 30.0, "minLevel": 0.3},
    # `### consequences`: earlier advice and what came of it, when this message shows failure
    # or loop signals ("still failing", "same error again")
    "consequences": {"enabled": True, "maxTokens": 250, "limit": 3},
    # feedback signals on an item (votes): "stale" WEAKENs the belief, "intrusive" lowers its
    # applicability in the mode it was given in, "used"/"useful" add confidence
    "feedback": {"staleWeakens": True, "intrusivePenalty": 0.15, "usefulConfidence": 0.05},
    # two-level chunking of long messages before extraction (chat/reflection/chunking.py)
    "chunking": {
        "enabled": True,
        # a message longer than this (characters) is split at natural boundaries
        "thresholdChars": 4000,
        "minSegmentChars": 500,
        # a segment still over this many tokens is cut at semantic points (LLM) or by size
        "maxSegmentTokens": 16000,
        "markerEveryTokens": 1000,
    },
    # operational profiles (memoryweb/profiles.py): normal, low_power, offline are open to
    # every App; emergency and disaster only to an App that lists them here
    "profiles": {"allowed": ["normal", "low_power", "offline"]},
    "scoring": {
        "relevance": 1.0,
        "votes": 0.1,
        "recency": 0.15,
        "recencyHalfLifeDays": 30.0,
        # a note said again (merged by dedup) counts as confirmed: up to this much for 3+ times
        "confirmations": 0.05,
        # retrieve.mode full: notes of the turns within neighbourWindow messages of a candidate's
        # turn get neighbours × its relevance; the conversation holding the best candidates,
        # session × its share; a date the message names, dateMatch (slack after the range:
        # dateSlackDays); a "when" question, whenDated for notes that mention a date
        "neighbours": 0.5,
        "neighbourWindow": 2,
        "session": 0.3,
        "dateMatch": 0.5,
        "dateSlackDays": 0,
        "whenDated": 0.1,
        # retrieve.mode full: a note said by someone the message names ("Melanie: …") gains
        # speakerMatch, one naming them elsewhere entityMatch (× the share of the names)
        "speakerMatch": 0.2,
        "entityMatch": 0.1,
    },
}


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object"}.get(
        type(value), type(value).__name__
    )


def _suggest(name: str, choices: list[str]) -> str:
    lowered = {c.lower(): c for c in choices}
    low_name = name.lower()
    for low, original in lowered.items():
        shorter = min(low, low_name, key=len)
        if len(shorter) >= 4 and (low_name in low or low in low_name):
            return original
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[close[0]] if close else ""


def _unknown(path: str, name: str, choices: list[str]) -> ConfigError:
    hint = _suggest(name, choices)
    message = f"unknown configuration key {path}"
    if hint:
        message += f" — did you mean {hint}?"
    else:
        message += f" (valid keys here: {', '.join(sorted(choices))})"
    return ConfigError(message, key=path)


def _coerce(path: str, default: Any, value: Any) -> Any:
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(default, str):
        if isinstance(value, str):
            return value
    elif isinstance(default, list):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        raise ConfigError(f"{path} must be a list of strings, got {json.dumps(value)}", key=path)
    raise ConfigError(f"{path} must be a {_type_name(default)}, got {json.dumps(value)}", key=path)


# Old section names still accepted: old name → (section, {old key: its key there}). Values under
# the old name are read first, so where both names set a key the new name wins.
ALIASES: dict[str, tuple[str, dict[str, str]]] = {"memoryIndex": ("index", {"maxEntries": "limit"})}


def _alias_keys(alias: str) -> list[str]:
    target, renames = ALIASES[alias]
    return [*renames, *(k for k in DEFAULTS[target] if k not in renames.values())]


def _translate_aliases(override: dict, path: str) -> dict:
    """`override` with every old section name (ALIASES) folded into its new one."""
    if path != "memory" or not any(alias in override for alias in ALIASES):
        return override
    result = {k: v for k, v in override.items() if k not in ALIASES}
    for alias, (target, renames) in ALIASES.items():
        if alias not in override:
            continue
        here, section = f"{path}.{alias}", override[alias]
        if not isinstance(section, dict):
            raise ConfigError(f"{here} must be an object, got {json.dumps(section)}", key=here)
        translated = {}
        for key, value in section.items():
            if key not in _alias_keys(alias):
                raise _unknown(f"{here}.{key}", key, _alias_keys(alias))
            translated[renames.get(key, key)] = value
        explicit = result.get(target, {})
        result[target] = {**translated, **explicit} if isinstance(explicit, dict) else explicit
    return result


def _legacy_backend(override: dict, path: str) -> dict:
    """A layer with the legacy `memories.enabled: true` and no `backend` asks for "local"."""
    if path != "memory" or "backend" in override:
        return override
    memories = override.get("memories")
    if isinstance(memories, dict) and memories.get("enabled") is True:
        return {**override, "backend": "local"}
    return override


def merge(base: dict, override: dict, *, path: str = "memory") -> dict:
    """Return `base` updated with `override`, checking every key and type against DEFAULTS."""
    if not isinstance(override, dict):
        raise ConfigError(f"{path} must be an object, got {json.dumps(override)}", key=path)
    override = _legacy_backend(_translate_aliases(override, path), path)
    result = copy.deepcopy(base)
    for key, value in override.items():
        here = f"{path}.{key}"
        if key not in base:
            raise _unknown(here, key, list(base))
        if isinstance(base[key], dict):
            result[key] = merge(base[key], value, path=here)
        else:
            result[key] = _coerce(here, base[key], value)
    return result


def unwrap(document: Any, *, source: str) -> dict:
    """A config document is `{"memory": {...}}`; anything else at the top is an error."""
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: the configuration must be a JSON object")
    extra = [k for k in document if k != "memory"]
    if extra:
        raise _unknown(extra[0], extra[0], ["memory"])
    return document.get("memory", {})


def _from_env(environ: dict[str, str]) -> dict:
    tree: dict = {}
    for name, raw in environ.items():
        if not name.upper().startswith("MEMORY__"):
            continue
        segments = name.split("__")[1:]
        # the old section names (ALIASES) are sections too; merge() translates them
        node_defaults: Any = {**DEFAULTS, **{a: dict.fromkeys(_alias_keys(a)) for a in ALIASES}}
        node = tree
        path = "memory"
        for i, segment in enumerate(segments):
            if not isinstance(node_defaults, dict):
                raise ConfigError(f"environment variable {name}: {path} is not a section", key=path)
            match = {k.lower(): k for k in node_defaults}.get(segment.lower())
            if match is None:
                raise _unknown(f"{path}.{segment} (from {name})", segment, list(node_defaults))
            path = f"{path}.{match}"
            node_defaults = node_defaults[match]
            if i == len(segments) - 1:
                try:
                    value = json.loads(raw)
                except json.JSONDecodeError:
                    value = raw
                node[match] = value
            else:
                node = node.setdefault(match, {})
    return tree


EMBEDDING_PROVIDERS = ("none", "local", "openai", "openai-compatible")

BACKENDS = ("off", "local")
MEMORIES_MINIMUMS = {
    "maxRolloutAgeDays": 1,
    "minRolloutIdleHours": 0,
    "maxRolloutsPerStartup": 1,
    "summaryInjectionTokenLimit": 0,
    "leaseSeconds": 30,
    "stageOneInputTokens": 500,
    "stageOneOutputTokens": 200,
    "consolidationInputTokens": 500,
    "consolidationOutputTokens": 200,
    "memoryMaxTokens": 200,
    "maxSkills": 0,
    "mentalModelsMaxTokens": 0,
}


def _check_choice(value, choices: tuple[str, ...], key: str) -> None:
    """A value that must be one of `choices`: the error names the key and the nearest choice."""
    if value not in choices:
        hint = _suggest(value, list(choices))
        raise ConfigError(
            f"{key} must be one of {', '.join(choices)}, got {value!r}"
            + (f" — did you mean {hint}?" if hint else ""),
            key=key,
        )


def check_values(tree: dict) -> dict:
    """Value checks that a type alone cannot express; raises ConfigError naming the key."""
    emb = tree.get("embeddings", {})
    provider = emb.get("provider", "none")
    _check_choice(provider, EMBEDDING_PROVIDERS, "memory.embeddings.provider")
    if provider == "local" and emb.get("model") and emb["model"] not in LOCAL_MODELS:
        raise ConfigError(
            f"memory.embeddings.model: the local provider has no model {emb['model']!r}; use one of "
            f"{', '.join(LOCAL_MODELS)} (or leave it empty for {DEFAULT_LOCAL_MODEL}); "
            "docs/configuration.md lists them",
            key="memory.embeddings.model",
        )
    if provider == "openai-compatible" and not emb.get("baseUrl"):
        raise ConfigError(
            "memory.embeddings.baseUrl is required with provider openai-compatible "
            '(e.g. "http://127.0.0.1:11434")',
            key="memory.embeddings.baseUrl",
        )
    for key, low in (("dimensions", 0), ("batchSize", 1)):
        if key in emb and emb[key] < low:
            raise ConfigError(
                f"memory.embeddings.{key} must be at least {low}", key=f"memory.embeddings.{key}"
            )
    for key in ("timeoutSeconds", "retryAfterSeconds"):
        if key in emb and emb[key] < 0:
            raise ConfigError(f"memory.embeddings.{key} must not be negative", key=f"memory.embeddings.{key}")
    _check_ranking(tree)
    if tree.get("llm", {}).get("chatContextWindow", 0) < 0:
        raise ConfigError(
            "memory.llm.chatContextWindow must not be negative (0: from the table of known models)",
            key="memory.llm.chatContextWindow",
        )
    if not 0 <= tree.get("profile", {}).get("keywordSimilarity", 0.55) <= 1:
        raise ConfigError(
            "memory.profile.keywordSimilarity must be between 0 and 1", key="memory.profile.keywordSimilarity"
        )
    _check_choice(tree.get("backend", "off"), BACKENDS, "memory.backend")
    for key, low in MEMORIES_MINIMUMS.items():
        value = tree.get("memories", {}).get(key, low)
        if value < low:
            raise ConfigError(f"memory.memories.{key} must be at least {low}", key=f"memory.memories.{key}")
    rewriter = tree.get("retrieve", {}).get("rewriter", {})
    _check_choice(rewriter.get("gateMode", "heuristic"), REWRITER_GATES, "memory.retrieve.rewriter.gateMode")
    for profile in tree.get("profiles", {}).get("allowed", []):
        _check_choice(profile, PROFILES, "memory.profiles.allowed")
    applicability = tree.get("applicability", {})
    for key, weight in applicability.get("weights", {}).items():
        if weight < 0:
            raise ConfigError(
                f"memory.applicability.weights.{key} must not be negative",
                key=f"memory.applicability.weights.{key}",
            )
    for key in ("minApplicability", "diversityThreshold"):
        if not 0 <= applicability.get(key, 0) <= 1:
            raise ConfigError(
                f"memory.applicability.{key} must be between 0 and 1", key=f"memory.applicability.{key}"
            )
    if not 0 <= tree.get("cache", {}).get("maxStaleness", 0) <= 1:
        raise ConfigError(
            "memory.cache.maxStaleness must be between 0 and 1", key="memory.cache.maxStaleness"
        )
    _check_working_memory(tree)
    recall_k = tree.get("notes", {}).get("recallDefaultK", 10)
    if not 1 <= recall_k <= 100:  # what the recall endpoint accepts as k
        raise ConfigError(
            f"memory.notes.recallDefaultK must be between 1 and 100, got {recall_k}",
            key="memory.notes.recallDefaultK",
        )
    return tree


# the working-memory knobs (memory/working.py, chat/topics.py) → their least value
WORKING_MEMORY_MINIMUMS = {
    "recentTranscript.budgetTokens": 0,  # accepted from 0; under 2048 it counts as 2048
    "topics.maxTokens": 0,
    "topics.maxActive": 0,
    "topics.maxParked": 0,
    "topics.parkAfterMessages": 1,
}


def _check_working_memory(tree: dict) -> None:
    for dotted, low in WORKING_MEMORY_MINIMUMS.items():
        section, key = dotted.split(".")
        value = tree.get(section, {}).get(key, low)
        if value < low:
            raise ConfigError(f"memory.{dotted} must be at least {low}, got {value}", key=f"memory.{dotted}")


# heuristic: only short or referential messages are expanded (memory/rewriter.py); always: every
# message is expanded from the conversation's history; never: the message is searched as typed
REWRITER_GATES = ("heuristic", "always", "never")


RETRIEVE_MODES = ("fts", "vector", "hybrid", "full")
# retrieve.nameTerms: the speakers' names a message holds are searched as words, or left to the signals
NAME_TERMS = ("search", "signals")


def _check_ranking(tree: dict) -> None:
    retrieve, scoring = tree.get("retrieve", {}), tree.get("scoring", {})
    _check_choice(retrieve.get("mode", "full"), RETRIEVE_MODES, "memory.retrieve.mode")
    _check_choice(retrieve.get("nameTerms", "search"), NAME_TERMS, "memory.retrieve.nameTerms")
    fusion = retrieve.get("fusion", {})
    for key in ("lexicalWeight", "vectorWeight"):
        if fusion.get(key, 0) < 0:
            raise ConfigError(
                f"memory.retrieve.fusion.{key} must not be negative", key=f"memory.retrieve.fusion.{key}"
            )
    if fusion.get("rrfK", 1) <= 0:
        raise ConfigError("memory.retrieve.fusion.rrfK must be positive", key="memory.retrieve.fusion.rrfK")
    for key in (
        "confirmations",
        "neighbours",
        "session",
        "dateMatch",
        "dateSlackDays",
        "whenDated",
        "speakerMatch",
        "entityMatch",
    ):
        if scoring.get(key, 0) < 0:
            raise ConfigError(f"memory.scoring.{key} must not be negative", key=f"memory.scoring.{key}")
    if not 0 <= scoring.get("neighbourWindow", 0) <= 10:
        raise ConfigError(
            "memory.scoring.neighbourWindow must be between 0 and 10", key="memory.scoring.neighbourWindow"
        )


@lru_cache(maxsize=1)
def base_config() -> dict:
    """Defaults + settings.MEMORY + the JSON file + env, validated; cached per process."""
    config = copy.deepcopy(DEFAULTS)
    config = merge(config, getattr(settings, "MEMORY", {}) or {})
    path = getattr(settings, "MEMORYWEB_CONFIG", "")
    if path:
        try:
            with open(path) as f:
                document = json.load(f)
        except OSError as exc:
            raise ConfigError(f"MEMORYWEB_CONFIG={path}: cannot read the file ({exc})") from exc
        except json.JSONDecodeError as exc:
            raise ConfigError(f"MEMORYWEB_CONFIG={path}: invalid JSON ({exc})") from exc
        config = merge(config, unwrap(document, source=path))
    return check_values(merge(config, _from_env(dict(os.environ))))


class MemoryConfig:
    """The resolved tree for one App; read it as `config["notes.maxEntries"]`."""

    def __init__(self, tree: dict):
        self.tree = tree
        self._derived: dict[str, MemoryConfig] = {}  # with_overrides(), by its overrides
        # what is derived from the whole tree once per configuration (memory.modes.policy_hash)
        self.memo: dict[str, Any] = {}

    def __getitem__(self, dotted: str) -> Any:
        node: Any = self.tree
        for part in dotted.removeprefix("memory.").split("."):
            node = node[part]
        return node

    def as_dict(self) -> dict:
        return {"memory": copy.deepcopy(self.tree)}

    def with_overrides(self, tree: dict) -> "MemoryConfig":
        """A copy with some keys replaced (checked like any other layer); the same overrides
        of the same configuration give the same copy (the context builder asks every build)."""
        key = json.dumps(tree, sort_keys=True)
        derived = self._derived.get(key)
        if derived is None:
            derived = self._derived[key] = MemoryConfig(merge(self.tree, tree))
        return derived


def validate_app_config(document: Any) -> dict:
    """Check an App's override document; return its `memory` part. Raises ConfigError."""
    tree = unwrap(document or {}, source="app config")
    check_values(merge(base_config(), tree))
    default_mode = (tree.get("modes") or {}).get("default")
    if default_mode:
        from memory.modes import mode_get  # here: memory.modes reads this module's MemoryConfig

        try:
            mode_get(default_mode, field="memory.modes.default")
        except InvalidInput as exc:
            raise ConfigError(f"memory.modes.default: {exc.message}", key="memory.modes.default") from exc
    return tree


def get_config(app=None) -> MemoryConfig:
    """The App's configuration: the base layers, then the App's own document. Cached per process
    by that document's content (an edited App config is a new key), so each request does not
    merge and check the tree again."""
    if app is None or not app.config:
        return _config_for(None, "")
    return _config_for(app.name, json.dumps(app.config, sort_keys=True))


@lru_cache(maxsize=256)
def _config_for(app_name: str | None, document: str) -> MemoryConfig:
    tree = base_config()
    if document:
        tree = check_values(merge(tree, unwrap(json.loads(document), source=f"app {app_name}")))
    return MemoryConfig(tree)


def reset_cache() -> None:
    base_config.cache_clear()
    _config_for.cache_clear()
