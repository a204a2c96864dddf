"""The context against a chat model's window (preview, playground), the items by name, and the
profile as a memory block, at a laptop's and a phone's width."""

import re

import pytest

from memory.dashboard.window import share_text
from tests.browser.conftest import PHONE, expect, log_in, save_screenshot

pytestmark = pytest.mark.browser

WIDE = {"width": 1366, "height": 900}
WIDTHS = pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366x900", "390x844"])
MESSAGE = "Any vegetarian restaurant near Alfama for Friday? And where should I get a coffee after?"
STILL_THE_SAME_PAGE = "window.stillTheSamePage = true"


def within_width(page, locator) -> None:
    box = locator.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"] + 1, (
        box
    )


def check_bar(page, meter, total: int) -> None:
    """One segment per section that holds anything, the stable prefix first, adding up to the
    total; the text says it against the window it was drawn for."""
    bar = meter.get_by_role("meter")
    segments = meter.locator(".window-seg")
    rows = meter.locator(".window-row")
    expect(segments.first).to_have_attribute("data-section", "stable_prefix")
    assert segments.count() == rows.count() >= 3  # the prefix, ### profile, ### recalled at least
    assert sum(int(t) for t in segments.evaluate_all("s => s.map(x => x.dataset.tokens)")) == total
    assert all(s.bounding_box()["width"] > 0 for s in segments.all())  # even a sliver shows
    expect(rows.first).to_contain_text("Stable prefix")
    expect(rows.first).to_contain_text("cacheable")
    expect(bar).to_have_attribute("aria-valuenow", str(total))
    within_width(page, bar)


def pick(meter, key: str, tokens: int, total: int) -> None:
    """Pick the model `key` of the table in the bar's select."""
    meter.get_by_label("Context window of").select_option(key)
    text = f"{total:,} of {tokens:,} tokens ({share_text(total, tokens)})"
    expect(meter.get_by_role("meter")).to_have_attribute("aria-valuetext", text)
    expect(meter.get_by_role("meter")).to_have_attribute("aria-valuemax", str(tokens))
    expect(meter.locator("[data-window-text]")).to_have_text(text)


@WIDTHS
def test_the_preview_shows_the_context_against_the_window_and_its_items_by_name(
    new_page, viewport, alice, alice_memory
):
    page = new_page(viewport)
    log_in(page, alice)
    page.goto(alice.page_url("preview"))
    page.get_by_label("Message").fill(MESSAGE)
    page.get_by_role("button", name="Show what the model gets").click()

    result = page.locator("#preview-result")
    meter = result.locator("[data-window-meter]")
    expect(meter.get_by_role("meter")).to_be_visible()
    total = int(result.locator(".stat", has_text="tokens in all").locator(".stat-value").inner_text())
    check_bar(page, meter, total)
    # no chat model is configured: the table's first model, 200,000 tokens
    expect(meter.locator("[data-window-text]")).to_have_text(
        f"{total:,} of 200,000 tokens ({share_text(total, 200_000)})"
    )

    page.evaluate(STILL_THE_SAME_PAGE)
    pick(meter, "llama-3", 8_192, total)
    prefix = meter.locator(".window-row-prefix [data-window-share]")
    prefix_tokens = int(prefix.get_attribute("data-tokens"))
    expect(prefix).to_have_text(share_text(prefix_tokens, 8_192))
    pick(meter, "gpt-4.1", 1_047_576, total)
    expect(prefix).to_have_text(share_text(prefix_tokens, 1_047_576))
    assert page.evaluate("window.stillTheSamePage") is True
    if viewport == WIDE:  # the bar, as docs/dashboard.md shows it
        meter.evaluate("m => m.scrollIntoView({block: 'center'})")
        save_screenshot(page, "context-window")

    # items by name, the id kept beside
    coffee = result.locator(".item-name[data-kind=fact]", has_text="Coffee")
    expect(coffee).to_contain_text("flat white with oat milk")
    expect(coffee.locator("xpath=..").locator(".item-id")).to_have_text(re.compile(r"^f:\d+$"))
    expect(
        result.locator(".item-name[data-kind=note]", has_text="vegetarian restaurant ideas").first
    ).to_be_visible()

    # without JavaScript the pick goes along with the form: the page opens with it
    page.get_by_role("button", name="Show what the model gets").click()
    expect(page).to_have_url(re.compile(r"[?&]window=gpt-4\.1"))
    page.reload()
    expect(page.locator("#preview-result").get_by_role("meter")).to_have_attribute("aria-valuemax", "1047576")


