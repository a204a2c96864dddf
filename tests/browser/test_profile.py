"""The profile page: editing a fact writes a new version, and the history shows them all."""

import pytest

from tests.browser.conftest import expect, log_in

pytestmark = pytest.mark.browser


def test_editing_a_fact_writes_a_new_version_and_the_history_lists_both(page, alice, memory):
    memory.profile_set(alice.external_id, "favourite_book", "Dune", pinned=True)
    log_in(page, alice)
    page.goto(alice.page_url("profile"))
    row = page.locator("#profile-body tbody tr", has_text="favourite_book")
    expect(row).to_contain_text("Dune")

    row.get_by_role("link", name="Edit").click()
    page.locator("tr.is-editing").get_by_label("Value").fill("The Left Hand of Darkness")
    page.get_by_role("button", name="Save new version").click()

    expect(row).to_contain_text("The Left Hand of Darkness")
    expect(row).not_to_contain_text("Dune")
    row.get_by_role("link", name="History").click()
    history = page.locator("#fact-history")
    expect(history).to_contain_text("History of favourite_book")
    versions = history.locator("ol.timeline > li")
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("The Left Hand of Darkness")
    expect(versions.nth(0)).to_contain_text("active")
    expect(versions.nth(1)).to_contain_text("Dune")
    expect(versions.nth(1)).to_contain_text("replaced")

    stored = memory.profile_history(alice.external_id, "favourite_book")
    assert [v["value"] for v in stored] in (
        ["Dune", "The Left Hand of Darkness"],
        ["The Left Hand of Darkness", "Dune"],
    )
    active = [v for v in stored if v["valid_to"] is None]
    assert [v["value"] for v in active] == ["The Left Hand of Darkness"]
    assert active[0]["origin"] == "dashboard"
