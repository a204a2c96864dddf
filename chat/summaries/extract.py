"""Phase 1: one conversation → its Extraction (chat.summaries.blocks).

With a `summaries` model (or `llm.default`) the conversation goes to the model with the prompts
memories/stage_one_system and memories/stage_one_input: its messages (secrets redacted, the
newest kept within `memories.stageOneInputTokens`) and the notes reflection took from it. The
answer is untrusted text: it is trimmed, capped and deduplicated before it becomes sections.
Without a model, or when the call falls back (an error, invalid JSON, a schema mismatch), the
heuristic path (chat.summaries.extract_heuristic) reads the same inputs by rules.
"""

import json

from chat.summaries import phrasing
from chat.summaries.asking import model_answer
from chat.summaries.blocks import SECTIONS, Extraction, failure_item, slug, workflow_item
from chat.summaries.extract_heuristic import MAX_ITEMS, heuristic_extract
from memory.redaction import redact
from memory.tokens import estimate_tokens, truncate_to_tokens
from memoryweb.llm import client_for

PROMPT = "memories/stage_one_input"
SYSTEM = "memories/stage_one_system"
NOTES_SHARE = 4  # notes take at most a quarter of the input budget; messages the rest
MAX_STEPS = 8


def session_extract(*, conversation, messages, notes, config) -> Extraction:
    """The conversation's raw memory (sections of blocks.SECTIONS), title and synopsis, from
    the model when one is configured and answers usefully, else from the heuristic path."""
    client = client_for("summaries", config)
    if client is not None:
        extraction = _model_extract(
            client, conversation=conversation, messages=messages, notes=notes, config=config
        )
        if extraction is not None:
            return extraction
    return heuristic_extract(messages=messages, notes=notes)


def thread_id(conversation) -> str:
    return f"c:{conversation.pk} {conversation.external_id}".strip()


def _item(role: str, at, text: str) -> dict:
    return {"role": role, "time": at.isoformat() if at else "", "text": redact(text or "").text}


def response_items(*, messages, notes, budget: int) -> list[dict]:
    """The messages (oldest first) and then the notes, as the prompt's JSON list, within
    `budget` tokens: notes up to a quarter of it, the newest messages in the rest (the newest
    message cut to fit when it alone is too long)."""
    note_items, used = [], 0
    for note in notes:
        item = _item("note", note.occurred_at or note.created_at, note.content)
        cost = estimate_tokens(json.dumps(item, ensure_ascii=False))
        if used + cost > budget // NOTES_SHARE:
            break
        note_items.append(item)
        used += cost
    kept: list[dict] = []
    for message in reversed(messages):
        item = _item(message.role, message.occurred_at, message.text)
        cost = estimate_tokens(json.dumps(item, ensure_ascii=False))
        if used + cost > budget:
            if not kept:
                item["text"] = truncate_to_tokens(item["text"], max(budget - used - 40, 16))
                kept.append(item)
            break
        kept.append(item)
        used += cost
    return list(reversed(kept)) + note_items


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def _texts(value, limit: int = phrasing.ITEM_CHARS) -> list[str]:
    if not isinstance(value, list):
        return []
    return [phrasing.cap(v.strip(), limit) for v in value if isinstance(v, str) and v.strip()]


def _sections(answer: dict) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {key: [] for key in SECTIONS}
    for key in ("decisions", "constraints", "tools", "preferences", "open_questions"):
        sections[key] = _texts(answer.get(key), 120 if key == "tools" else phrasing.ITEM_CHARS)
    for failure in answer.get("failures") or []:
        if (
            isinstance(failure, dict)
            and isinstance(failure.get("problem"), str)
            and failure["problem"].strip()
        ):
            fix = _text(failure.get("fix"))
            sections["failures"].append(
                failure_item(phrasing.cap(failure["problem"], 240), phrasing.cap(fix, 240))
            )
    for workflow in answer.get("workflows") or []:
        if not isinstance(workflow, dict):
            continue
        # " | " separates steps in a block, so a step may not contain one
        steps = [s.replace("|", "/") for s in _texts(workflow.get("steps"), 200)][:MAX_STEPS]
        name = slug(_text(workflow.get("name"))) or slug(steps[0] if steps else "")
        if len(steps) >= 2 and name:
            sections["workflows"].append(workflow_item(name, steps))
    return {key: list(dict.fromkeys(items))[:MAX_ITEMS] for key, items in sections.items()}


def _model_extract(client, *, conversation, messages, notes, config) -> Extraction | None:
    items = response_items(messages=messages, notes=notes, budget=config["memories.stageOneInputTokens"])
    variables = {"thread_id": thread_id(conversation), "response_items_json": items}
    answer, input_tokens = model_answer(
        client,
        prompt=PROMPT,
        variables=variables,
        system=SYSTEM,
        max_tokens=config["memories.stageOneOutputTokens"],
    )
    if answer is None:
        return None
    sections = _sections(answer)
    title = phrasing.cap(_text(answer.get("title")), 80)
    if not title:
        title = heuristic_extract(messages=messages, notes=[]).title
    text = phrasing.cap(_text(answer.get("synopsis")), 600) or phrasing.synopsis(title, sections)
    return Extraction(
        title=title,
        synopsis=text,
        sections=sections,
        method=str(client.spec),
        input_tokens=input_tokens,
        output_tokens=estimate_tokens(json.dumps(answer, ensure_ascii=False)),
    )
