"""Dashboard: the context against a chat model's window (preview, playground), items by name,
and the profile as a memory block against `profile.maxTokens`."""

import re
from html import unescape

import pytest
from django.urls import reverse

from memory.dashboard.window import share_text, total_text, widths
from memory.models import Evidence
from memory.selectors import items_named
from memory.services import app_config_set
from tests.dashboard_helpers import hx
from tests.factories import ConversationFactory, FactFactory, MessageFactory, NoteFactory

MESSAGE = "How is my marathon training going?"


def preview(client, subject, **params):
    return client.get(reverse("dashboard:preview", args=[subject.pk]), {"message": MESSAGE, **params})


@pytest.fixture
def remembered(owned_subject):
    fact = FactFactory(subject=owned_subject, key="running_goal", value="Lisbon half marathon under 1:50")
    note = NoteFactory(
        subject=owned_subject, content="Alice is training for the Lisbon half marathon on Sundays"
    )
    return fact, note


def meter_of(html: str) -> dict:
    """The bar's numbers as the page states them: the meter's attributes and its segments."""
    bar = re.search(r'<div class="window-bar" role="meter"[^>]*>', html).group(0)
    attrs = dict(re.findall(r'(aria-value\w+)="([^"]*)"', bar))
    segments = re.findall(r'class="window-seg seg-(\w+)" data-tokens="(\d+)" data-section="([\w-]+)"', html)
    return {**attrs, "segments": [(section, int(tokens), tone) for tone, tokens, section in segments]}


# --- the arithmetic, the same in static/js/app.js ------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "window", "text"),
    [
        (1_240, 200_000, "0.6 %"),
        (0, 200_000, "0.0 %"),
        (12, 1_047_576, "under 0.1 %"),
        (250, 1_000, "25.0 %"),
        (1_000, 8_000, "12.5 %"),
        (9_000, 8_192, "109.9 %"),
    ],
)
def test_a_share_is_to_a_tenth_of_a_percent_rounded_half_up(tokens, window, text):
    assert share_text(tokens, window) == text


def test_the_total_says_tokens_of_the_window_and_when_it_is_over():
    assert total_text(1_240, 200_000) == "1,240 of 200,000 tokens (0.6 %)"
    assert total_text(9_000, 8_192) == "9,000 of 8,192 tokens (109.9 %), 808 over the window"
    assert widths([100, 300], 1_000) == ["10.0000", "30.0000"]
    assert widths([600, 600], 1_000) == ["50.0000", "50.0000"]  # over: in % of the total


# --- the preview -----------------------------------------------------------------------------


def test_the_preview_shows_the_total_against_the_window_a_segment_per_section_prefix_first(
    remembered, owned_subject, owner_client
):
    response = preview(owner_client, owned_subject)
    html = unescape(response.content.decode())
    result, meter = response.context["result"], response.context["meter"]
    built = {b["name"]: b["tokens"] for b in result["blocks"] if b["tokens"]}
    shown = meter_of(html)

    assert [s[0] for s in shown["segments"]] == list(built)  # the builder's order, empty ones left out
    assert shown["segments"][0][0] == "stable_prefix" and shown["segments"][0][2] == "prefix"
    assert {s[0]: s[1] for s in shown["segments"]} == built
    assert {"profile", "recalled"} <= set(built)
    total = result["tokens"]["total"]
    assert sum(built.values()) == total == int(shown["aria-valuenow"])
    # no chat model configured: the table's first model, and the page says how to set one
    assert meter["chosen"].key == "claude-opus-4-5" and shown["aria-valuemax"] == "200000"
    assert shown["aria-valuetext"] == f"{total:,} of 200,000 tokens ({share_text(total, 200_000)})"
    assert f"data-window-text>{shown['aria-valuetext']}</p>" in html
    assert "names no model whose window is known" in html
    assert 'form="preview-form"' in html  # without JavaScript the pick goes with the form


