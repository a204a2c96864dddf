"""Dashboard bugs only a browser shows (issue 16, requirement 6)."""

import re

import pytest

from tests.browser.conftest import ALICE_SENSITIVE_TURNS, chat_turn, consolidate, expect, log_in

pytestmark = pytest.mark.browser

# every toast shown and every live event received, kept from the moment the page loads
WATCH = """() => {
  window.__toasts = [];
  window.__events = [];
  new MutationObserver((changes) => changes.forEach((change) => change.addedNodes.forEach((node) => {
    if (node.classList && node.classList.contains("toast")) window.__toasts.push(node.firstChild.textContent);
  }))).observe(document.getElementById("toasts"), { childList: true });
  document.body.addEventListener("mw:live", (event) => window.__events.push(event.detail.event));
}"""


def test_running_consolidation_now_says_its_outcome_once(page, bob):
    log_in(page, bob)
    page.goto(bob.page_url("jobs"))
    expect(page.locator("body[data-live=open]")).to_be_attached()  # the live socket is subscribed
    page.evaluate(WATCH)

    page.get_by_role("button", name="Run consolidation for this memory").click()

    expect(page.locator("#jobs-list")).to_contain_text("Nothing to consolidate yet")
    page.wait_for_function("() => window.__events.includes('job.finished')")
    toasts = page.evaluate("window.__toasts")
    assert not [text for text in toasts if "finished" in text], toasts
    assert len([text for text in toasts if "onsolidat" in text]) == 1, toasts  # "Consolidation queued …"


def card(page, heading: str):
    return page.locator("section.card", has=page.get_by_role("heading", name=heading))


def test_a_consolidation_reads_as_a_sentence_with_its_counters_folded(page, alice, alice_memory):
    log_in(page, alice)
    page.goto(alice.page_url("overview"))

    last = card(page, "Last consolidation")
    expect(last).to_contain_text(re.compile(r"Merged \d+ notes into \d+ lessons?"))
    expect(last.get_by_text("Llm fallbacks")).to_be_hidden()  # folded in <details>
    last.get_by_text("Details").click()
    expect(last.get_by_text("Llm fallbacks")).to_be_visible()

    page.goto(alice.page_url("jobs"))
    jobs = page.locator("#jobs-list")
    expect(jobs).to_contain_text("Merged")
    expect(jobs.get_by_text("Distillers").first).to_be_hidden()
    assert "{'" not in jobs.inner_text()  # no Python dict printed


def test_the_overview_cards_follow_live_events(page, bob, memory, server):
    log_in(page, bob)
    page.goto(bob.page_url("overview"))
    expect(page.locator("body[data-live=open]")).to_be_attached()
    waiting = card(page, "Waiting for your decision")
    expect(waiting).to_contain_text("Nothing is waiting")

    user_text, reply = ALICE_SENSITIVE_TURNS[0]
    chat_turn(memory, bob.external_id, user_text, reply, conversation="live-overview")
    expect(waiting.locator("li").first).to_be_visible()  # pending.created, no reload
    expect(waiting).not_to_contain_text("Nothing is waiting")

    consolidate(server, bob.external_id)
    expect(card(page, "Last consolidation")).to_contain_text("Nothing to consolidate yet")
