"""Replaying a retrieval under an ablation (POST /api/v1/admin/replay, docs/admin-api.md): the
context rebuilt for the same query, subject, conversation, mode and profile with `record=False`
(nothing is written: no event, no recall counts, no cache entry), once under the App's own
configuration and once with a preset's overlay, and the difference of what each chose.

The presets are overlays of memory/config.py's keys, except `no_consent_gate`: consent is not a
configuration key but the boundary of what may be read, so that build runs with
`context_build(consent_gate=False)` — items of the categories the person denies now are let
through — and every item it adds that the gate would have withheld is masked: its reason
becomes "[withheld by consent: <category>]", its provenance is dropped, and the diff's
`withheld` names it (id, kind, section, category) without its text. A replay item carries no
memory text in any case; the mask also keeps the ranker's reason (matched terms) from
leaking. Pending memories and pending or denied evidence are not memories the builder can
read at all (queued apart, or stored without their text) and stay out."""

from memory.config import get_config
from memory.context import Context, context_build
from memory.models import Conversation, Evidence, Note, ProfileFact, RetrievalEvent, Role
from memory.selectors import consent_denied_categories

# the preset that lifts the consent gate instead of overlaying the configuration
NO_CONSENT_GATE = "no_consent_gate"

ABLATIONS: dict[str, dict] = {
    # ranked by similarity alone: full-text and vectors fused, no signals, links, rewrite or judge
    "similarity_only": {
        "retrieve": {"mode": "hybrid", "rewriter": {"enabled": False}},
        "links": {"expansionDepth": 0},
        "voting": {"enabled": False},
        "applicability": {"enabled": False},
    },
    # the message searched as typed
    "no_rewrite": {"retrieve": {"rewriter": {"enabled": False}}},
    # no expansion along the note link graph
    "no_links": {"links": {"expansionDepth": 0}},
    # no votes, recency or usage in the ranking (retrieve.mode full is hybrid + signals)
    "no_signals": {"retrieve": {"mode": "hybrid"}, "voting": {"enabled": False}},
    # no applicability judgement: retrieval order decides
    "no_applicability": {"applicability": {"enabled": False}},
    # the denied categories let through, and masked (module docstring)
    NO_CONSENT_GATE: {},
}

WITHHELD_MODELS: dict[str, type[ProfileFact] | type[Note] | type[Evidence]] = {
    "f": ProfileFact,
    "n": Note,
    "e": Evidence,
}


def withheld_marker(category: str) -> str:
    return f"[withheld by consent: {category}]"


def _build(
    *, subject, conversation, query: str, mode: str, profile: str, config, consent_gate: bool = True
) -> Context:
    return context_build(
        subject=subject,
        message=query,
        config=config,
        conversation=conversation,
        record=False,
        mode=mode or None,
        profile=profile or "normal",
        consent_gate=consent_gate,
    )


def _mask_withheld(subject, view: dict) -> list[dict]:
    """Mask, in place, the items of `view` whose category the subject denies (what the consent
    gate would have withheld); return them as id, kind, section and category."""
    denied = consent_denied_categories(subject=subject)
    ids: dict[str, list[int]] = {}
    for item in view["items"]:
        prefix, _, pk = item["id"].partition(":")
        if prefix in WITHHELD_MODELS and pk.isdigit():
            ids.setdefault(prefix, []).append(int(pk))
    categories = {
        f"{prefix}:{pk}": category
        for prefix, pks in ids.items()
        for pk, category in WITHHELD_MODELS[prefix]
        .objects.filter(subject=subject, pk__in=pks)
        .values_list("pk", "category")
    }
    withheld = []
    for item in view["items"]:
        category = categories.get(item["id"], "")
        if category not in denied:
            continue
        item["reason"] = withheld_marker(category)
        item.pop("source", None)
        withheld.append(
            {"id": item["id"], "kind": item["kind"], "section": item["section"], "category": category}
        )
    return withheld


def _view(context: Context) -> dict:
    return {
        "rewritten_query": context.rewritten_query,
        "items": [i.as_dict() for i in context.items],
        "tokens": context.tokens(),
    }


def context_diff(baseline: dict, ablated: dict) -> dict:
    """What the ablated build chose differently: per section the item ids added and removed, and
    whether the ones both chose came in another order; token deltas per block."""
    sections = []
    names = sorted({i["section"] for i in baseline["items"]} | {i["section"] for i in ablated["items"]})
    for name in names:
        before = [i["id"] for i in baseline["items"] if i["section"] == name]
        after = [i["id"] for i in ablated["items"] if i["section"] == name]
        kept_before = [i for i in before if i in after]
        kept_after = [i for i in after if i in before]
        added = [i for i in after if i not in before]
        removed = [i for i in before if i not in after]
        reordered = kept_before != kept_after
        if added or removed or reordered:
            sections.append({"section": name, "added": added, "removed": removed, "reordered": reordered})
    blocks = sorted(set(baseline["tokens"]) | set(ablated["tokens"]))
    tokens = {b: ablated["tokens"].get(b, 0) - baseline["tokens"].get(b, 0) for b in blocks}
    query_changed = baseline["rewritten_query"] != ablated["rewritten_query"]
    return {
        "rewritten_query_changed": query_changed,
        "sections": sections,
        "tokens": tokens,
        "changed": bool(sections) or query_changed,
    }


def replay_turn(*, subject, conversation, message: str, mode: str, profile: str, ablation: str) -> dict:
    config = get_config(subject.app)
    kwargs = {
        "subject": subject,
        "conversation": conversation,
        "query": message,
        "mode": mode,
        "profile": profile,
    }
    baseline = _view(_build(config=config, **kwargs))
    gated = ablation != NO_CONSENT_GATE
    ablated = _view(_build(config=config.with_overrides(ABLATIONS[ablation]), consent_gate=gated, **kwargs))
    withheld = [] if gated else _mask_withheld(subject, ablated)
    return {
        "message": message,
        "baseline": baseline,
        "ablated": ablated,
        "diff": {**context_diff(baseline, ablated), "withheld": withheld},
    }


def replay_event(*, event: RetrievalEvent, ablation: str) -> dict:
    return replay_turn(
        subject=event.subject,
        conversation=event.conversation,
        message=event.query,
        mode=event.mode,
        profile=event.profile,
        ablation=ablation,
    )


def replay_conversation(*, conversation: Conversation, ablation: str) -> list[dict]:
    """Each user turn of the conversation, as asked (the conversation as it is now)."""
    return [
        replay_turn(
            subject=conversation.subject,
            conversation=conversation,
            message=text,
            mode="",
            profile="normal",
            ablation=ablation,
        )
        for text in conversation.messages.filter(role=Role.USER)
        .order_by("occurred_at", "pk")
        .values_list("text", flat=True)
    ]