def test_picking_another_model_changes_the_share(remembered, owned_subject, owner_client):
    small = preview(owner_client, owned_subject, window="llama-3")
    large = preview(owner_client, owned_subject, window="gpt-4.1")
    total = small.context["result"]["tokens"]["total"]

    assert (
        meter_of(small.content.decode())["aria-valuetext"]
        == f"{total:,} of 8,192 tokens ({share_text(total, 8192)})"
    )
    assert meter_of(large.content.decode())["aria-valuemax"] == "1047576"
    assert share_text(total, 8192) != share_text(total, 1_047_576)
    assert '<option value="gpt-4.1" data-tokens="1047576" selected>' in large.content.decode()
    # a key the table does not have falls back, it is no error
    assert (
        preview(owner_client, owned_subject, window="nonsense").context["meter"]["chosen"].key
        == "claude-opus-4-5"
    )


def test_the_configured_chat_model_is_preselected(remembered, owned_subject, owner_client, actor):
    app_config_set(
        app=owned_subject.app, config={"memory": {"llm": {"chat": "openai/gpt-4o-mini"}}}, actor=actor
    )
    html = preview(owner_client, owned_subject).content.decode()
    assert '<option value="gpt-4o-mini" data-tokens="128000" selected>' in html
    assert "GPT-4o mini (the configured chat model)" in html

    app_config_set(
        app=owned_subject.app,
        config={"memory": {"llm": {"chat": "openai/gpt-4o-mini", "chatContextWindow": 16_000}}},
        actor=actor,
    )
    html = preview(owner_client, owned_subject).content.decode()
    assert '<option value="configured" data-tokens="16000" selected>' in html
    assert "gpt-4o-mini — set in memory.llm.chatContextWindow, 16,000 tokens</option>" in html
    assert meter_of(html)["aria-valuemax"] == "16000"


def test_the_preview_names_its_items_and_keeps_the_id(remembered, owned_subject, owner_client):
    fact, note = remembered
    html = unescape(preview(owner_client, owned_subject).content.decode())
    assert f">f:{fact.pk}</a>" in html and f">n:{note.pk}</a>" in html
    assert (
        "<strong>Running goal</strong>: Lisbon half marathon under 1:50" in html
    )  # the key as the profile shows it
    assert (
        '<span class="item-name" data-kind="note">Alice is training for the Lisbon half marathon on Sundays</span>'
        in html
    )


def test_the_htmx_preview_carries_the_bar_too(remembered, owned_subject, owner_client):
    response = hx(
        owner_client, "GET", reverse("dashboard:preview", args=[owned_subject.pk]), {"message": MESSAGE}
    )
    assert b'role="meter"' in response.content and b"data-window-select" in response.content


def test_memory_turned_off_has_no_bar(owned_subject, owner_client, actor):
    app_config_set(app=owned_subject.app, config={"memory": {"notes": {"enabled": False}}}, actor=actor)
    assert b'role="meter"' not in preview(owner_client, owned_subject).content


# --- naming items ------------------------------------------------------------------------------


def test_items_are_named_by_kind_and_only_within_the_subject(owned_subject, stranger_subject):
    fact = FactFactory(subject=owned_subject, key="city", value="Lisbon")
    note = NoteFactory(subject=owned_subject, content="Alice bakes sourdough")
    theirs = NoteFactory(subject=stranger_subject, content="Bob's secret")
    message = MessageFactory(conversation=ConversationFactory(subject=owned_subject), text="I moved in May")
    unit = Evidence.objects.create(
        subject=owned_subject,
        conversation=message.conversation,
        message=message,
        role="user",
        text=message.text,
        occurred_at=message.occurred_at,
    )

    named = items_named(
        subject_id=owned_subject.pk,
        refs=[f"f:{fact.pk}", f"n:{note.pk}", f"n:{theirs.pk}", f"e:{unit.pk}", "n:999999", "x:1", "n:abc"],
    )

    assert set(named) == {f"f:{fact.pk}", f"n:{note.pk}", f"e:{unit.pk}"}
    assert named[f"f:{fact.pk}"] == {"kind": "fact", "title": "city", "text": "Lisbon"}
    assert named[f"n:{note.pk}"]["text"] == "Alice bakes sourdough"
    assert named[f"e:{unit.pk}"]["title"] == "user" and named[f"e:{unit.pk}"]["when"] == message.occurred_at


# --- the playground --------------------------------------------------------------------------------


