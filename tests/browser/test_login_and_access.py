"""Signing in, and nobody reaching a subject they do not own."""

import re

import pytest

from tests.browser.conftest import expect, log_in

pytestmark = pytest.mark.browser


def test_a_person_signs_in_and_lands_on_the_overview_of_their_memory(page, alice):
    page.goto(alice.page_url("overview"))
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))

    page.get_by_label("Username").fill(alice.username)
    page.get_by_label("Password").fill(alice.password)
    page.get_by_role("button", name="Sign in").click()

    expect(page).to_have_url(re.compile(re.escape(alice.page_url("overview")) + "$"))
    expect(page.get_by_text(f"Signed in as {alice.username}")).to_be_visible()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.get_by_role("main")).to_contain_text(alice.display_name)


def test_a_wrong_password_is_refused_with_a_message(page, alice):
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(alice.username)
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("alert")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    expect(page.get_by_text("Signed in as")).to_have_count(0)


@pytest.mark.parametrize("page_name", ["overview", "profile", "notes", "consent", "preview"])
def test_a_person_who_does_not_own_a_subject_gets_404_on_its_pages(page, alice, bob, page_name):
    log_in(page, bob)

    response = page.goto(alice.page_url(page_name))

    assert response is not None and response.status == 404
    expect(page.get_by_text(alice.display_name)).to_have_count(0)
    # the same page of bob's own subject is there
    own = page.goto(bob.page_url(page_name))
    assert own is not None and own.status == 200


def test_a_person_cannot_open_or_approve_another_persons_items_by_id(page, alice, bob, memory, alice_memory):
    note_id = alice_memory["notes"][0]
    pending = memory.pending(alice.external_id)[0]
    log_in(page, bob)

    opened = page.goto(f"{alice.page_url('notes')}{note_id}/")
    # the same ids under bob's own subject are not found either
    under_own = page.goto(f"{bob.page_url('notes')}{note_id}/")
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    approve = page.request.post(
        f"{alice.page_url('consent')}pending/{pending['id']}/approve/",
        headers={"X-CSRFToken": csrf, "HX-Request": "true"},
    )
    approve_as_own = page.request.post(
        f"{bob.page_url('consent')}pending/{pending['id']}/approve/",
        headers={"X-CSRFToken": csrf, "HX-Request": "true"},
    )

    assert (opened.status, under_own.status) == (404, 404)
    assert (approve.status, approve_as_own.status) == (404, 404)
    still = {p["id"]: p["status"] for p in memory.pending(alice.external_id, status="pending")}
    assert still.get(pending["id"]) == "pending"
