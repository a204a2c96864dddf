"""The table of chat models' context windows (memoryweb/llm/context_windows.json) and how a
configured model name finds its window."""

import json

import pytest

from memory.config import get_config
from memory.services import app_config_set
from memoryweb.errors import ConfigError
from memoryweb.llm.windows import CONFIGURED, TABLE, chat_window, context_windows, window_for_model


@pytest.mark.parametrize(
    ("model", "key", "tokens"),
    [
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet", 200_000),
        ("anthropic/claude-3.5-sonnet", "claude-3-5-sonnet", 200_000),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 200_000),
        ("claude-sonnet-4-20250514", "claude-sonnet-4", 200_000),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", 128_000),
        ("gpt-4o", "gpt-4o", 128_000),
        ("gpt-4.1-mini", "gpt-4.1-mini", 1_047_576),
        ("gpt-5", "gpt-5", 400_000),
        ("gpt-5-chat-latest", "gpt-5-chat", 128_000),
        ("o3-mini", "o3", 200_000),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1", 131_072),
        ("llama3.1:8b", "llama-3.1", 131_072),
        ("llama3:8b", "llama-3", 8_192),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5", 32_768),
        ("qwen2.5:7b", "qwen2.5", 32_768),
        ("mistral:latest", "mistral-7b", 32_768),
        ("mistral-large-latest", "mistral-large", 131_072),
        ("open-mixtral-8x22b", "mixtral-8x22b", 65_536),
    ],
)
def test_a_model_name_finds_its_documented_window(model, key, tokens):
    window = window_for_model(model)
    assert window is not None and (window.key, window.tokens) == (key, tokens)


@pytest.mark.parametrize("model", ["gpt-4-1106-preview", "phi3", "my-finetune", ""])
def test_a_model_the_table_does_not_know_has_no_window(model):
    # gpt-4-1106 is not gpt-4.1: names are matched word by word, not character by character
    assert window_for_model(model) is None


def test_the_table_is_well_formed_and_every_name_finds_its_own_entry():
    rows = json.loads(TABLE.read_text())["models"]
    keys = [row["key"] for row in rows]
    assert len(keys) == len(set(keys))
    assert [w.key for w in context_windows()] == keys
    for row in rows:
        assert isinstance(row["tokens"], int) and row["tokens"] >= 4096, row
        for name in row["names"]:
            assert window_for_model(name).key == row["key"], name


def test_the_configured_chat_model_gives_the_window(app, actor):
    assert chat_window(get_config(app)) is None  # llm.chat is none by default
    app_config_set(app=app, config={"memory": {"llm": {"chat": "openai/gpt-4o-mini"}}}, actor=actor)
    assert chat_window(get_config(app)).key == "gpt-4o-mini"
    app_config_set(
        app=app,
        config={"memory": {"llm": {"chat": "anthropic/claude-local-tune", "chatContextWindow": 64_000}}},
        actor=actor,
    )
    window = chat_window(get_config(app))
    assert (window.key, window.label, window.tokens) == (CONFIGURED, "claude-local-tune", 64_000)


def test_a_negative_chat_context_window_is_refused_naming_the_key(app, actor):
    with pytest.raises(ConfigError) as error:
        app_config_set(app=app, config={"memory": {"llm": {"chatContextWindow": -1}}}, actor=actor)
    assert error.value.key == "memory.llm.chatContextWindow"