def test_the_playground_panel_has_the_bar_and_names_its_items(owned_subject, owner_client, actor):
    fact = FactFactory(subject=owned_subject, key="home_city", value="Lisbon")
    app_config_set(
        app=owned_subject.app, config={"memory": {"llm": {"chatContextWindow": 32_000}}}, actor=actor
    )

    response = owner_client.post(
        reverse("dashboard:playground_send", args=[owned_subject.pk]), {"message": "Where do I live?"}
    )

    html = unescape(response.content.decode())
    shown = meter_of(html)
    total = response.context["result"].prompt.context["tokens"]["total"]
    assert shown["aria-valuemax"] == "32000" and int(shown["aria-valuenow"]) == total
    assert shown["segments"][0][0] == "stable_prefix" and ("profile", "1") == (
        shown["segments"][1][0],
        shown["segments"][1][2],
    )
    assert f'<span class="mono small item-id">f:{fact.pk}</span>' in html
    assert "<strong>Home city</strong>: Lisbon" in html


# --- the profile as a memory block -------------------------------------------------------------------


def budget_of(html: str) -> dict:
    bar = re.search(r'<div class="budget-bar" role="meter"[^>]*>', html).group(0)
    return dict(re.findall(r'(aria-value\w+)="([^"]*)"', bar))


def test_the_profile_shows_its_tokens_against_max_tokens(owned_subject, owner_client):
    FactFactory(subject=owned_subject, key="name", value="Alice")
    FactFactory(subject=owned_subject, key="coffee", value="flat white", pinned=False, keywords=["coffee"])

    response = owner_client.get(reverse("dashboard:profile", args=[owned_subject.pk]))

    html = unescape(response.content.decode())
    budget = response.context["budget"]
    assert budget["cap"] == 512 and 0 < budget["always"] < budget["all"] < 512
    assert budget_of(html) == {
        "aria-valuemin": "0",
        "aria-valuemax": "512",
        "aria-valuenow": str(budget["all"]),
        "aria-valuetext": f"{budget['all']} of 512 tokens (profile.maxTokens)",
    }
    assert f"In every context: {budget['always']} tokens (1 pinned fact with no mode or scope)" in html
    assert "Every fact fits" in html and "is-over" not in html


def test_the_memory_block_counts_what_the_context_writes(owned_subject, owner_client):
    """The pinned facts' count is the `### profile` a message hitting no keyword gets."""
    FactFactory(subject=owned_subject, key="name", value="Alice Martins")
    FactFactory(subject=owned_subject, key="city", value="Lisbon")
    budget = owner_client.get(reverse("dashboard:profile", args=[owned_subject.pk])).context["budget"]
    built = owner_client.get(reverse("dashboard:preview", args=[owned_subject.pk]), {"message": "hello"})
    assert budget["always"] == built.context["result"]["tokens"]["profile"]


def test_over_the_cap_the_memory_block_warns(owned_subject, owner_client, actor):
    app_config_set(app=owned_subject.app, config={"memory": {"profile": {"maxTokens": 20}}}, actor=actor)
    FactFactory(
        subject=owned_subject,
        key="job",
        value="data engineer at Tidewater Analytics in Lisbon, Portugal, moving pipelines to Airflow",
    )

    html = unescape(owner_client.get(reverse("dashboard:profile", args=[owned_subject.pk])).content.decode())

    assert 'class="card budget is-over"' in html
    assert "The pinned facts alone need" in html and "of 20 tokens (profile.maxTokens)," in html
    assert budget_of(html)["aria-valuenow"] == "20"  # within aria-valuemax; the text says how far over


def test_parking_a_fact_sends_the_new_memory_block_along(owned_subject, owner_client):
    fact = FactFactory(subject=owned_subject, key="name", value="Alice")
    before = owner_client.get(reverse("dashboard:profile", args=[owned_subject.pk])).context["budget"]

    response = hx(
        owner_client,
        "POST",
        reverse("dashboard:fact_park", args=[owned_subject.pk, fact.pk]),
        {"parked": "1"},
    )

    html = response.content.decode()
    assert before["all"] > 0
    assert 'id="profile-budget" aria-labelledby="profile-budget-title" hx-swap-oob="outerHTML"' in html
    assert "0 of 512 tokens (profile.maxTokens)" in html
