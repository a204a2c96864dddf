"""The context-window bar of the context preview and the playground: a built context's tokens
against a chat model's context window, one segment per section, the stable prefix apart.

It reads what the builder reports (`Context.as_dict()`: each block's tokens, the total) and
counts nothing again. The window is the configured chat model's (`memoryweb.llm.windows`),
or another model of the table the person picks; static/js/app.js redraws the bar in the page
when the pick changes, with the same arithmetic as `share_text` and `widths` here.
"""

from memoryweb.errors import ConfigError
from memoryweb.llm.windows import CONFIGURED, ContextWindow, chat_window, context_windows

PREFIX = "stable_prefix"
TONES = 6  # the segment colours (static/css/app.css .seg-1 … .seg-6); each also has its label


def share_text(tokens: int, window: int) -> str:
    """`tokens` as a share of `window`, to a tenth of a percent, rounded half up: "0.6 %";
    "under 0.1 %" for a share that is not nothing but rounds to it."""
    tenths = (tokens * 2000 + window) // (2 * window)
    if tokens and not tenths:
        return "under 0.1 %"
    return f"{tenths // 10}.{tenths % 10} %"


def total_text(total: int, window: int) -> str:
    text = f"{total:,} of {window:,} tokens ({share_text(total, window)})"
    return f"{text}, {total - window:,} over the window" if total > window else text


def widths(tokens: list[int], window: int) -> list[str]:
    """Each segment's width in % of the bar: of the window, or of the total when it is over."""
    scale = max(window, sum(tokens))
    return [f"{100 * t / scale:.4f}" for t in tokens]


def _options(config) -> tuple[list[ContextWindow], ContextWindow | None]:
    try:
        configured = chat_window(config)
    except ConfigError:  # a malformed llm.chat: say nothing of it here (the playground does)
        configured = None
    table = context_windows()
    options = [configured, *table] if configured is not None and configured.key == CONFIGURED else table
    return options, configured


def window_meter(context: dict, *, config, choice: str = "") -> dict:
    """What the bar shows for `context` (a Context.as_dict()): the model picked (`choice`, a
    key of the table, when it is one; else the configured chat model's window; else the
    table's first), every model to pick from, the total and its text, and a row per section
    that holds anything (the stable prefix first, apart), with its share of the context."""
    options, configured = _options(config)
    by_key = {o.key: o for o in options}
    chosen = by_key.get(choice) or configured or options[0]
    blocks = [b for b in context["blocks"] if b["tokens"]]
    total = context["tokens"]["total"]
    window = chosen.tokens
    rows = []
    tail_index = 0
    for block, width in zip(blocks, widths([b["tokens"] for b in blocks], window), strict=True):
        prefix = block["name"] == PREFIX
        if not prefix:
            tail_index += 1
        rows.append(
            {
                "name": block["name"],
                "prefix": prefix,
                "tokens": block["tokens"],
                "tokens_text": f"{block['tokens']:,}",
                "tone": "prefix" if prefix else str((tail_index - 1) % TONES + 1),
                "width": width,
                "of_context": round(100 * block["tokens"] / total) if total else 0,
                "of_window": share_text(block["tokens"], window),
            }
        )
    return {
        "options": [
            {"window": o, "selected": o.key == chosen.key, "tokens_text": f"{o.tokens:,}"} for o in options
        ],
        "chosen": chosen,
        "configured": configured,
        "total": total,
        "window": window,
        "value_now": min(total, window),  # aria-valuenow stays within aria-valuemax
        "text": total_text(total, window),
        "over": total > window,
        "prefix": [r for r in rows if r["prefix"]],
        "tail": [r for r in rows if not r["prefix"]],
        "rows": rows,
    }
