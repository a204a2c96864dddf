"""The consent queue, and live updates over the websocket between two open pages.

The live path is the whole product path: a chat app posts a turn, the Celery worker reflects on
it and queues a pending memory, the event goes through the database outbox to the web process
and over the websocket to the browser, and htmx reloads the queue. Nothing in these tests
reloads a page; each page carries a tag that a reload would drop.
"""

import itertools

import pytest

from tests.browser.conftest import chat_turn, expect, log_in, save_screenshot

pytestmark = pytest.mark.browser

_turns = itertools.count()


def mark_document(page) -> None:
    page.evaluate("window.__notReloaded = true")


def assert_not_reloaded(page) -> None:
    assert page.evaluate("window.__notReloaded === true"), "the page was reloaded"


def open_live(page, url: str) -> None:
    """Open a dashboard page and wait until its websocket is subscribed."""
    page.goto(url)
    expect(page.locator("body")).to_have_attribute("data-live", "open")
    mark_document(page)


def sensitive_turn(memory, person, user_text: str) -> list[dict]:
    """A chat turn whose reflection queues pending memories; those pending items (from the API)."""
    before = {p["id"] for p in memory.pending(person.external_id)}
    chat_turn(memory, person.external_id, user_text, "Thanks, noted.", conversation=f"live-{next(_turns)}")
    new = [p for p in memory.pending(person.external_id) if p["id"] not in before]
    assert new, f"reflection queued nothing for consent from {user_text!r}"
    return new


def decided(page, pending_id: int) -> None:
    """Wait until the page that approved the item no longer offers to approve it.

    The item then either shows its decision or, once this page's own live update has reloaded
    the queue, is gone from the pending list; both are right.
    """
    item = page.locator(f"#pending-{pending_id}")
    expect(item.get_by_role("button", name="Approve: remember it")).to_have_count(0)
    expect(page.locator("#toasts")).to_contain_text("Approved")


def tab_count(page, tab: str):
    return page.locator("#consent-queue .tab", has_text=tab).locator(".badge")


def nav_badge(page, key: str):
    return page.locator(f'.nav-link[data-page="{key}"] .badge')


def stat_value(page, label: str):
    return page.locator("#overview-counts .stat", has=page.locator(".stat-label", has_text=label)).locator(
        ".stat-value"
    )


def test_the_consent_queue_shows_each_pending_memory_with_the_message_it_came_from(
    page, alice, memory, alice_memory
):
    pending = memory.pending(alice.external_id)
    log_in(page, alice)

    page.goto(alice.page_url("consent"))

    queue = page.locator("#consent-queue")
    expect(queue.locator("li.pending-item")).to_have_count(len(pending))
    for item in pending:
        row = queue.locator(f"#pending-{item['id']}")
        expect(row.get_by_role("button", name="Approve: remember it")).to_be_visible()
        expect(row.locator("blockquote")).to_contain_text(item["source_text"][:40])
    save_screenshot(page, "consent")


def test_a_memory_approved_in_one_page_leaves_the_queue_live_in_another(
    new_page, alice, memory, alice_memory
):
    pending = sensitive_turn(
        memory, alice, "I was diagnosed with migraines last spring, bright screens set them off."
    )[0]
    watcher, actor = new_page(), new_page()
    log_in(watcher, alice)
    log_in(actor, alice)
    open_live(watcher, alice.page_url("consent"))
    watched = watcher.locator(f"#consent-queue #pending-{pending['id']}")
    expect(watched).to_be_visible()
    pending_before = int(tab_count(watcher, "Pending").inner_text())
    approved_before = int(tab_count(watcher, "Approved").inner_text())

    actor.goto(alice.page_url("consent"))
    actor.locator(f"#pending-{pending['id']}").get_by_role("button", name="Approve: remember it").click()
    decided(actor, pending["id"])

    expect(watched).to_have_count(0)
    expect(tab_count(watcher, "Pending")).to_have_text(str(pending_before - 1))
    expect(tab_count(watcher, "Approved")).to_have_text(str(approved_before + 1))
    assert_not_reloaded(watcher)
    approved = {p["id"]: p for p in memory.pending(alice.external_id, status="approved")}
    assert pending["id"] in approved and approved[pending["id"]]["result_id"]


def test_a_memory_the_worker_queues_appears_live_in_an_open_consent_page(page, alice, memory, alice_memory):
    log_in(page, alice)
    open_live(page, alice.page_url("consent"))
    queue = page.locator("#consent-queue")
    expect(queue.get_by_text("epilepsy")).to_have_count(0)

    new = sensitive_turn(
        memory, alice, "I was diagnosed with epilepsy as a teenager, so no strobe lights please."
    )

    for pending in new:
        row = queue.locator(f"#pending-{pending['id']}")
        expect(row).to_be_visible()
        expect(row.locator("blockquote")).to_contain_text("diagnosed with epilepsy as a teenager")
    assert_not_reloaded(page)


def test_an_approval_updates_the_counts_of_an_open_overview_live(new_page, alice, memory, alice_memory):
    new = sensitive_turn(
        memory, alice, "I was diagnosed with ADHD last year, so short checklists help me a lot."
    )
    note = next(p for p in new if p["kind"] == "note")
    watcher, actor = new_page(), new_page()
    log_in(watcher, alice)
    log_in(actor, alice)
    open_live(watcher, alice.page_url("overview"))
    pending_before = int(stat_value(watcher, "pending consent").inner_text())
    expect(nav_badge(watcher, "consent")).to_have_text(str(pending_before))
    notes_before = int(stat_value(watcher, "notes").inner_text())

    actor.goto(alice.page_url("consent"))
    actor.locator(f"#pending-{note['id']}").get_by_role("button", name="Approve: remember it").click()
    decided(actor, note["id"])

    expect(stat_value(watcher, "pending consent")).to_have_text(str(pending_before - 1))
    expect(stat_value(watcher, "notes")).to_have_text(str(notes_before + 1))
    # the count on the sidebar's Consent link follows too
    expect(nav_badge(watcher, "consent")).to_have_text(str(pending_before - 1))
    assert_not_reloaded(watcher)
