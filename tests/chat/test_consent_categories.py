"""The consent gate's category detection: each category's usual phrasings, the near misses that
must stay unflagged, the contract of `categories` and `classify_category`, and floors on the
development part of tests/data/consent_labelled.json (its "heldback" part is never scored here)."""

import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from chat.reflection.evaluation import DEVELOPMENT
from chat.reflection.gate_evaluation import (
    CONSENT_DATA,
    CONSENT_DEVELOPMENT,
    EXTRACTION_DATA,
    evaluate_extracted,
    evaluate_messages,
)
from chat.reflection.heuristics import extract
from memory.categories import (
    CATEGORY_PRIORITY,
    categories,
    classify_category,
    fact_category,
    item_category,
    with_source_categories,
)
from tests.chat.test_labelled_set_stays_out_of_the_code import ROOT, SOURCES, shingles

PHRASINGS = {
    "credentials": [
        "the shed padlock opens with 2-7-1-8",
        "pool locker combo is 31 12 05",
        "entry code at my mum's block is 4490#",
        "the code to get into the bike room is 1205",
        "our wifi password is lemonade88",
        "new pin for my debit card: 7302",
        "my work login is jdoe and the pw is Spring!24",
        "the spare key is under the third plant pot",
        "my security question answer is Pickles",
        "backup codes for my google account are in the drawer",
        "I changed my pasword yesterday",
        "my phone's passcode is 1122",
        "guest wifi: CoffeeNet / latte2024!",
        "hotspot: jay-iphone / hunter2!x9",
        "remember: 7731 for the side door",
        "the debit card pin is 4412",
    ],
    "government_ids": [
        "my passport number is K7745120",
        "the social security number on the form is mine",
        "driving licence no. JONES710238AB",
        "my national insurance number starts with QQ",
        "I need my tax id for the invoice, it's 98-7654321",
        "my residence permit runs out in autumn",
    ],
    "health": [
        "physio again on thursday for my shoulder",
        "physiotherapy is helping my hip",
        "my therapy session ran late",
        "I've had a sore throat and fever since monday",
        "the doc said my blood pressure is too high",
        "I take 20mg of citalopram every morning",
        "switched from omeprazole to lansoprazole",
        "I twisted my ankle on the stairs",
        "my knee's been hurting all week",
        "I'm allergic to penicillin",
        "got diagnosed with IBS",
        "I've been so anxious I can't eat",
        "the dentist wants to pull a tooth",
        "my docter changed my prescription",
        "went off the pill last month",
        "getting the coil fitted on tuesday",
        "doing sober october again",
        "trying to cut down on drinking",
        "I take vitamin D and magnesium every night",
        "what helps you fall asleep faster?",
        "my blood results came back a bit off",
        "I'm type 1 so I carry snacks",
    ],
    "sexual_life": [
        "I'm gay, my family knows",
        "I came out as bi to my friends",
        "I'm asexual and that's fine",
        "we use condoms",
        "she's a trans woman",
        "I slept with my ex again",
    ],
    "minors": [
        "my son is in second grade",
        "our daughter Ava turns 5 in may",
        "picking the kids up from daycare",
        "my toddler won't sleep",
        "my 9 year old plays chess",
        "my niece starts kindergarten",
        "we're expecting twins",
        "I'm 20 weeks pregnant",
        "I teach reception at a primary in Leeds",
        "we homeschool the kids",
        "our two year old just learned to say no",
        "my lad starts year 7 in september",
    ],
    "finances": [
        "I earn about 65k a year",
        "we're 30k in debt",
        "my rent is 1200 a month",
        "our mortgage rate went up",
        "I have 8k in savings",
        "I'm completely broke this month",
        "I got laid off last week",
        "we give 10% to the mosque",
        "I tithe every sunday",
        "atm pin is the same as my birthday",
    ],
    "religion": [
        "I'm catholic and go to mass on sundays",
        "I fast during ramadan",
        "we keep kosher at home",
        "I'm an atheist",
        "I pray before every meal",
    ],
    "politics": [
        "I voted for the greens",
        "I'm a labour party member",
        "I joined the strike at work, I'm in the union",
        "I went to the protest downtown",
        "I'm pretty conservative politically",
        "went on the climate march saturday",
    ],
    "precise_location": [
        "I live at 18 Larch Road",
        "my address is 5 Quai Voltaire",
        "our flat is apartment 12 on the second floor",
        "I'm at the cafe on Elm street right now",
        "my postcode is EH1 2NG",
        "home alone all weekend",
        "waiting at gate 22 in Frankfurt",
        "my train is the ICE 578 at 10:12, coach 6",
        "got a reservation at Noma for friday at 7",
        "I'm flying LH 400 tomorrow",
    ],
    "relationships": [
        "my new girlfriend is called Hana",
        "I started seeing someone, his name is Omar",
        "my husband and I are going through a rough patch",
        "I broke up with my boyfriend",
        "my wife's birthday is next week",
        "me and my partner are moving in together",
        "my girlfirend loves sushi",
        "my sister and I had a huge fight",
        "thinking of proposing to Priya over the summer",
        "gonna pop the question at christmas",
        "me and my brother are not on speaking terms",
        "we're pregnant!! due in march",
        "me and jess are official now",
        "Sam and I split last month",
    ],
}

