"""The notes page: search as you type, and votes."""

import re

import pytest

from memoryweb.client import MemoryWebError
from tests.browser.conftest import expect, log_in

pytestmark = pytest.mark.browser


def mark_document(page) -> None:
    """Tag the loaded document, so a test can tell a live update from a page load (which drops the tag)."""
    page.evaluate("window.__notReloaded = true")


def assert_not_reloaded(page) -> None:
    assert page.evaluate("window.__notReloaded === true"), "the page was reloaded"


def test_typing_in_the_search_box_narrows_the_notes_as_you_type(page, alice, alice_memory):
    log_in(page, alice)
    page.goto(alice.page_url("notes"))
    results = page.locator("#note-results")
    expect(results.get_by_text("Miso the cat is due")).to_be_visible()
    mark_document(page)

    page.get_by_label("Search").press_sequentially("kyoto", delay=40)

    expect(results).to_contain_text("2 matches")
    expect(results.get_by_text("Miso the cat is due")).to_have_count(0)
    expect(results.get_by_text("planning a trip to Kyoto")).to_be_visible()
    expect(results.get_by_text("learning Japanese with a tutor")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]q=kyoto"))
    assert_not_reloaded(page)

    page.get_by_label("Search").fill("vaccination")

    expect(results).to_contain_text("1 match")
    expect(results.get_by_text("Miso the cat is due")).to_be_visible()
    expect(results.get_by_text("planning a trip to Kyoto")).to_have_count(0)
    assert_not_reloaded(page)


def test_a_search_that_matches_nothing_says_so(page, alice, alice_memory):
    log_in(page, alice)
    page.goto(alice.page_url("notes"))

    page.get_by_label("Search").fill("xylophone")

    expect(page.locator("#note-results").get_by_text("No note matches.")).to_be_visible()


def test_voting_a_note_up_raises_its_score_on_the_page_and_in_the_memory(page, alice, memory):
    note = memory.note_store(
        alice.external_id, "Alice's favourite trail is the Sintra loop through the forest", tags=["hiking"]
    )
    assert note["vote_score"] == 0
    log_in(page, alice)
    page.goto(alice.page_url("notes") + "?q=Sintra")
    vote = page.locator(f"#vote-{note['id']}")
    expect(vote.locator(".vote-score")).to_have_text("0.00")
    mark_document(page)

    page.get_by_role("button", name=f"Vote note {note['id']} up").click()

    expect(page.locator(f"#vote-{note['id']} .vote-score")).to_have_text("1.00")
    assert_not_reloaded(page)
    assert memory.note(alice.external_id, note["id"])["vote_score"] == 1.0

    # one vote per person and item: the other button changes it, the same one withdraws it
    page.get_by_role("button", name=f"Vote note {note['id']} down").click()
    expect(page.locator(f"#vote-{note['id']} .vote-score")).to_have_text("-1.00")
    assert memory.note(alice.external_id, note["id"])["vote_score"] == -1.0
    page.get_by_role("button", name=f"Vote note {note['id']} down").click()

    expect(page.locator(f"#vote-{note['id']} .vote-score")).to_have_text("0.00")
    assert memory.note(alice.external_id, note["id"])["vote_score"] == 0.0


def test_editing_a_note_writes_a_new_version_and_keeps_the_old_one_readable(page, alice, memory):
    note = memory.note_store(
        alice.external_id, "Alice's bike needs a new chain before the spring rides", tags=["bike"]
    )
    log_in(page, alice)
    page.goto(f"{alice.page_url('notes')}{note['id']}/")
    content = page.locator("#note-content")
    expect(content).to_contain_text("version 1")

    content.get_by_role("link", name="Edit").click()
    page.get_by_label("Content").fill("Alice's bike got a new chain and new brake pads in March")
    page.get_by_label("Tags").fill("bike, repairs")
    page.get_by_role("button", name="Save new version").click()

    expect(content.locator(".note-content").first).to_have_text(
        "Alice's bike got a new chain and new brake pads in March"
    )
    expect(content).to_contain_text("version 2")
    expect(content.locator(":scope > .row > .tag")).to_have_text(["bike", "repairs"])
    content.get_by_text("Earlier versions (1)").click()
    expect(content.locator("ol.timeline li")).to_contain_text("needs a new chain before the spring rides")
    stored = memory.note(alice.external_id, note["id"])
    assert stored["content"] == "Alice's bike got a new chain and new brake pads in March"
    assert sorted(stored["tags"]) == ["bike", "repairs"]


def test_forgetting_a_note_asks_first_and_then_removes_it(page, alice, memory):
    note = memory.note_store(
        alice.external_id, "Alice keeps the spare house key with her neighbour Rui", tags=["home"]
    )
    log_in(page, alice)
    page.goto(f"{alice.page_url('notes')}?q=spare+house+key")
    row = page.locator(f"#note-{note['id']}")
    expect(row).to_be_visible()
    count = page.locator("#note-count")
    before = int(count.inner_text().split()[0])  # "N match(es), best first"

    page.once("dialog", lambda dialog: dialog.dismiss())
    row.get_by_role("button", name="Forget").click()
    expect(row).to_be_visible()
    assert memory.note(alice.external_id, note["id"])["id"] == note["id"]

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Forget").click()

    expect(row).to_have_count(0)
    expect(count).to_have_text(re.compile(rf"^{before - 1} match(es)?, best first$"))  # no reload
    assert [n["id"] for n in memory.notes_recall(alice.external_id, query="spare house key")] == []
    with pytest.raises(MemoryWebError) as missing:
        memory.note(alice.external_id, note["id"])
    assert missing.value.status == 404
