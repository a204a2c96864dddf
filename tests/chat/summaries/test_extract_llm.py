"""The stage-one model path, at the HTTP boundary (tests/llm_wire.py)."""

import json

import pytest

from chat.summaries.extract import response_items, session_extract
from memory.config import get_config
from memory.services import app_config_set
from memory.services.conversations import conversation_get_or_create
from memory.tokens import estimate_tokens
from tests.chat.summaries.conversations import CI_PROJECT, START, note, rows


def answer(**parts):
    empty = {
        "title": "",
        "synopsis": "",
        "decisions": [],
        "constraints": [],
        "failures": [],
        "workflows": [],
        "tools": [],
        "preferences": [],
        "open_questions": [],
    }
    return {**empty, **parts}


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="ci-setup", actor=actor)
    return conversation


def summaries_model(app, actor, **llm):
    app_config_set(app=app, config={"memory": {"backend": "local", "llm": llm}}, actor=actor)
    return get_config(app)


def test_a_valid_answer_becomes_the_sections_and_the_method_is_the_model(
    app, actor, conversation, openai_wire
):
    config = summaries_model(app, actor, summaries="openai/gpt-4o-mini")
    openai_wire.answer_json(
        answer(
            title="  Setting up CI for invoicing  ",
            synopsis="The user set up GitHub Actions for a Django app.",
            decisions=["GitHub Actions runs the CI.", "  ", "GitHub Actions runs the CI."],
            failures=[
                {"problem": "The test job could not reach Postgres.", "fix": "Add a postgres service."}
            ],
            workflows=[
                {"name": "Cut a Release!", "steps": ["Run the tests.", "Bump the version | tag it."]},
                {"name": "one-step", "steps": ["Only one step."]},
            ],
            tools=["pytest", "x" * 500],
            open_questions=[f"Question {i}?" for i in range(20)],
        )
    )

    result = session_extract(conversation=conversation, messages=rows(CI_PROJECT), notes=[], config=config)

    assert result.method == "openai/gpt-4o-mini"
    assert result.title == "Setting up CI for invoicing"
    assert result.synopsis == "The user set up GitHub Actions for a Django app."
    assert result.sections["decisions"] == ["GitHub Actions runs the CI."]
    assert result.sections["failures"] == [
        "The test job could not reach Postgres. Fix: Add a postgres service."
    ]
    assert result.sections["workflows"] == ["cut-a-release: Run the tests. | Bump the version / tag it."]
    assert result.sections["tools"][0] == "pytest"
    assert len(result.sections["tools"][1]) <= 120
    assert len(result.sections["open_questions"]) == 12
    assert result.input_tokens > 0 and result.output_tokens > 0


def test_the_prompt_carries_the_thread_the_messages_and_the_notes_with_secrets_redacted(
    app, actor, conversation, openai_wire
):
    config = summaries_model(app, actor, summaries="openai/gpt-4o-mini")
    openai_wire.answer_json(answer(title="CI", synopsis="CI."))
    messages = rows([("user", "Deploy with the key AKIAIOSFODNN7EXAMPLE please."), ("assistant", "Done.")])

    session_extract(
        conversation=conversation,
        messages=messages,
        notes=[note("The user deploys from the main branch.", tags=["decision"])],
        config=config,
    )

    sent = openai_wire.requests[0]
    system, prompt = sent["messages"][0]["content"], sent["messages"][-1]["content"]
    assert "first phase of memoryweb's session-summary pipeline" in system
    assert f"Conversation c:{conversation.pk} ci-setup:" in prompt
    assert "AKIAIOSFODNN7EXAMPLE" not in prompt
    assert "[REDACTED:" in prompt
    items = json.loads(prompt.split("<conversation>")[1].split("</conversation>")[0])
    assert [i["role"] for i in items] == ["user", "assistant", "note"]
    assert items[0]["time"] == START.isoformat()
    assert sent["max_completion_tokens"] == config["memories.stageOneOutputTokens"]


def test_summaries_fall_back_to_the_default_model(app, actor, conversation, openai_wire):
    config = summaries_model(app, actor, default="openai/gpt-4o-mini")
    openai_wire.answer_json(answer(title="CI", synopsis="CI.", decisions=["Use GitHub Actions."]))

    result = session_extract(conversation=conversation, messages=rows(CI_PROJECT), notes=[], config=config)

    assert result.method == "openai/gpt-4o-mini"
    assert result.sections["decisions"] == ["Use GitHub Actions."]


def test_invalid_json_falls_back_to_the_heuristic_path(app, actor, conversation, openai_wire):
    config = summaries_model(app, actor, summaries="openai/gpt-4o-mini")
    openai_wire.answer_text("Here are the decisions: {not json")

    result = session_extract(conversation=conversation, messages=rows(CI_PROJECT), notes=[], config=config)

    assert result.method == "heuristic"
    assert (
        "The user chose GitHub Actions from the options the assistant listed." in result.sections["decisions"]
    )


def test_a_server_error_falls_back_to_the_heuristic_path(app, actor, conversation, openai_wire):
    config = summaries_model(app, actor, summaries="openai/gpt-4o-mini")
    openai_wire.answers.extend([(500, {"error": {"message": "boom"}})] * 5)

    result = session_extract(conversation=conversation, messages=rows(CI_PROJECT), notes=[], config=config)

    assert result.method == "heuristic"
    assert len(openai_wire.requests) >= 1


def test_without_a_model_the_heuristic_path_runs(config, conversation):
    result = session_extract(conversation=conversation, messages=rows(CI_PROJECT), notes=[], config=config)

    assert result.method == "heuristic"


def test_the_newest_messages_are_kept_within_the_input_budget():
    messages = rows([("user", f"Message number {i} " + "word " * 40) for i in range(50)])

    items = response_items(messages=messages, notes=[note("A note.")], budget=1000)

    texts = [i["text"] for i in items]
    assert texts[-1] == "A note."
    assert texts[-2].startswith("Message number 49 ")
    assert "Message number 0 " not in " ".join(texts)
    assert sum(estimate_tokens(json.dumps(i)) for i in items) <= 1000


def test_one_message_longer_than_the_budget_is_cut_to_fit():
    items = response_items(messages=rows([("user", "long " * 5000)]), notes=[], budget=500)

    assert len(items) == 1
    assert estimate_tokens(items[0]["text"]) < 500