NEAR_MISSES = [
    "my code review got moved to friday",
    "I pinned the browser tab",
    "pin the dependency to 2.1",
    "the child process exits with code 1",
    "HTTP status code 503 again",
    "I'm sick of this flaky test",
    "we voted to ship on monday",
    "our partner company sent the contract",
    "a 10k run on saturday",
    "the church scene gave me chills",
    "I live in Madrid",
    "the bank holiday is on monday",
    "use std::vector here",
    "oh my god, that was fast",
    "I laughed so hard, pure laughter",
    "the heating is broken",
    "I'm in a meeting till noon",
    "the selection sort is slow",
    "I love jazz",
    "can you write a unit test for this",
    "as a kid I loved lego",
    "the cat is such a baby at the vet",
    "this bug fix is a wing and a prayer",
    "I committed to a 10k every weekend",
    "the build broke me today lol",
    "let's propose to the team that we ship friday",
    "we're expecting rain tomorrow",
    "the gate closes in 10 minutes",
    "the pill-shaped button looks odd",
    "the PR is on GH 1234",
    "recall@10 went up to 0.7",
    "we split the bill",
    "booking the meeting room at 3",
]


@pytest.mark.parametrize(
    ("text", "category"), [(text, slug) for slug, texts in PHRASINGS.items() for text in texts]
)
def test_each_category_is_found_in_its_usual_phrasings(text, category):
    assert category in categories(text)


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_a_near_miss_gets_no_category(text):
    assert categories(text) == set()
    assert classify_category(text) == ""


def test_classify_category_is_the_most_sensitive_of_the_categories_found():
    text = "my wife's PIN is 4711 and she has asthma"

    assert categories(text) >= {"credentials", "health", "relationships"}
    assert classify_category(text) == "credentials"


def test_categories_of_nothing_is_empty():
    assert categories("") == set() and categories("   ") == set() and classify_category("") == ""


def test_every_category_found_is_a_seeded_slug():
    found = set().union(*(categories(t) for texts in PHRASINGS.values() for t in texts))

    assert found == set(CATEGORY_PRIORITY)


def test_a_code_told_without_the_word_code_is_still_credentials():
    assert classify_category("the garage is 8842, don't tell anyone") == "credentials"
    assert classify_category("gate 1-9-7-3") == "credentials"
    assert classify_category("the garage is 200 metres away") == ""


def test_redacted_secrets_keep_their_category():
    assert classify_category("key [REDACTED:openai_key]") == "credentials"
    assert classify_category("card [REDACTED:credit_card]") == "finances"
    assert classify_category("my SSN is [REDACTED:ssn]") == "government_ids"


def test_someone_elses_illness_is_also_their_private_life():
    assert categories("my brother has diabetes") == {"health", "relationships"}


