"""The search page: one box across facts, notes, lessons and procedures, answered as you type,
at a laptop's width and a phone's.

Carol's memory is in an app of its own with embeddings on (the local model, as shipped): the
suite's processes run with embeddings off (tests/conftest.py), and an App's own configuration
wins over that. Alice's app keeps them off, and her page says the search is by words only.
"""

import json
import re

import pytest

from memoryweb.client import MemoryWeb
from tests.browser.conftest import Person, expect, log_in, save_screenshot
from tests.support import wait_until

pytestmark = pytest.mark.browser

WIDE = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
MEANING_APP = "search-meaning"
CAROL_NOTES = [
    "We had pasta for supper with the neighbours on Friday.",
    "Carol moved the billing warehouse to PostgreSQL 16 last month.",
    "The tax forms are due in April.",
]

# app configuration and the dashboard login: no API sets either (as in conftest's logins)
_CAROL_SCRIPT = """
import json
from django.contrib.auth import get_user_model
from memory.models import App
from memory.services import Actor, app_config_set, subject_get_or_create

app = App.objects.get(name={app!r})
app_config_set(app=app, config={{"memory": {{"embeddings": {{"provider": "local"}}}}}}, actor=Actor.system("browser-test"))
user = get_user_model().objects.create_user("carol", password="carol-browser-pass")
subject = subject_get_or_create(app=app, external_id="carol")
subject.owner = user
subject.display_name = "Carol Reyes"
subject.save(update_fields=["owner", "display_name"])
print(json.dumps(subject.pk))
"""


@pytest.fixture(scope="module")
def carol(server) -> Person:
    created = server.manage("createapp", MEANING_APP)
    key = re.search(r"api key \(shown once, store it now\): (\S+)", created).group(1)
    subject_id = json.loads(server.manage("shell", "-c", _CAROL_SCRIPT.format(app=MEANING_APP)).split()[-1])
    person = Person("carol", "carol-browser-pass", "carol", "Carol Reyes", subject_id=subject_id)
    with MemoryWeb(server.url, api_key=key, timeout=60) as memory:
        for content in CAROL_NOTES:
            memory.note_store("carol", content)
        memory.profile_set("carol", "database", "PostgreSQL")
        # the worker embeds each stored note; flush waits for the subject's background work
        assert memory.flush("carol", timeout_ms=60_000)["done"]
    return person


def _search(page, text: str) -> None:
    box = page.get_by_label("Search your memory")
    box.fill("")
    box.press_sequentially(text, delay=40)


def _relevances(results) -> list[str]:
    return [re.sub(r"^relevance ", "", t) for t in results.locator(".relevance").all_inner_texts()]


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366x900", "390x844"])
def test_typing_postg_shows_the_postgresql_note_with_the_word_marked(new_page, carol, viewport):
    page = new_page(viewport)
    log_in(page, carol)
    page.goto(carol.page_url("overview"))
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Search").click()
    expect(page).to_have_url(re.compile(r"/search/$"))
    results = page.locator("#search-results")

    _search(page, "postg")

    note = results.locator(".search-hit[data-kind=note]", has_text="billing warehouse")
    expect(note).to_be_visible()
    expect(note.locator("mark")).to_have_text("PostgreSQL")
    fact = results.locator(".search-hit[data-kind=fact]")
    expect(fact).to_contain_text("Fact")
    expect(fact.locator("mark")).to_have_text("PostgreSQL")
    expect(page).to_have_url(re.compile(r"[?&]q=postg"))
    shown = _relevances(results)
    assert shown and "0.00" not in shown and shown[0] == "1.00"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    if viewport is WIDE:
        save_screenshot(page, "search")

    note.get_by_role("link").click()
    expect(page).to_have_url(re.compile(rf"/s/{carol.subject_id}/notes/\d+/$"))


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366x900", "390x844"])
def test_dinner_finds_the_supper_note_by_meaning(new_page, carol, viewport):
    page = new_page(viewport)
    log_in(page, carol)
    page.goto(carol.page_url("search"))
    results = page.locator("#search-results")
    expect(page.locator("#search-mode")).to_have_attribute("data-meaning", "on")

    # the worker may still be embedding the last note: type again until the vector is there
    supper = results.locator(".search-hit[data-kind=note]", has_text="pasta for supper")

    def found() -> bool:
        _search(page, "dinner")
        expect(page.locator("#search-mode")).to_contain_text("by meaning")
        return supper.count() == 1

    assert wait_until(found, timeout=60, interval=1)
    expect(supper).to_contain_text("found by meaning")
    expect(supper.locator("mark")).to_have_count(0)  # no shared word to mark
    expect(results.locator(".search-hit", has_text="tax forms")).to_have_count(0)
    shown = _relevances(results)
    assert shown == ["1.00"]


def test_with_embeddings_off_the_page_says_words_only(page, alice, alice_memory):
    log_in(page, alice)
    page.goto(alice.page_url("search"))

    expect(page.locator("#search-mode")).to_contain_text("embeddings are off")
    _search(page, "kyo")

    results = page.locator("#search-results")
    expect(results.locator(".search-hit[data-kind=note]").first).to_be_visible()
    expect(results.locator(".search-hit mark").first).to_have_text(re.compile("kyoto", re.I))
    expect(page.locator("#search-mode")).to_contain_text("By words only")
    assert "0.00" not in _relevances(results)
