"""Dashboard bugs only a browser shows (issue 16, requirement 6)."""

import pytest

from tests.browser.conftest import expect, log_in

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
