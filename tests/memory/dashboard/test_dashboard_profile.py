"""The profile page: active facts, add, inline edit (a new version), remove, history."""

import pytest
from django.urls import reverse

from memory.models import AuditEvent, ProfileFact
from memory.services import Actor, fact_set
from tests.dashboard_helpers import hx
from tests.support import database_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def facts(owned_subject):
    api = Actor.system("test")
    city, _ = fact_set(subject=owned_subject, key="city", value="Paris", actor=api)
    city, _ = fact_set(subject=owned_subject, key="city", value="Lisbon", actor=api)
    diet, _ = fact_set(
        subject=owned_subject, key="diet", value="vegetarian", pinned=False, keywords=["food"], actor=api
    )
    return {"city": city, "diet": diet}


def _url(name, subject, *args):
    return reverse(name, args=[subject.pk, *args])


def test_lists_active_facts_with_pinned_and_contextual_marked(facts, owned_subject, owner_client):
    response = owner_client.get(_url("dashboard:profile", owned_subject))
    assert response.status_code == 200
    assert [f.value for f in response.context["facts"]] == ["Lisbon", "vegetarian"]
    html = response.content.decode()
    assert "Paris" not in html  # superseded: only in the history
    assert 'title="Always in the context">pinned' in html
    assert ">contextual<" in html and '<span class="tag">food</span>' in html


def test_edit_writes_a_new_version_and_keeps_the_old_one(facts, owned_subject, owner, owner_client):
    old = facts["city"]
    url = _url("dashboard:fact_edit", owned_subject, old.pk)
    response = hx(owner_client, "POST", url, {"value": "Porto", "pinned": "on"})
    assert response.status_code == 200
    old.refresh_from_db()
    new = ProfileFact.objects.get(subject=owned_subject, key="city", valid_to=None)
    assert new.value == "Porto" and new.origin == "dashboard"
    assert old.valid_to is not None and old.superseded_by == new
    assert ProfileFact.objects.filter(subject=owned_subject, key="city").count() == 3
    html = response.content.decode()
    assert html.lstrip().startswith(f'<tr id="fact-{new.pk}">')  # the row, ready to replace the editor
    assert "Saved a new version of city." in html  # out-of-band toast
    event = AuditEvent.objects.filter(action="fact.set").latest("id")
    assert (event.actor_kind, event.actor_id) == ("user", owner.username)


def test_edit_can_make_a_fact_contextual(facts, owned_subject, owner_client):
    url = _url("dashboard:fact_edit", owned_subject, facts["city"].pk)
    hx(owner_client, "POST", url, {"value": "Lisbon", "keywords": "travel, home"})
    new = ProfileFact.objects.get(subject=owned_subject, key="city", valid_to=None)
    assert (new.pinned, new.keywords) == (False, ["travel", "home"])


def test_saving_the_same_value_counts_a_confirmation_not_a_version(facts, owned_subject, owner_client):
    fact = facts["city"]
    response = hx(
        owner_client,
        "POST",
        _url("dashboard:fact_edit", owned_subject, fact.pk),
        {"value": "Lisbon", "pinned": "on"},
    )
    assert response.status_code == 200
    fact.refresh_from_db()
    assert fact.valid_to is None and fact.confirmations == 1
    assert "counted as a confirmation" in response.content.decode()


def test_empty_value_is_refused_naming_the_field(facts, owned_subject, owner_client):
    fact = facts["city"]
    response = hx(owner_client, "POST", _url("dashboard:fact_edit", owned_subject, fact.pk), {"value": " "})
    assert response.status_code == 400
    assert 'data-field="value"' in response.content.decode()
    assert ProfileFact.objects.filter(subject=owned_subject, key="city").count() == 2


