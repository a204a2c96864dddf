"""The model-backed query rewriter (`llm.rewriter`), over a fake OpenAI on the wire.

The model is called on the rewriter's thread pool, and the LLM client counts its calls from
there, on that thread's own DB connection. Inside the usual per-test transaction that write
would wait on the test's lock, so these tests commit for real (and restore the seeded rows).
"""

import threading

import pytest

from memory.config import get_config
from memory.rewriter import rewrite_query
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.models import Counter

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

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


def test_a_slow_model_falls_back_to_the_message_and_counts_the_timeout(app, actor, conversation, openai_wire):
    config = configure(app, actor, timeoutMs=50)
    answered = threading.Event()
    openai_wire.on_request = lambda request: answered.wait(timeout=5)  # far beyond 50 ms
    openai_wire.answer_json({"query": "too late"})

    try:
        result = rewrite_query(message=MESSAGE, conversation=conversation, config=config)
    finally:
        answered.set()  # let the abandoned call finish; its late answer is never used

    assert result == (MESSAGE, "llm-fallback")
    assert Counter.objects.get(name="llm.fallback.rewriter.timeout").value == 1


@pytest.mark.parametrize(
    "answer,reason",
    [
        ('{"query": ', "invalid_json"),
        ('{"answer": "price of the flat"}', "schema_mismatch"),
    ],
)
def test_a_malformed_answer_falls_back_to_the_message(app, actor, conversation, openai_wire, answer, reason):
    config = configure(app, actor)
    openai_wire.answer_text(answer)

    result = rewrite_query(message=MESSAGE, conversation=conversation, config=config)

    assert result == (MESSAGE, "llm-fallback")
    assert Counter.objects.get(name=f"llm.fallback.rewriter.{reason}").value == 1
    assert not Counter.objects.filter(name="llm.fallback.rewriter.timeout").exists()


def test_the_context_endpoint_searches_the_models_query(client, app, actor, conversation, openai_wire):
    configure(app, actor)
    openai_wire.answer_json({"query": "price of the flat in Lisbon booked for June"})

    response = client.post(
        "/api/v1/context",
        {"subject": "alice", "message": MESSAGE, "conversation": conversation.pk},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["rewritten_query"] == "price of the flat in Lisbon booked for June"
    assert not Counter.objects.filter(name__startswith="llm.fallback.rewriter").exists()