@WIDTHS
def test_the_playground_shows_the_bar_keeps_the_pick_and_names_the_items(
    new_page, viewport, alice, alice_memory
):
    page = new_page(viewport)
    log_in(page, alice)
    page.goto(alice.page_url("playground"))
    expect(page.locator("#chat-form[data-socket=open]")).to_be_attached()

    page.get_by_label("Message").fill("Where should I get a coffee?")
    page.get_by_role("button", name="Send").click()
    panel = page.locator("#chat-context")
    meter = panel.locator("[data-window-meter]")
    expect(meter.get_by_role("meter")).to_be_visible()
    total = int(meter.get_attribute("data-total"))
    bar = meter.get_by_role("meter")
    expect(meter.locator(".window-seg").first).to_have_attribute("data-section", "stable_prefix")
    assert (
        sum(int(t) for t in meter.locator(".window-seg").evaluate_all("s => s.map(x => x.dataset.tokens)"))
        == total
    )
    within_width(page, bar)
    expect(panel.locator(".item-name[data-kind=fact]", has_text="Coffee")).to_contain_text(
        "flat white with oat milk"
    )
    expect(panel.locator(".item-name[data-kind=fact]", has_text="Name")).to_contain_text("Alice Martins")
    expect(page.locator("#chat-status")).to_contain_text("Stored")

    pick(meter, "llama-3", 8_192, total)

    # the next turn's panel keeps the model picked
    page.get_by_label("Message").fill("And a coffee near Alfama?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#chat-log .chat-user").last).to_contain_text("And a coffee near Alfama?")
    expect(page.locator("#chat-status")).to_contain_text("Stored")
    meter = page.locator("#chat-context [data-window-meter]")
    expect(meter.get_by_role("meter")).to_have_attribute("aria-valuemax", "8192")
    total = int(meter.get_attribute("data-total"))
    expect(meter.locator("[data-window-text]")).to_have_text(
        f"{total:,} of 8,192 tokens ({share_text(total, 8192)})"
    )


@WIDTHS
def test_the_profile_shows_its_memory_block_against_max_tokens(new_page, viewport, bob, memory):
    fact = memory.profile_set(bob.external_id, "window_city", "Zurich, by the lake, since 2019", pinned=True)
    page = new_page(viewport)
    log_in(page, bob)
    page.goto(bob.page_url("profile"))

    block = page.locator("#profile-budget")
    bar = block.get_by_role("meter")
    expect(bar).to_have_attribute("aria-valuemax", "512")
    text = block.locator(".budget-total").inner_text()
    used = int(re.match(r"^([\d,]+) of 512 tokens \(profile\.maxTokens\)$", text).group(1).replace(",", ""))
    expect(bar).to_have_attribute("aria-valuenow", str(used))
    # what every context carries is what the API builds as ### profile for a message hitting no keyword
    always = memory.context(bob.external_id, "zzz qqq").tokens["profile"]
    expect(block).to_contain_text(f"In every context: {always} tokens")
    within_width(page, bar)

    # parking the fact takes its line out of the block, in place
    page.evaluate(STILL_THE_SAME_PAGE)
    page.locator(f"#fact-{fact['id']}").get_by_role("button", name="Park").click()
    expect(page.locator(f"#fact-{fact['id']}")).to_contain_text("Parked")
    expect(bar).not_to_have_attribute("aria-valuenow", str(used))
    after = memory.context(bob.external_id, "zzz qqq").tokens["profile"]
    assert after < always
    expect(page.locator("#profile-budget")).to_contain_text(f"In every context: {after} tokens")
    assert page.evaluate("window.stillTheSamePage") is True
    page.locator(f"#fact-{fact['id']}").get_by_role("button", name="Unpark").click()
    expect(page.locator("#profile-budget").get_by_role("meter")).to_have_attribute("aria-valuenow", str(used))
