"""Replaying a retrieval under an ablation (POST /api/v1/admin/replay, docs/admin-api.md): the
context rebuilt for the same query, subject, conversation, mode and profile with `record=False`
(nothing is written: no event, no recall counts, no cache entry), once under the App's own
configuration and once with a preset's overlay, and the difference of what each chose.

The presets are overlays of memory/config.py's keys. There is no `no_consent_gate`: consent is
not a configuration key of the context builder but the boundary of what may be read at all, and
a replay that lifted it would show the content of denied and pending memories."""

from memory.config import get_config
from memory.context import Context, context_build
from memory.models import Conversation, RetrievalEvent, Role

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
}


def _build(*, subject, conversation, query: str, mode: str, profile: str, config) -> Context:
    return context_build(
        subject=subject,
        message=query,
        config=config,
        conversation=conversation,
        record=False,
        mode=mode or None,
        profile=profile or "normal",
    )


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
    ablated = _view(_build(config=config.with_overrides(ABLATIONS[ablation]), **kwargs))
    return {
        "message": message,
        "baseline": baseline,
        "ablated": ablated,
        "diff": context_diff(baseline, ablated),
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
