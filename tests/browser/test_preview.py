"""The context preview: what the model would get for a message, section by section."""

import re

import pytest

from tests.browser.conftest import expect, log_in, save_screenshot

pytestmark = pytest.mark.browser

MESSAGE = "Any vegetarian restaurant near Alfama for Friday? And where should I get a coffee after?"


def test_previewing_a_message_shows_both_halves_with_scores_and_tokens_as_the_api_builds_them(
    page, alice, memory, alice_memory
):
    log_in(page, alice)
    page.goto(alice.page_url("preview"))

    page.get_by_label("Message").fill(MESSAGE)
    page.get_by_role("button", name="Show what the model gets").click()

    result = page.locator("#preview-result")
    expect(result.get_by_role("heading", name="Stable prefix")).to_be_visible()
    expect(result.get_by_role("heading", name="Tail")).to_be_visible()
    profile = result.locator(".preview-section", has=page.get_by_role("heading", name="### profile"))
    expect(profile.locator("pre")).to_contain_text("Alice Martins")
    expect(profile.locator("pre")).to_contain_text("flat white with oat milk")  # its keyword "coffee" was hit
    expect(profile.locator("pre")).not_to_contain_text("Lisbon half marathon")  # contextual, not hit
    recalled = result.locator(".preview-section", has=page.get_by_role("heading", name="### recalled"))
    expect(recalled.locator("pre")).to_contain_text("vegetarian restaurant ideas near Alfama")
    scores = recalled.locator("tbody td[data-label=Score]")
    expect(scores.first).to_have_text(re.compile(r"^\d+\.\d{3}$"))
    expect(page).to_have_url(re.compile(r"[?&]message=Any(\+|%20)vegetarian"))

    # The API builds the same context: the same memories and the same number of tokens.
    shown_ids = result.locator("tbody td[data-label=Item]").all_inner_texts()
    shown_total = result.locator(".stat", has_text="tokens in all").locator(".stat-value").inner_text()
    built = memory.context(alice.external_id, MESSAGE)
    assert sorted(i.split()[0] for i in shown_ids) == sorted(item["id"] for item in built.items)
    assert int(shown_total) == built.tokens["total"]
    # the tail, with its sections, scores and tokens, is what the README shows
    result.locator("section.preview-block", has=page.get_by_role("heading", name="Tail")).evaluate(
        "section => section.scrollIntoView({block: 'start'})"
    )
    save_screenshot(page, "preview")


def test_an_empty_message_is_refused_with_a_message_naming_the_field(page, alice, alice_memory):
    log_in(page, alice)
    page.goto(alice.page_url("preview") + "?message=")

    expect(page.locator("#preview-result [role=alert] [data-field=message]")).to_be_visible()
    expect(page.get_by_role("heading", name="Tail")).to_have_count(0)