def test_a_real_word_one_letter_from_a_keyword_is_not_taken_for_a_typo():
    assert categories("the welding shop and the bedding store") == set()
    assert categories("my girlfirend") == {"relationships"}


def test_fact_category_takes_the_keys_category_and_escalates_by_the_value():
    assert fact_category("partner", "Sam") == "relationships"
    assert fact_category("diet", "halal") == "religion"
    assert fact_category("note", "the alarm code is 5521") == "credentials"
    assert fact_category("favorite.food", "ramen") == ""


def test_the_consent_set_is_labelled_with_seeded_slugs_and_has_many_near_misses():
    cases = json.loads(CONSENT_DATA.read_text())["cases"]

    assert len(cases) >= 150
    assert {c["split"] for c in cases} == {"dev", "heldback"}
    assert {slug for c in cases for slug in c["categories"]} == set(CATEGORY_PRIORITY)
    assert sum(not c["categories"] for c in cases) >= 0.2 * len(cases)


def test_no_held_back_consent_message_is_copied_into_the_code():
    cases = json.loads(CONSENT_DATA.read_text())["cases"]
    measured = {s for c in cases if c["split"] != "dev" for s in shingles(c["text"])}
    hits = [
        str(path.relative_to(ROOT))
        for top in SOURCES
        for path in sorted((ROOT / top).rglob("*.py"))
        if shingles(path.read_text()) & measured
    ]

    assert hits == []


def test_the_gate_catches_the_sensitive_messages_of_the_consent_dev_set():
    report = evaluate_messages(CONSENT_DATA, CONSENT_DEVELOPMENT)

    assert report.messages >= 100
    assert report.gate.recall >= 0.98 and report.gate.precision >= 0.9
    assert report.total.recall >= 0.95 and report.total.precision >= 0.9
    assert all(score.recall >= 0.9 for score in report.per_category.values())


def test_an_extracted_item_with_no_category_of_its_own_takes_its_clauses():
    source = "hoping to propose to Mei next spring, also started learning Rust"

    assert item_category("Mei", source, "note") == "relationships"
    assert item_category("Rust", source, "programming_languages") == ""  # another clause
    assert item_category("Sam", "my partner is Sam and I have asthma", "partner") == "relationships"
    assert item_category("Mei", source, "note", scope="own") == ""


def test_extract_fills_each_items_category_from_its_clause():
    text = "I live in Lisbon with my boyfriend"
    got = extract(text, occurred_at=datetime(2026, 6, 1, tzinfo=UTC))
    # "Lisbon" says nothing by itself; the clause it came from names a partner
    assert got.facts and all(f.category == "relationships" for f in got.facts)

    with_source_categories(got, text)  # in place and idempotent

    assert all(f.category == "relationships" for f in got.facts)


def test_dev6_per_message_floor():
    """dev6: 207 messages written by someone who never read the rules (issue 18); its misses
    taught the kinds of phrasing above, so its floor is high; unseen text is the real test."""
    report = evaluate_messages(EXTRACTION_DATA, ("dev6",))

    assert report.messages >= 200
    assert report.gate.recall >= 0.98 and report.gate.precision >= 0.9
    assert report.total.recall >= 0.97 and report.total.precision >= 0.88
    assert all(score.recall >= 0.9 for score in report.per_category.values())


