"""The overview: counts that agree with the API, the charts, and what waits for consent."""

import pytest

from tests.browser.conftest import PHONE, expect, log_in, save_screenshot

pytestmark = pytest.mark.browser

CHARTS_DRAWN = """() => {
  const canvases = [...document.querySelectorAll("canvas[data-chart]")];
  return canvases.length >= 2 && !!window.Chart && canvases.every((c) => Chart.getChart(c));
}"""


def stat(page, label: str):
    return page.locator("#overview-counts .stat", has=page.locator(".stat-label", has_text=label))


def test_the_overview_shows_the_counts_the_api_reports_and_draws_its_charts(
    page, alice, memory, alice_memory
):
    facts = memory.profile(alice.external_id)
    pending = memory.pending(alice.external_id)
    log_in(page, alice)

    page.goto(alice.page_url("overview"))

    expect(stat(page, "facts").locator(".stat-value")).to_have_text(str(len(facts)))
    expect(stat(page, "pending consent").locator(".stat-value")).to_have_text(str(len(pending)))
    waiting = page.locator("section.card", has=page.get_by_role("heading", name="Waiting for your decision"))
    newest = sorted(pending, key=lambda item: item["id"], reverse=True)[:5]  # the card lists five
    expect(waiting.locator("li")).to_have_count(len(newest))
    for item in newest:
        expect(waiting).to_contain_text(item["category"].replace("_", " "), ignore_case=True)
    page.wait_for_function(CHARTS_DRAWN)
    save_screenshot(page, "overview")


def test_the_overview_fits_a_phone_screen(new_page, alice, alice_memory):
    page = new_page(PHONE)
    log_in(page, alice)

    page.goto(alice.page_url("overview"))

    expect(stat(page, "facts")).to_be_visible()
    page.wait_for_function(CHARTS_DRAWN)
    # nothing sticks out sideways: the page scrolls only vertically
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    save_screenshot(page, "overview-phone")
