"""Bulk actions on the notes list: select notes, park them (kept, out of every context), find
them under "Parked", unpark one. A lesson parked from its card leaves the context preview and
comes back when it is unparked from the lessons list, at laptop and phone widths."""

from urllib.parse import urlencode

import pytest

from tests.browser.conftest import LAPTOP, PHONE, expect, log_in

pytestmark = pytest.mark.browser


def test_selected_notes_are_parked_out_of_the_context_and_one_comes_back(page, alice, memory):
    first = memory.note_store(alice.external_id, "Alice keeps her kayak at the Zanzibar boathouse")
    second = memory.note_store(alice.external_id, "Alice paddles to Zanzibar point on Saturdays")
    question = "Where is the Zanzibar kayak?"
    assert "Zanzibar boathouse" in memory.context(alice.external_id, question).prompt
    log_in(page, alice)
    page.goto(f"{alice.page_url('notes')}?q=zanzibar")
    results = page.locator("#note-results")
    expect(results).to_contain_text("2 matches")

    page.get_by_label(f"Select note n:{first['id']}").check()
    page.get_by_label(f"Select note n:{second['id']}").check()
    page.locator("#note-bulk").get_by_role("button", name="Park", exact=True).click()

    # the list answers again with the same search: the parked notes have left the live list
    expect(page.locator("#toasts")).to_contain_text("Parked 2 notes.")
    expect(results.get_by_text("No note matches.")).to_be_visible()
    assert [n["id"] for n in memory.notes_recall(alice.external_id, query="zanzibar")] == []
    assert "Zanzibar" not in memory.context(alice.external_id, question).prompt

    page.get_by_label("Show").select_option("parked")
    expect(results).to_contain_text("2 matches")
    expect(page.locator(f"#note-{first['id']} .badge", has_text="Parked")).to_be_visible()

    page.get_by_label(f"Select note n:{first['id']}").check()
    page.locator("#note-bulk").get_by_role("button", name="Unpark").click()

    expect(results).to_contain_text("1 match")
    expect(page.locator(f"#note-{first['id']}")).to_have_count(0)
    expect(page.locator(f"#note-{second['id']}")).to_be_visible()
    recalled = [n["id"] for n in memory.notes_recall(alice.external_id, query="zanzibar")]
    assert recalled == [first["id"]]
    assert "Zanzibar boathouse" in memory.context(alice.external_id, question).prompt


def test_bulk_forget_asks_on_the_page_first(page, alice, memory):
    note = memory.note_store(alice.external_id, "Alice's old locker code at the Quixotic gym was 4711")
    log_in(page, alice)
    page.goto(f"{alice.page_url('notes')}?q=quixotic")
    results = page.locator("#note-results")
    expect(results).to_contain_text("1 match")

    page.get_by_label(f"Select note n:{note['id']}").check()
    page.locator("#note-bulk").get_by_role("button", name="Forget…").click()

    expect(results).to_contain_text("Forget 1 note for good?")
    assert [n["id"] for n in memory.notes_recall(alice.external_id, query="quixotic")] == [note["id"]]
    page.get_by_role("button", name="Yes, forget 1").click()

    expect(results.get_by_text("No note matches.")).to_be_visible()
    assert memory.notes_recall(alice.external_id, query="quixotic") == []


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_a_parked_lesson_leaves_the_context_preview_and_comes_back_when_unparked(
    new_page, viewport, alice, memory, alice_memory
):
    # the lesson consolidation distilled from Alice's sourdough notes (conftest.alice_memory)
    lessons = memory.lessons(alice.external_id, k=50)
    lesson = next(item for item in lessons if "baking" in item["tags"])
    ref = f"[l:{lesson.id}]"
    message = f"Any tips? {lesson.text}"
    preview = f"{alice.page_url('preview')}?{urlencode({'message': message})}"
    assert ref in memory.context(alice.external_id, message).prompt
    page = new_page(viewport)
    log_in(page, alice)
    try:
        page.goto(preview)
        result = page.locator("#preview-result")
        expect(result.get_by_role("heading", name="### lessons")).to_be_visible()
        expect(result).to_contain_text(ref)

        page.goto(alice.page_url("lessons"))
        card = page.locator(f"#lesson-{lesson.id}")
        card.get_by_role("button", name="Park", exact=True).click()

        expect(page.locator("#toasts")).to_contain_text(f"Parked lesson l:{lesson.id}")
        expect(card.locator(".badge", has_text="Parked")).to_be_visible()
        expect(card.get_by_role("button", name="Unpark")).to_be_visible()
        page.goto(preview)
        expect(result.get_by_role("heading", name="Tail")).to_be_visible()
        expect(result).not_to_contain_text(ref)
        assert ref not in memory.context(alice.external_id, message).prompt

        # gone from the live list, found under "Parked", unparked from there in bulk
        page.goto(alice.page_url("lessons"))
        expect(page.locator(f"#lesson-{lesson.id}")).to_have_count(0)
        page.get_by_label("Show").select_option("parked")
        expect(card).to_be_visible()
        page.get_by_label(f"Select lesson l:{lesson.id}").check()
        page.locator("#distilled-bulk").get_by_role("button", name="Unpark").click()

        expect(page.locator("#toasts")).to_contain_text("Unparked 1 lesson.")
        expect(page.locator(f"#lesson-{lesson.id}")).to_have_count(0)  # the parked list, again
        page.goto(preview)
        expect(result).to_contain_text(ref)
        assert ref in memory.context(alice.external_id, message).prompt
    finally:  # the other browser tests share Alice's lesson
        memory.lesson_park(alice.external_id, lesson.id, parked=False)