def test_the_gate_catches_the_sensitive_messages_of_the_extraction_development_sets():
    # dev10 is a set for dates; its categories were labelled in passing and the gate was never
    # tuned to it (first run: recall 38/43, precision 38/56): its own floor, below; so has dev13,
    # the untouched heldout7 until 2026-12-07 (whole messages: recall 0.964, precision 0.914)
    sets = tuple(s for s in DEVELOPMENT if s not in ("dev10", "dev13"))
    per_message = evaluate_messages(EXTRACTION_DATA, sets)
    extracted = evaluate_extracted(EXTRACTION_DATA, sets)

    assert "dev6" in DEVELOPMENT
    assert per_message.gate.recall >= 0.97 and per_message.total.recall >= 0.97
    # precision on the sets before dev9; dev9's category labels are strict (a joke about being
    # "married to Netflix", in-laws, a wedding, a redundancy, a citizenship ceremony were left
    # without one), so the gate's ask-when-unsure extras count as false there: its own floor
    earlier = evaluate_messages(EXTRACTION_DATA, tuple(s for s in sets if s != "dev9"))
    assert earlier.gate.precision >= 0.85 and earlier.total.precision >= 0.8
    dev9 = evaluate_messages(EXTRACTION_DATA, ("dev9",))
    assert dev9.gate.recall >= 0.95 and dev9.gate.precision >= 0.6
    dev10 = evaluate_messages(EXTRACTION_DATA, ("dev10",))
    assert dev10.gate.recall >= 0.85 and dev10.gate.precision >= 0.6
    dev13 = evaluate_messages(EXTRACTION_DATA, ("dev13",))
    assert dev13.gate.recall >= 0.94 and dev13.gate.precision >= 0.88
    # what reflection stores, as far as its rules find items (dev6's are mostly not found yet)
    assert extracted.gate.recall >= 0.6
    inherited = evaluate_extracted(EXTRACTION_DATA, sets, inherit="clause")
    assert inherited.gate.recall >= extracted.gate.recall


def test_consent_eval_reports_the_development_splits(capsys):
    call_command("consent_eval")

    out = capsys.readouterr().out
    assert "consent gate [consent dev, per message]" in out
    assert "consent gate [extraction development, over extracted facts and notes]" in out
    assert "heldback" not in out and "heldout" not in out


def test_consent_eval_lists_no_misses_of_a_measured_split():
    with pytest.raises(CommandError):
        call_command("consent_eval", split=["heldback"], errors=True)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("we're looking to remortgage once the deal runs out", "finances"),
        ("finally sold the house on the coast last month", "finances"),
        ("dad's will is with a lawyer now", "finances"),
        ("dad's will is with a lawyer now", "relationships"),
        ("tripped over the dog and fractured my wrist", "health"),
        ("Jo and I called it off in May", "relationships"),
        ("a flatmate of mine got pregnant, big news", "relationships"),
        ("mum had a stroke on Sunday", "relationships"),
        ("been a card-carrying Green member since uni", "politics"),
    ],
)
def test_the_kinds_of_phrasing_dev7_showed_missing(text, category):
    assert category in categories(text)


@pytest.mark.parametrize(
    "text", ["sold out in minutes, typical", "I bought a new keyboard", "called it a day"]
)
def test_the_dev7_kinds_have_their_near_misses(text):
    assert categories(text) == set()


# mental health and counselling as a cause or a line of work, therapy as a figure of speech, a
# painter's stroke and children in general are nobody's private data (LoCoMo's posted turns
# waited for consent over these: docs/benchmarks.md "LoCoMo with reflection")
@pytest.mark.parametrize(
    "text",
    [
        "I'm keen on counseling or working in mental health",
        "You'd be a great counselor!",
        "I ran a charity race for mental health last Saturday",
        "raising awareness for mental health is so rewarding",
        "still looking into counseling and mental health jobs",
        "pottery is like therapy for me",
        "we made pots, it was fun and therapeutic!",
        "each stroke carries a part of me",
        "I've got lots of kids' books",
        "to give a loving home to kids who need it",
    ],
)
def test_a_cause_a_career_or_a_figure_of_speech_is_no_health_or_minors(text):
    assert categories(text) == set()


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("my mental health has been rough lately", "health"),
        ("I see a counselor every week", "health"),
        ("counseling helped me after the breakup", "health"),
        ("therapy is helping me a lot", "health"),
        ("he had a stroke last year", "health"),
        ("I took my kids to a pottery workshop, fun and therapeutic", "minors"),
        ("my kids need new shoes", "minors"),
    ],
)
def test_the_same_words_about_someones_own_health_or_children_still_ask(text, category):
    assert category in categories(text)
