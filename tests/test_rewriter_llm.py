"""The model-backed query rewriter (`llm.rewriter`), over a fake OpenAI on the wire."""

import time

import pytest

from chat.services import conversation_get_or_create, message_add
from memory.config import get_config
from memory.models import Counter
from memory.rewriter import rewrite_query
from memory.services import app_config_set

MESSAGE = "how much was it?"


def configure(app, actor, **rewriter):
    memory = {"llm": {"rewriter": "openai/gpt-4o-mini"}}
    if rewriter:
        memory["retrieve"] = {"rewriter": rewriter}
    app_config_set(app=app, config={"memory": memory}, actor=actor)
    return get_config(app)


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    for role, text in [
        ("user", "We booked the flat in Lisbon for June."),
        ("assistant", "Great, the one near Alfama with the balcony?"),
    ]:
        message_add(conversation=conversation, role=role, text=text, actor=actor)
    return conversation


def test_the_model_rewrites_a_referential_message(app, actor, conversation, openai_wire):
    config = configure(app, actor)
    openai_wire.answer_json({"query": "price of the flat in Lisbon booked for June"})

    result = rewrite_query(message=MESSAGE, conversation=conversation, config=config)

    assert result == ("price of the flat in Lisbon booked for June", "llm")
    assert len(openai_wire.requests) == 1
    assert openai_wire.requests[0]["model"] == "gpt-4o-mini"


def test_the_prompt_holds_the_history_oldest_first_and_the_message(app, actor, conversation, openai_wire):
    config = configure(app, actor)
    openai_wire.answer_json({"query": "price of the flat in Lisbon"})

    rewrite_query(message=MESSAGE, conversation=conversation, config=config)

    prompt = openai_wire.requests[0]["messages"][-1]["content"]
    history = prompt.split("<history>")[1].split("</history>")[0]
    assert history.strip().splitlines() == [
        "- We booked the flat in Lisbon for June.",
        "- Great, the one near Alfama with the balcony?",
    ]
    assert f"<message>\n{MESSAGE}\n</message>" in prompt


def test_a_slow_model_falls_back_to_the_message_and_counts_the_timeout(
    app, actor, conversation, openai_wire
):
    config = configure(app, actor, timeoutMs=50)
    openai_wire.on_request = lambda request: time.sleep(0.5)
    openai_wire.answer_json({"query": "too late"})

    result = rewrite_query(message=MESSAGE, conversation=conversation, config=config)

    assert result == (MESSAGE, "llm-fallback")
    assert Counter.objects.get(name="llm.fallback.rewriter.timeout").value == 1


def test_a_malformed_answer_falls_back_to_the_message(app, actor, conversation, openai_wire):
    config = configure(app, actor)
    openai_wire.answer_text('{"query": ')

    result = rewrite_query(message=MESSAGE, conversation=conversation, config=config)

    assert result == (MESSAGE, "llm-fallback")
    assert not Counter.objects.filter(name="llm.fallback.rewriter.timeout").exists()
