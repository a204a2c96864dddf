"""Dashboard bugs only a browser shows (issue 16, requirement 6)."""

import re

import pytest

from tests.browser.conftest import ALICE_SENSITIVE_TURNS, PHONE, chat_turn, consolidate, expect, log_in

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


FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const row = el.closest("[id]");
  return { tag: el.tagName.toLowerCase(), label: el.getAttribute("aria-label") || el.textContent.trim(),
           name: el.getAttribute("name"), value: el.value || "", row: row ? row.id : "", rowText: row ? row.textContent : "" };
}"""


def focused(page) -> dict:
    """What has the focus once an update settled (it fails on <body>)."""
    page.wait_for_function(f"() => ({FOCUSED})() !== null")
    return page.evaluate(FOCUSED)


def test_focus_stays_on_the_control_an_in_place_update_replaced(page, bob, memory):
    fact = memory.profile_set(bob.external_id, "bike", "a green gravel bike", pinned=True)
    note = memory.note_store(bob.external_id, "Bob rides his gravel bike to work on Fridays", tags=["bike"])
    log_in(page, bob)

    page.goto(bob.page_url("profile"))
    page.locator(f"#fact-{fact['id']}").get_by_role("link", name="Edit").click()
    expect(page.get_by_role("button", name="Save new version")).to_be_visible()  # the edit form is in
    assert focused(page)["name"] == "value"  # the edit form's first field
    page.get_by_label("Value").fill("a red gravel bike")
    page.get_by_role("button", name="Save new version").click()
    expect(page.locator("#profile-body, table").first).to_contain_text("a red gravel bike")
    now = focused(page)
    assert now["label"] == "Edit" and "a red gravel bike" in now["rowText"], now

    page.goto(bob.page_url("notes"))
    up = page.get_by_role("button", name=f"Vote note {note['id']} up")
    up.click()
    expect(up).to_have_attribute("aria-pressed", "true")
    assert focused(page)["label"] == f"Vote note {note['id']} up"

    page.goto(bob.page_url("consent"))
    row = page.locator("#policy-finances")
    checked = row.locator("input[name=policy]:checked")
    before = checked.get_attribute("value")
    checked.focus()
    page.keyboard.press("ArrowRight")
    expect(row.get_by_text("saved")).to_be_visible()
    now = focused(page)
    assert now["row"] == "policy-finances" and now["name"] == "policy", now
    assert now["value"] != before
    assert row.locator("input[name=policy]:checked").get_attribute("value") == now["value"]

    page.goto(bob.page_url("playground"))
    expect(page.locator("#chat-hint")).to_contain_text("Ctrl+Enter")
    expect(page.locator("#chat-form[data-socket=open]")).to_be_attached()
    page.get_by_label("Message").fill("Which bike do I ride?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#chat-status")).to_contain_text("Stored")
    assert focused(page)["name"] == "message"  # back in the textarea


IN_VIEW = """(el) => { const box = el.getBoundingClientRect();
  return box.top >= 0 && box.top < window.innerHeight && box.bottom > 0; }"""


def test_a_phone_gets_a_compact_nav_big_vote_buttons_and_scrolls_to_what_changed(new_page, bob, memory):
    fact = memory.profile_set(bob.external_id, "commute", "by bike along the river", pinned=True)
    note = memory.note_store(bob.external_id, "Bob's commute takes 25 minutes by bike", tags=["bike"])
    page = new_page(PHONE)
    log_in(page, bob)

    page.goto(bob.page_url("profile"))
    nav = page.get_by_role("navigation", name="Pages").bounding_box()
    assert nav["height"] <= 60, nav  # one row that scrolls sideways, not three rows of pills
    current = page.locator(".nav [aria-current=page]").bounding_box()
    assert 0 <= current["x"] and current["x"] + current["width"] <= PHONE["width"], current
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.locator(f"#fact-{fact['id']}").get_by_role("link", name="History").click()
    history = page.locator("#fact-history")
    expect(history).to_contain_text("by bike along the river")
    page.wait_for_function(f"() => ({IN_VIEW})(document.getElementById('fact-history'))")

    page.goto(bob.page_url("notes"))
    for signal in ("up", "down"):
        box = page.get_by_role("button", name=f"Vote note {note['id']} {signal}").bounding_box()
        assert box["width"] >= 44 and box["height"] >= 44, box

    page.goto(bob.page_url("playground"))
    expect(page.locator("#chat-form[data-socket=open]")).to_be_attached()
    page.get_by_label("Message").fill("How long is my commute?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#chat-status")).to_contain_text("Stored")
    page.goto("about:blank")
    page.goto(bob.page_url("playground"))  # a fresh visit (a reload would restore the scroll)
    newest = page.locator("#chat-log .chat-message").last
    expect(newest).to_be_attached()
    page.wait_for_function(
        f"() => ({IN_VIEW})([...document.querySelectorAll('#chat-log .chat-message')].pop())"
    )


GRAPH_LABELS = """() => {
  const cy = document.getElementById("graph")._cyreg.cy;
  return cy.nodes().map((node) => node.style("label"));
}"""


def test_the_link_graph_labels_its_notes_and_keeps_include_archived(page, alice, alice_memory):
    log_in(page, alice)
    page.goto(alice.page_url("graph"))
    page.wait_for_function("() => !!(document.getElementById('graph')._cyreg || {}).cy")
    labels = page.evaluate(GRAPH_LABELS)
    assert labels and all(label.strip() for label in labels), labels  # every note shows its gist

    page.get_by_label("Include archived notes").check()
    page.wait_for_url(re.compile(r"archived=on"))
    summary = page.locator("#graph-summary")
    expect(summary).to_contain_text("links")
    linked = int(re.search(r"(\d+) of them linked", summary.inner_text()).group(1))
    assert linked > 0  # the consolidated cluster's notes are linked
    expect(page.locator("#graph-unlinked")).to_be_hidden()  # not "None of these notes is linked" beside it

    page.reload()
    expect(page.get_by_label("Include archived notes")).to_be_checked()
    expect(summary).to_contain_text(f"{linked} of them linked")


STAFF_SCRIPT = """
from django.contrib.auth import get_user_model
get_user_model().objects.create_superuser("staff-notes", password="staff-notes-pass")
"""


def test_the_admin_notes_list_fits_1366_px_with_room_for_the_content(new_page, server, alice_memory):
    server.manage("shell", "-c", STAFF_SCRIPT)
    page = new_page({"width": 1366, "height": 768})
    page.goto("/admin/login/")
    page.get_by_label("Username").fill("staff-notes")
    page.get_by_label("Password").fill("staff-notes-pass")
    page.get_by_role("button", name=re.compile(r"log in", re.I)).click()

    page.goto("/admin/memory/note/")
    content = page.locator("#result_list td.field-short_content").first
    expect(content).to_be_visible()
    assert content.bounding_box()["width"] >= 300  # not squeezed to a few words a line
    table = page.locator("#result_list").bounding_box()
    assert table["x"] + table["width"] <= 1366  # the whole table on screen, nothing cut
