"""Live updates and the chat playground in a real browser against `manage.py runall`.

The live test crosses every process boundary of the embedded default: the chat app posts a
turn over the REST API, the Celery worker reflects on it and queues a consent item, `notify`
writes the outbox row, daphne's poller sends it to the socket, and live.js turns it into a
DOM event and a toast on the page that was already open — no reload.
"""

import pytest

from tests.browser.conftest import chat_turn, expect, log_in, save_screenshot

pytestmark = pytest.mark.browser

LIVE_OPEN = "() => document.body.dataset.live === 'open'"
COUNT_PENDING_EVENTS = """() => {
  window.mwPendingEvents = 0;
  document.body.addEventListener("mw:pending", () => { window.mwPendingEvents += 1; });
}"""


def test_a_pending_memory_shows_up_on_an_open_page_without_a_reload(page, alice, memory):
    log_in(page, alice)
    page.goto(alice.page_url("playground"))
    page.wait_for_function(LIVE_OPEN)
    page.evaluate(COUNT_PENDING_EVENTS)

    chat_turn(
        memory,
        alice.external_id,
        "I was diagnosed with type 2 diabetes in January, so I watch my sugar now.",
        "Thanks for telling me; I'll keep sweets out of my suggestions.",
        conversation="live-update",
    )

    toasts = page.locator("#toasts .toast", has_text="waiting for your approval")
    expect(toasts).to_have_count(1)  # one toast for the burst of items one reflection queued
    assert page.evaluate("window.mwPendingEvents") >= 1  # a reload would have reset it


def test_the_open_consent_queue_shows_a_new_item_without_a_reload(page, alice, memory):
    log_in(page, alice)
    page.goto(alice.page_url("consent"))
    page.wait_for_function(LIVE_OPEN)
    queue = page.locator("#consent-queue")
    expect(queue).not_to_contain_text("blood pressure")
    page.evaluate("window.stillTheSamePage = true")  # a reload would forget it

    chat_turn(
        memory,
        alice.external_id,
        "I was diagnosed with high blood pressure last month.",
        "Thanks, I'll keep that in mind.",
        conversation="live-consent",
    )

    expect(queue).to_contain_text("blood pressure")  # htmx reloaded the queue on mw:pending
    assert page.evaluate("window.stillTheSamePage") is True


def test_the_playground_without_a_model_shows_the_context_and_keeps_the_turn(page, alice, memory):
    memory.profile_set(alice.external_id, "hometown", "Braga", pinned=True)
    log_in(page, alice)
    page.goto(alice.page_url("playground"))
    expect(page.locator("#no-model")).to_contain_text("No model is configured")

    page.get_by_label("Message").fill("Where did I grow up?")
    page.get_by_role("button", name="Send").click()

    log = page.locator("#chat-log")
    expect(log.locator(".chat-user").last).to_contain_text("Where did I grow up?")
    expect(log.locator(".chat-assistant.chat-notice").last).to_contain_text("none is configured")
    expect(page.locator("#chat-context")).to_contain_text("hometown: Braga")
    expect(page.locator("#chat-status")).to_contain_text("Stored")
    save_screenshot(page, "playground")

    page.reload()
    expect(page.locator("#chat-log .chat-user").last).to_contain_text("Where did I grow up?")