def test_unpinned_without_keywords_is_refused_on_keywords(facts, owned_subject, owner_client):
    fact = facts["city"]
    response = hx(
        owner_client, "POST", _url("dashboard:fact_edit", owned_subject, fact.pk), {"value": "Rome"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'data-field="keywords"' in html and "needs at least one keyword" in html
    fact.refresh_from_db()
    assert fact.valid_to is None and fact.value == "Lisbon"


def test_a_superseded_version_cannot_be_edited_or_removed(facts, owned_subject, owner_client):
    old = ProfileFact.objects.get(subject=owned_subject, key="city", value="Paris")
    before = database_rows()
    assert (
        hx(
            owner_client, "POST", _url("dashboard:fact_edit", owned_subject, old.pk), {"value": "x"}
        ).status_code
        == 404
    )
    assert hx(owner_client, "POST", _url("dashboard:fact_remove", owned_subject, old.pk)).status_code == 404
    assert database_rows() == before  # no new version, no removal, no audit event


def test_edit_form_fragment_and_cancel(facts, owned_subject, owner_client):
    fact = facts["diet"]
    form = hx(owner_client, "GET", _url("dashboard:fact_edit", owned_subject, fact.pk)).content.decode()
    assert f'<tr id="fact-{fact.pk}" class="is-editing">' in form
    assert 'value="food"' in form and "vegetarian</textarea>" in form
    row = hx(owner_client, "GET", _url("dashboard:fact_row", owned_subject, fact.pk)).content.decode()
    assert row.lstrip().startswith(f'<tr id="fact-{fact.pk}">')


def test_without_javascript_edit_opens_on_the_page_and_saves_with_a_redirect(
    facts, owned_subject, owner_client
):
    fact = facts["city"]
    page = owner_client.get(_url("dashboard:fact_edit", owned_subject, fact.pk))
    assert page.status_code == 200 and page.context["editing"] == fact.pk
    assert "<html" in page.content.decode()
    response = owner_client.post(
        _url("dashboard:fact_edit", owned_subject, fact.pk), {"value": "Faro", "pinned": "on"}
    )
    assert response.status_code == 302
    assert response["Location"] == _url("dashboard:profile", owned_subject)
    assert ProfileFact.objects.get(subject=owned_subject, key="city", valid_to=None).value == "Faro"


def test_remove_closes_the_fact_and_keeps_its_history(facts, owned_subject, owner_client):
    fact = facts["diet"]
    response = hx(owner_client, "POST", _url("dashboard:fact_remove", owned_subject, fact.pk))
    assert response.status_code == 200
    fact.refresh_from_db()
    assert fact.valid_to is not None
    assert ProfileFact.objects.filter(pk=fact.pk).exists()
    assert "Removed diet" in response.content.decode()
    assert not ProfileFact.objects.filter(subject=owned_subject, key="diet", valid_to=None).exists()


def test_history_shows_every_version_newest_first(facts, owned_subject, owner_client):
    hx(owner_client, "POST", _url("dashboard:fact_remove", owned_subject, facts["city"].pk))
    response = hx(owner_client, "GET", _url("dashboard:fact_history", owned_subject, facts["city"].pk))
    html = response.content.decode()
    assert response.status_code == 200
    assert html.index("Lisbon") < html.index("Paris")
    assert "removed" in html and "replaced" in html
    assert "<html" not in html
    page = owner_client.get(_url("dashboard:fact_history", owned_subject, facts["city"].pk))
    assert "<html" in page.content.decode() and "History of city" in page.content.decode()


def test_add_a_fact(owned_subject, owner_client):
    response = hx(
        owner_client,
        "POST",
        _url("dashboard:fact_add", owned_subject),
        {"key": "pet", "value": "a cat called Miso", "pinned": "on"},
    )
    assert response.status_code == 200
    fact = ProfileFact.objects.get(subject=owned_subject, key="pet")
    assert fact.value == "a cat called Miso" and fact.pinned and fact.origin == "dashboard"
    assert f'id="fact-{fact.pk}"' in response.content.decode()


def test_add_with_a_bad_key_names_the_key_and_writes_nothing(owned_subject, owner_client):
    response = hx(
        owner_client,
        "POST",
        _url("dashboard:fact_add", owned_subject),
        {"key": "??", "value": "x", "pinned": "on"},
    )
    assert response.status_code == 400
    assert 'data-field="key"' in response.content.decode()
    assert not ProfileFact.objects.filter(subject=owned_subject).exists()


def test_add_without_javascript_shows_errors_on_the_page(owned_subject, owner_client):
    response = owner_client.post(_url("dashboard:fact_add", owned_subject), {"key": "pet", "value": ""})
    assert response.status_code == 400
    html = response.content.decode()
    assert "<html" in html and 'data-field="value"' in html


def test_empty_profile_says_how_facts_arrive(owned_subject, owner_client):
    html = owner_client.get(_url("dashboard:profile", owned_subject)).content.decode()
    assert "No facts yet." in html and "Add a fact" in html


def test_a_persons_edit_is_certain_whatever_the_extractor_thought(owned_subject, owner_client):
    extracted, _ = fact_set(
        subject=owned_subject, key="city", value="Lisbon", confidence=0.9, actor=Actor.system("test")
    )
    hx(
        owner_client,
        "POST",
        _url("dashboard:fact_edit", owned_subject, extracted.pk),
        {"value": "Porto", "pinned": "on"},
    )
    new = ProfileFact.objects.get(subject=owned_subject, key="city", valid_to=None)
    assert (new.value, new.confidence) == ("Porto", 1.0)


def test_keys_are_shown_as_a_person_reads_them(owned_subject, owner_client):
    api = Actor.system("test")
    fact_set(subject=owned_subject, key="job_title", value="nurse", actor=api)
    fact_set(subject=owned_subject, key="preference.dark mode", value="likes", actor=api)
    html = owner_client.get(_url("dashboard:profile", owned_subject)).content.decode()

    assert '<th scope="row" data-label="Key">Job title ' in html
    assert '<th scope="row" data-label="Key">Preference: dark mode ' in html
