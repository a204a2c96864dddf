import json
from datetime import UTC, date, datetime

import pytest
from django.core.management import call_command

from chat.reflection import Extraction, FactRetraction, classify_category, extract
from chat.reflection.evaluation import DEVELOPMENT, UNTOUCHED, evaluate, load_cases

THU = datetime(2024, 3, 14, 10, 30, tzinfo=UTC)
LOCOMO = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def facts_of(text: str, **kwargs) -> dict[str, str]:
    return {f.key: f.value for f in extract(text, occurred_at=THU, **kwargs).facts}


FACTS = [
    ("Hi! I'm Sam, by the way.", {"name": "Sam"}),
    ("you can call me Alex, nobody uses Alexander", {"preferred_name": "Alex"}),
    ("Heya, Marcus here.", {"name": "Marcus"}),
    (
        "My name is Priya Raman and I work at Stripe as a backend engineer.",
        {"name": "Priya Raman", "employer": "Stripe", "job_title": "backend engineer"},
    ),
    ("i live in berlin now", {"location": "Berlin"}),
    ("I've been living in Austin, TX for about three years", {"location": "Austin, TX"}),
    ("I'm from São Paulo but I live in Dublin now", {"hometown": "São Paulo", "location": "Dublin"}),
    ("I live at 221B Baker Street, London", {"address": "221B Baker Street, London", "location": "London"}),
    ("I'm a nurse at St. Mary's, night shifts mostly", {"job_title": "nurse", "employer": "St. Mary's"}),
    ("I'm the only designer there", {"job_title": "designer"}),
    ("I was promoted to staff engineer last week", {"job_title": "staff engineer"}),
    (
        "I speak English and Spanish, and I'm learning Japanese (badly)",
        {"languages": "English, Spanish", "languages.learning": "Japanese"},
    ),
    ("been learning german on duolingo", {"languages.learning": "German"}),
    (
        "I use VS Code on my Mac, mostly writing Python and some Go",
        {"editor": "VS Code", "os": "macOS", "programming_languages": "Python, Go"},
    ),
    ("i'm on arch btw, using neovim + tmux", {"os": "Arch Linux", "editor": "Neovim", "tools": "tmux"}),
    ("I've switched from Windows to Linux Mint", {"os": "Linux Mint"}),
    ("I hate cilantro, it tastes like soap to me", {"preference.cilantro": "dislikes"}),
    ("I don't really like sushi", {"preference.sushi": "dislikes"}),
    ("I prefer dark mode in everything", {"preference.dark mode": "likes"}),
    (
        "i'm a big fan of jazz and lofi beats when i code",
        {"preference.jazz": "likes", "preference.lofi beats": "likes"},
    ),
    ("not a fan of cold weather tbh", {"preference.cold weather": "dislikes"}),
    # a style of answer is answer_style, never a preference named after its adjectives
    ("I like short, direct answers", {"answer_style": "concise"}),
    ("I like brief summaries", {"answer_style": "concise"}),
    ("I like short answers and code", {"answer_style": "concise", "preference.code": "likes"}),
    ("I like short walks", {"preference.short walks": "likes"}),
    ("I'm a huge Arsenal fan", {"preference.arsenal": "likes"}),
    (
        "My favorite band is Radiohead and my favourite food is ramen",
        {"favorite.band": "Radiohead", "favorite.food": "ramen"},
    ),
    ("I'm allergic to peanuts and shellfish, so keep that in mind", {"allergies": "peanuts, shellfish"}),
    ("I have type 1 diabetes so I need to watch carbs", {"health_conditions": "type 1 diabetes"}),
    ("I have anxiety and take sertraline", {"health_conditions": "anxiety", "medications": "sertraline"}),
    ("I'm vegetarian, have been for like 10 years", {"diet": "vegetarian"}),
    ("I'm Muslim, so no pork please", {"religion": "Muslim"}),
    ("I earn about 85k a year, is that enough for a house?", {"income": "85k a year"}),
    ("My email is sam.r@example.com if you need it", {"email": "sam.r@example.com"}),
    ("My wife Maria and I just got back from Peru", {"partner": "Maria"}),
    (
        "My girlfriend is Chinese and I'm trying to learn Mandarin",
        {"partner": "girlfriend", "languages.learning": "Mandarin"},
    ),
    ("I have two kids, 5 and 8, so weekends are chaos", {"children": "2"}),
    ("My son Leo starts kindergarten in September", {"children": "Leo"}),
    ("Our dog Biscuit is scared of thunder", {"pets": "Biscuit (dog)"}),
    ("we have a cat named Miso and a golden retriever", {"pets": "Miso (cat), golden retriever"}),
    ("For the record, I go by he/him", {"pronouns": "he/him"}),
]


@pytest.mark.parametrize(("text", "expected"), FACTS)
def test_extract_sets_the_facts_the_message_states(text, expected):
    assert facts_of(text) == expected


NO_FACTS = [
    "Do you like jazz?",
    "do you like jazz",
    "What's the weather like in Seattle?",
    "Is Rust better than Go for CLI tools?",
    "If I lived in London I'd probably cycle everywhere",
    "I might move to Berlin next year",
    "I'm thinking about moving to Denver maybe next year",
    "My GP believes I have anaemia",
    "My brother lives in Toronto and works at Shopify.",
    "My friend Tom is allergic to cats",
    "my buddy Raj loves jazz, what album should I get him?",
    "She said she's moving to Berlin next month",
    "I love you lol",
    "I like how you explained that",
    "I'm not allergic to anything",
    "I'm not from Canada",
    "I'm Spanish",
    "I live in fear of deadlines",
    "I work at home most days",
    "I'm a terrible cook",
    "I used to work at Amazon",
    "Can you remind me what we decided about the database?",
    "My fiancée and I broke up a few days ago",
]


@pytest.mark.parametrize("text", NO_FACTS)
def test_extract_sets_no_fact_for_questions_hedges_negations_and_other_people(text):
    assert facts_of(text) == {}


def test_extract_from_an_assistant_message_sets_no_user_facts():
    assert (
        extract("You mentioned you live in Berlin and love jazz.", role="assistant", occurred_at=THU)
        == Extraction()
    )


def test_extract_keeps_an_agreement_the_assistant_restates_as_a_decision_note():
    [note] = extract(
        "Great, so we agreed to ship the beta on Friday.", role="assistant", occurred_at=THU
    ).notes

    assert note.tags[0] == "decision"
    assert note.occurred_at == datetime(2024, 3, 15, tzinfo=UTC)


def test_extract_retracts_what_the_speaker_says_is_no_longer_true():
    result = extract("I don't live in Paris anymore, I moved to Lyon last month.", occurred_at=THU)

    assert result.retractions == [FactRetraction("location", "Paris")]
    assert {f.key: f.value for f in result.facts} == {"location": "Lyon"}
    assert [(n.kind, n.occurred_at.date().isoformat()) for n in result.notes] == [("event", "2024-02-01")]


@pytest.mark.parametrize(
    ("text", "retraction"),
    [
        ("I used to work at Amazon but I quit in January", FactRetraction("employer", "Amazon")),
        ("I'm not pescatarian anymore, I eat everything now", FactRetraction("diet", "pescatarian")),
        ("My fiancée and I broke up a few days ago", FactRetraction("partner", "")),
    ],
)
def test_extract_retractions(text, retraction):
    assert extract(text, occurred_at=THU).retractions == [retraction]


def test_extract_turns_a_dated_plan_into_a_note_on_the_resolved_day():
    [note] = extract("I'm flying to Tokyo next Friday!", occurred_at=THU).notes

    assert note.tags[:2] == ["plan", "travel"]
    assert note.content == "I'm flying to Tokyo next Friday (2024-03-22)!"
    assert note.occurred_at == datetime(2024, 3, 22, tzinfo=UTC)


def test_extract_grounds_a_past_event_against_the_message_time_and_names_the_speaker():
    result = extract(
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        occurred_at=LOCOMO,
        speaker="Caroline",
    )

    [note] = result.notes
    assert (
        note.content
        == "Caroline: I went to a LGBTQ support group yesterday (2023-05-07) and it was so powerful."
    )
    assert (note.kind, note.occurred_at.date().isoformat(), note.category) == (
        "event",
        "2023-05-07",
        "sexual_life",
    )
    assert result.facts == []


@pytest.mark.parametrize(
    ("text", "kind", "tag"),
    [
        ("Remember that my sister's birthday is June 3.", "remembered", "family"),
        ("Note to self: renew passport before June", "remembered", "travel"),
        ("My password for the router is Tr0ub4dor&3, remember that", "remembered", None),
        ("We decided to use Postgres instead of MySQL for the new service.", "decision", "tech"),
        ("Let's go with the blue theme for the dashboard.", "decision", None),
        ("My brother lives in Toronto and works at Shopify.", "people", "family"),
        ("Remind me to water the tomatoes tomorrow", "plan", None),
        ("Yesterday I ran my first half marathon!!", "event", "fitness"),
    ],
)
def test_extract_writes_one_note_of_the_right_kind(text, kind, tag):
    [note] = extract(text, occurred_at=THU).notes

    assert note.kind == kind
    assert tag is None or tag in note.tags


@pytest.mark.parametrize(
    ("text", "kind", "day"),
    [
        # a group's commitment is a decision, whether or not it says "decided"
        ("We'll retire the legacy invoicing service in Q2.", "decision", "2024-04-01"),
        ("We are going to sunset the old dashboard next quarter.", "decision", "2024-04-01"),
        ("Next month we switch the warehouse to a four-day week.", "decision", "2024-04-01"),
        ("Our startup will stop offering the free plan by the end of next year.", "decision", "2025-12-01"),
        ("The board has committed to publishing salaries.", "decision", None),
        ("I agreed to coach the under-12 football squad.", "decision", None),
        ("We will not use microservices for the rewrite.", "decision", None),
        # a person's own intention is a plan, dated or not
        ("I will learn to play the cello.", "plan", None),
        ("I'm going to renovate the attic in the summer.", "plan", "2024-06-01"),
        ("I intend to sell my motorbike.", "plan", None),
        ("We're going to visit the Azores in July.", "plan", "2024-07-01"),
    ],
)
def test_extract_keeps_plans_commitments_and_decisions_with_their_time(text, kind, day):
    [note] = extract(text, occurred_at=THU).notes

    assert note.kind == kind
    assert (note.occurred_at.date().isoformat() if note.occurred_at else None) == day


@pytest.mark.parametrize(
    "text",
    [
        "I'll think it over.",
        "We'll see about that.",
        "I'll get back to you.",
        "We will do it.",
        "If it rains, we'll cancel the picnic.",
        "Perhaps we'll rebrand one day.",
        "Are we going to repaint the fence?",
        "I'm going to the shop.",
    ],
)
def test_extract_keeps_no_commitment_from_small_talk_hedges_conditions_or_questions(text):
    assert extract(text, occurred_at=THU).notes == []


def test_extract_stores_a_remembered_fact_as_a_fact_not_a_note():
    result = extract("Could you remember that I prefer metric units?", occurred_at=THU)

    assert [(f.key, f.value, f.confidence) for f in result.facts] == [
        ("preference.metric units", "likes", 1.0)
    ]
    assert result.notes == []


def test_extract_marks_a_password_note_as_credentials():
    [note] = extract("My password for the router is Tr0ub4dor&3, remember that", occurred_at=THU).notes

    assert note.category == "credentials"


def test_extract_pins_identity_facts_and_gives_contextual_facts_keywords():
    facts = {
        f.key: f for f in extract("I'm Sam. I'm allergic to peanuts. I hate cilantro.", occurred_at=THU).facts
    }

    assert (facts["name"].pinned, facts["name"].keywords) == (True, [])
    allergies = facts["allergies"]
    assert (allergies.pinned, allergies.category) == (False, "health")
    assert {"food", "eat", "restaurant", "peanuts"} <= set(allergies.keywords)
    assert {"cilantro", "food", "restaurant"} <= set(facts["preference.cilantro"].keywords)


@pytest.mark.parametrize(
    ("text", "key", "category"),
    [
        ("My wife Maria is a chef", "partner", "relationships"),
        ("I have two kids", "children", "minors"),
        ("I live at 221B Baker Street, London", "address", "precise_location"),
        ("I earn about 85k a year", "income", "finances"),
        ("I keep kosher", "diet", "religion"),
        ("I'm vegetarian", "diet", ""),
    ],
)
def test_extract_gives_each_fact_its_consent_category(text, key, category):
    facts = {f.key: f for f in extract(text, occurred_at=THU).facts}

    assert facts[key].category == category


def test_extract_lowers_confidence_when_the_speaker_is_unsure():
    [fact] = extract("I think I'm allergic to shellfish", occurred_at=THU).facts

    assert (fact.key, fact.confidence) == ("allergies", 0.6)


def test_extract_keeps_the_last_of_two_contradicting_statements():
    assert facts_of("I work at Microsoft. Actually no, I work at GitHub, which is owned by Microsoft.") == {
        "employer": "GitHub"
    }


def test_extract_collects_list_facts_from_several_sentences():
    assert facts_of("I speak English. I also speak French and english.") == {"languages": "English, French"}


def test_extract_of_empty_text_is_empty():
    assert not extract("   ", occurred_at=THU)


CATEGORIES = [
    ("I love jazz", ""),
    ("oh my god, that was fast", ""),
    ("a 10 minute drive from the office", ""),
    ("use std::vector here", ""),
    ("my wife and I", "relationships"),
    ("I have asthma", "health"),
    ("my wife has cancer", "health"),
    ("I'm gay", "sexual_life"),
    ("my son's school", "minors"),
    ("my salary is 90k", "finances"),
    ("I go to church on Sundays", "religion"),
    ("I voted Labour", "politics"),
    ("I live at 221B Baker Street", "precise_location"),
    ("my password is hunter22", "credentials"),
    ("her passport number is 123456789", "government_ids"),
    ("my SSN is [REDACTED:ssn]", "government_ids"),
    ("card [REDACTED:credit_card]", "finances"),
    ("key [REDACTED:openai_key]", "credentials"),
]


@pytest.mark.parametrize(("text", "category"), CATEGORIES)
def test_classify_category_picks_the_most_sensitive_category_mentioned(text, category):
    assert classify_category(text) == category


def test_the_labelled_set_has_varied_cases_with_honest_splits():
    _, cases = load_cases()
    _, development = load_cases(split=DEVELOPMENT)
    _, untouched = load_cases(split=UNTOUCHED)

    assert len(development) >= 60 and len(untouched) >= 120
    assert len(cases) == len(development) + len(untouched)  # every case is in a known split
    assert sum(not (c.get("facts") or c.get("notes")) for c in cases) >= 20  # questions, hedges, small talk


# the development sets written as such (dev10, dates in fresh phrasings with its facts and categories
# labelled in passing, and dev11, dev12 and dev13, once untouched, have guards of their own)
WRITTEN_FOR_DEVELOPMENT = ("dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "dev8", "dev9")


def test_extraction_eval_stays_above_its_regression_guards():
    development = evaluate(split=WRITTEN_FOR_DEVELOPMENT)

    # Development sets (dev … dev9: the rules were written or fixed against them). All nine after
    # dev9's rules: facts 0.964 / 0.888, notes 0.945 / 0.939, retractions 0.944 / 0.966. All seven after
    # issue 18: facts 0.974 / 0.913, notes 0.946 / 0.953, retractions 0.963 / 0.988, dates 219/225,
    # 146 of 149 negatives silent. dev6 and dev7 were written by people who never read the rules and
    # scored facts 0.833 / 0.294 and 0.788 / 0.394 on their first run: unseen text is the real test.
    assert development.scores["facts"].precision >= 0.95 and development.scores["facts"].recall >= 0.88
    notes = development.scores["notes (kind)"]
    assert notes.precision >= 0.92 and notes.recall >= 0.92
    retractions = development.scores["retractions"]
    assert retractions.precision >= 0.92 and retractions.recall >= 0.95
    # 0.88, not 0.9, since dev8 (2026-12-03): its category labels are lenient (e.g. no
    # government_ids on passport messages), so the gate's right extra categories count as false.
    # Scored on the sets before dev9, whose category labels are stricter still (dev9's own guard
    # is below); so are the dates and silent negatives (dev..dev8 after dev9's rules: dates
    # 291/301, 181 of 184 negatives silent, categories 0.884).
    earlier = evaluate(split=tuple(s for s in WRITTEN_FOR_DEVELOPMENT if s != "dev9"))
    assert earlier.scores["categories"].precision >= 0.88
    assert earlier.dates_correct >= 290  # 293/303 after dev10's grammar
    assert earlier.silent_negatives >= earlier.negatives - 3
    for split in ("dev", "dev2", "dev3", "dev4", "dev5", "dev6"):  # dev7's three talkative negatives aside
        report = evaluate(split=split)
        assert report.silent_negatives == report.negatives, split
    # dev5 (issue 18's miss list), dev6, dev7: each kept close to its tuned figures
    dev5, dev6, dev7 = (evaluate(split=name) for name in ("dev5", "dev6", "dev7"))
    assert (
        dev5.scores["facts"].recall >= 0.95
        and dev5.scores["retractions"].tp >= 12
        and dev5.dates_correct >= 32
    )
    assert (
        dev6.scores["facts"].recall >= 0.88
        and dev6.scores["retractions"].tp >= 29
        and dev6.dates_correct >= 66
    )
    assert (
        dev7.scores["facts"].recall >= 0.8
        and dev7.scores["retractions"].tp >= 28
        and dev7.dates_correct >= 50
    )
    # dev8 and dev9 (issue 18, requirement 2: precision traps and relative dates). dev9 was written
    # in three batches, each labelled before its first run: facts 0.704 / 0.633, 0.571 / 0.889 and
    # 0.625 / 0.333 on those runs; 0.894 / 0.778 after its rules, notes 0.901 / 0.910, dates 84/87.
    dev8, dev9 = evaluate(split="dev8"), evaluate(split="dev9")
    # dev8 dates 72/76 → 74/76 with dev10's grammar (a household's day: "the movers come on the 3rd")
    assert dev8.dates_correct >= 73 and dev8.scores["notes (kind)"].recall >= 0.9
    assert dev9.scores["facts"].precision >= 0.86 and dev9.scores["facts"].recall >= 0.74
    assert dev9.scores["notes (kind)"].precision >= 0.86 and dev9.scores["notes (kind)"].recall >= 0.87
    assert dev9.dates_correct >= 80 and dev9.silent_negatives >= dev9.negatives - 12
    # dev10 (dates in fresh phrasings, labelled and committed before its first run): note dates
    # 121/185 on that run, 167/185 after the composable grammar of memory/temporal.py
    dev10 = evaluate(split="dev10")
    assert dev10.dates_checked >= 180 and dev10.dates_correct >= 164
    assert dev10.scores["notes (kind)"].precision >= 0.93 and dev10.silent_negatives >= dev10.negatives - 2
    # dev4 (plans, commitments and decisions; issue 10)
    dev4 = evaluate(split="dev4")
    assert dev4.scores["notes (kind)"].precision >= 0.9 and dev4.scores["notes (kind)"].recall >= 0.9

    # dev11 and dev12: the untouched heldout4 (issue 17) and heldout6 (issue 18) until 2026-12-07,
    # when they became development sets. dev11: facts 0.833 / 0.510 before issue 18, 0.833 /
    # 0.612 at the change; notes 0.821 / 0.575 → 0.875 / 0.700; retractions 4/6 → 6/6; dates
    # 14/25 → 21/25; 19/19 silent. dev12: facts 0.824 / 0.444 on its first run, 0.810 / 0.540 at
    # the change; notes 0.816 / 0.615 → 0.870 / 0.723; retractions 2/13 → 8/13; dates 30/48 → 35/48.
    dev11, dev12 = evaluate(split="dev11"), evaluate(split="dev12")
    assert dev11.scores["facts"].precision >= 0.8 and dev11.scores["facts"].recall >= 0.6
    assert dev11.scores["notes (kind)"].precision >= 0.83 and dev11.scores["notes (kind)"].recall >= 0.68
    assert dev11.scores["retractions"].tp >= 5 and dev11.dates_correct >= 19
    assert dev11.silent_negatives == dev11.negatives
    assert dev12.scores["facts"].precision >= 0.76 and dev12.scores["facts"].recall >= 0.5
    assert dev12.scores["notes (kind)"].precision >= 0.82 and dev12.scores["notes (kind)"].recall >= 0.68
    assert dev12.scores["retractions"].tp >= 7 and dev12.dates_correct >= 33
    assert dev12.silent_negatives >= 23
    # dev13: the untouched heldout7 until 2026-12-07 evening (scored three times, table only): facts
    # 0.774 / 0.446 on its first run, 0.800 / 0.478 at the change; notes 0.867 / 0.765 → 0.889 /
    # 0.784; retractions 4/13; dates 35/44 → 36/44; 22 of 24 silent.
    dev13 = evaluate(split="dev13")
    assert dev13.scores["facts"].precision >= 0.75 and dev13.scores["facts"].recall >= 0.44
    assert dev13.scores["notes (kind)"].precision >= 0.84 and dev13.scores["notes (kind)"].recall >= 0.74
    assert dev13.scores["retractions"].tp >= 3 and dev13.dates_correct >= 33
    assert dev13.silent_negatives >= 20

    # The untouched sets: guards a little below their latest measurement, so a regression fails.
    # Never change a rule to raise them; once one is used that way it is a development set. Each
    # run is recorded in docs/benchmarks.md.
    heldout3, heldout5, heldout8 = (evaluate(split=name) for name in ("heldout3", "heldout5", "heldout8"))
    # heldout3: facts 1.000 / 0.769, notes 0.833 / 0.769, dates 7/10.
    assert heldout3.scores["facts"].precision >= 0.9 and heldout3.scores["facts"].recall >= 0.72
    assert heldout3.scores["notes (kind)"].precision >= 0.75 and heldout3.scores["notes (kind)"].recall >= 0.7
    # heldout5 (issue 10, written with dev4 by the rule's author, so weaker): notes 0.909 / 0.833.
    notes5 = heldout5.scores["notes (kind)"]
    assert notes5.precision >= 0.85 and notes5.recall >= 0.78
    assert heldout5.silent_negatives == heldout5.negatives
    # heldout8 (issue 18, 2026-12-07 evening, written the same way, before the evening's rules):
    # facts 0.732 / 0.353, notes 0.862 / 0.877, retractions 4/19, dates 38/45, 28 of 32 silent;
    # after that round (its second run) the same but retractions 6/19.
    assert heldout8.scores["facts"].precision >= 0.68 and heldout8.scores["facts"].recall >= 0.32
    assert heldout8.scores["notes (kind)"].precision >= 0.8 and heldout8.scores["notes (kind)"].recall >= 0.82
    assert heldout8.scores["retractions"].tp >= 3 and heldout8.dates_correct >= 35
    assert heldout8.silent_negatives >= 26


def test_extraction_eval_command_prints_the_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "eval.json"

    call_command("extraction_eval", "--json", str(out))

    printed = capsys.readouterr().out
    assert "extraction eval [all]" in printed and "precision" in printed
    metrics = json.loads(out.read_text())
    assert set(metrics) >= {
        "all",
        "all development",
        "dev",
        "dev2",
        "dev3",
        "dev4",
        "dev5",
        "dev11",
        "heldout3",
        "heldout5",
        "dev13",
        "heldout8",
    }
    assert "all held-out" not in metrics  # development and untouched sets are never merged
    assert metrics["all"]["metrics"]["facts"]["precision"] >= 0.9


# --- issue 18: phrasing the rules were not written for ------------------------------------------

JUNE_11 = datetime(2025, 6, 11, 18, 0, tzinfo=UTC)  # a Wednesday


def extract_on(text: str, at: datetime = JUNE_11) -> Extraction:
    return extract(text, occurred_at=at)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("wrking for Lidl these days", {"employer": "Lidl"}),
        ("Been workin at Lidl for a year", {"employer": "Lidl"}),
        ("im a sofware developer at Monzo", {"job_title": "software developer", "employer": "Monzo"}),
        ("I speek Dutch", {"languages": "Dutch"}),
        ("currently livng in Ghent", {"location": "Ghent"}),
    ],
)
def test_a_typo_in_a_trigger_word_still_gives_the_fact(text, expected):
    facts = {f.key: f.value for f in extract_on(text).facts}

    assert facts == expected


def test_typo_repair_leaves_names_and_known_words_alone():
    from chat.reflection.words import repair_typos

    assert repair_typos("Rui and Liv wrk at Kiva") == "Rui and Liv work at Kiva"
    assert repair_typos("the lake was calm") == "the lake was calm"


def test_a_self_introduction_gives_name_title_employer_and_city():
    facts = {
        f.key: f.value
        for f in extract_on("Hey, Priya Nair here — staff nurse at the Royal Free, living in Camden.").facts
    }

    assert facts == {
        "name": "Priya Nair",
        "job_title": "staff nurse",
        "employer": "Royal Free",
        "location": "Camden",
    }


def test_a_full_name_alone_is_a_name():
    assert {f.key: f.value for f in extract_on("I'm Oluwaseun Adeyemi.").facts} == {
        "name": "Oluwaseun Adeyemi"
    }


def test_a_pet_that_died_is_retracted_not_added_and_the_death_is_an_event():
    got = extract_on("my cat Pickles died on Tuesday :(")

    assert got.facts == []
    assert [(r.key, r.value) for r in got.retractions] == [("pets", "Pickles (cat)")]
    [note] = got.notes
    assert note.kind == "event" and note.occurred_at.date().isoformat() == "2025-06-10"


def test_a_pet_put_down_is_named_by_its_species_anywhere_in_the_message():
    got = extract_on("The vet put Rex to sleep yesterday. Fourteen years with that dog.")

    assert [(r.key, r.value) for r in got.retractions] == [("pets", "Rex (dog)")]


def test_someone_elses_pet_or_switch_retracts_nothing_of_the_speaker():
    assert extract_on("my friend's dog died last week, so sad").retractions == []
    got = extract_on("Tom switched from Java to Kotlin")
    assert got.retractions == [] and got.facts == []


def test_a_medication_switch_retracts_the_old_one_and_adds_the_new_one():
    got = extract_on("I'm off escitalopram now, the doctor switched me to bupropion")

    assert [(f.key, f.value) for f in got.facts] == [("medications", "bupropion")]
    assert [(r.key, r.value) for r in got.retractions] == [("medications", "escitalopram")]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("no longer taking ibuprofen for my back", "medications", "ibuprofen"),
        ("we don't use Jira anymore", "tools", "Jira"),
        ("I moved out of Manchester last year", "location", "Manchester"),
        ("quit my position with Acme in April", "employer", "Acme"),
        ("used to be a teacher, now I do sales", "job_title", "teacher"),
        ("I'm not with Jake anymore", "partner", ""),
        ("ugh, got laid off from Meta yesterday", "employer", "Meta"),
    ],
)
def test_changes_in_any_phrasing_are_retractions(text, key, value):
    got = extract_on(text)

    assert (key, value) in [(r.key, r.value) for r in got.retractions]
    assert all(f.value != value for f in got.facts if f.key == key)


def test_moving_out_next_month_is_a_plan_not_yet_a_retraction():
    got = extract_on("moving out of Leeds next month")

    assert got.retractions == []
    assert [(n.kind, n.occurred_at.date().isoformat()) for n in got.notes] == [("plan", "2025-07-01")]


@pytest.mark.parametrize(
    "text",
    [
        "oh I LOVE a 5am alarm",
        "Oh sure, I just adore Monday mornings /s",
        "I love how the docs say nothing useful 🙄",
        "so, because I really enjoy ironing on a Friday night, love that for me",
    ],
)
def test_sarcasm_is_not_a_preference(text):
    assert not any(f.key.startswith("preference.") for f in extract_on(text).facts)


def test_a_sincere_liking_is_still_a_preference():
    assert {f.key: f.value for f in extract_on("I love cycling in the countryside").facts} == {
        "preference.cycling": "likes"
    }


@pytest.mark.parametrize(
    ("text", "kind", "day"),
    [
        ("Our course starts the 3rd", "plan", "2025-07-03"),  # the 3rd has passed this month
        ("my lease ends on the 30th", "plan", "2025-06-30"),
        ("I got back from Rome on the 2nd", "event", "2025-06-02"),  # past tense looks back
        ("got a new job!! start on the 4th", "plan", "2025-07-04"),  # the clause's own tense
    ],
)
def test_a_bare_day_of_the_month_is_dated_by_tense(text, kind, day):
    notes = extract_on(text).notes

    assert [(n.kind, n.occurred_at.date().isoformat()) for n in notes] == [(kind, day)]


def test_a_past_story_is_dated_in_the_past_not_next_year():
    got = extract_on("Last summer I worked at a hotel in Crete. In September I travelled around Greece.")

    dates = [(n.kind, n.occurred_at.date().isoformat()) for n in got.notes]
    assert dates == [("event", "2024-06-01"), ("event", "2024-09-01")]


def test_a_story_keeps_its_tense_into_a_sentence_without_one():
    # the second sentence has no verb of its own tense; the story is told in the past
    from memory.temporal import resolve_dates

    [mention] = resolve_dates("October, all of it in Hanoi.", JUNE_11, default_tense="past")
    assert mention.start.isoformat() == "2024-10-01"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("me and Dana are going to share the bills 50/50 from August", "decision"),
        ("we'll be repainting the hallway on Saturday", "plan"),
        ("gonna repot the fig tree next week", "plan"),
    ],
)
def test_commitments_without_decided(text, kind):
    [note] = extract_on(text).notes

    assert note.kind == kind


@pytest.mark.parametrize(
    "text", ["going to grab lunch, brb", "I'm going to scream, the build broke again", "In May we flew home"]
)
def test_near_misses_of_a_commitment_are_no_commitment(text):
    assert all(n.kind not in ("plan", "decision") for n in extract_on(text).notes)


def test_a_job_with_a_typo_gives_title_and_employer():
    facts = {f.key: f.value for f in extract_on("finally got taken on as a juniour designer at IKEA!").facts}

    assert facts == {"job_title": "junior designer", "employer": "IKEA"}


@pytest.mark.parametrize(
    ("text", "languages"),
    [
        ("native speaker of Thai", "Thai"),
        ("I'm a native Spanish speaker, fluent in English too", "English, Spanish"),
        ("Greek is my first language", "Greek"),
        ("my Italian is rusty", "Italian"),
    ],
)
def test_languages_in_several_phrasings(text, languages):
    facts = {f.key: f.value for f in extract_on(text).facts}

    assert set(facts["languages"].split(", ")) == set(languages.split(", "))


def test_living_in_one_city_and_commuting_to_another_gives_the_home_city():
    facts = {
        f.key: f.value for f in extract_on("we live in Croydon and I commute into London for work").facts
    }

    assert facts == {"location": "Croydon"}


def test_quoted_text_says_nothing_about_the_speaker():
    assert not extract_on('translate "I live in Madrid" into Spanish')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Loving the new job at Stripe so far", {"employer": "Stripe"}),
        ("I work in marketing at Unilever", {"employer": "Unilever"}),
        ("Im from Lagos originally but live in Leeds now", {"hometown": "Lagos", "location": "Leeds"}),
        ("started seeing a guy called Ben", {"partner": "Ben"}),
    ],
)
def test_facts_in_clauses_the_old_rules_missed(text, expected):
    assert {f.key: f.value for f in extract_on(text).facts} == expected


def test_a_modal_is_not_a_past_tense():
    from memory.temporal import sentence_tense

    assert sentence_tense("I would love to help on Saturday") is None
    assert sentence_tense("we drove up on Saturday") == "past"


# --- issue 18, dev9: traps that say nothing of the speaker, and facts told sideways ----------------


@pytest.mark.parametrize(
    "text",
    [
        "let's pretend I'm a firefighter and you're the cat stuck up the tree",
        "in a parallel universe I'm a surgeon in Boston",
        "once I've qualified in law I'll open a practice",
        "yeah I'm a real athlete, got winded on the stairs",
        "I'm with EE for broadband and it drops every evening",
        "I never got the job at Arup in the end",
        "I'm from down south originally",
        "the graphics look unreal on this thing",
    ],
)
def test_dev9_frames_that_give_no_fact(text):
    assert facts_of(text) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("been at Ocado nearly six years, in the warehouse", {"employer": "Ocado"}),
        ("I've been in Leeds since college", {"location": "Leeds"}),
        ("last month I began working at Boots", {"employer": "Boots"}),
        ("my sister lives in Derby, I'm in Hull myself", {"location": "Hull"}),
        ("if the weather holds I'd go sailing, but I do speak Greek", {"languages": "Greek"}),
        ("we've got three sons, 2, 5 and 9", {"children": "3"}),
        ("my husband Raj's a pharmacist", {"partner": "Raj"}),
        ("registered as Katarzyna but everyone says Kasia", {"preferred_name": "Kasia"}),
        ("hey im oksana, new here", {"name": "Oksana"}),
    ],
)
def test_dev9_facts_told_sideways(text, expected):
    assert facts_of(text) == expected


def test_a_past_state_denied_now_is_a_retraction():
    got = extract("I was vegan for a long time but not any more", occurred_at=JUNE_11)

    assert [(r.key, r.value) for r in got.retractions] == [("diet", "vegan")]
    assert not got.facts


def test_one_pet_read_twice_is_kept_once():
    assert facts_of("we got a kitten in May, a tabby called Mochi") == {"pets": "Mochi (tabby)"}


def test_a_household_arrangement_is_a_plan_and_a_wish_is_none():
    [moving] = extract("we're moving to Sheffield next month", occurred_at=JUNE_11).notes
    assert moving.kind == "plan" and moving.occurred_at.date() == date(2025, 7, 1)
    [tech] = extract("we're moving to Postgres next month", occurred_at=JUNE_11).notes
    assert tech.kind == "decision"
    assert not extract("loved Rome, would go back tomorrow", occurred_at=JUNE_11).notes


def test_a_day_behind_and_a_day_ahead_in_one_sentence_are_an_event_and_a_plan():
    got = extract(
        "sold the van on the 2nd, and on the 19th I'm collecting a camper",
        occurred_at=datetime(2025, 8, 9, tzinfo=UTC),
    )
    assert [(n.kind, n.occurred_at.date().isoformat()) for n in got.notes] == [
        ("event", "2025-08-02"),
        ("plan", "2025-08-19"),
    ]


# --- issue 18, from the misses of dev11 and dev12 (once untouched): the frames behind them, in new words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the title's place of work after "as a …"
        (
            "I cover weekends as a porter at Addenbrooke's",
            {"job_title": "porter", "employer": "Addenbrooke's"},
        ),
        ("I work remote for Deliveroo", {"employer": "Deliveroo"}),
        ("I'm a GP in Exeter", {"job_title": "gp", "location": "Exeter"}),
        # "home is X" said against somewhere else
        ("home is Delft but my studio is in Rotterdam", {"location": "Delft"}),
        # a time phrase ends the value
        ("I moved to Ghent four days ago", {"location": "Ghent"}),
        # languages named by how or where they are spoken
        ("Welsh is my mother tongue", {"languages": "Welsh"}),
        ("Welsh at home, English at work", {"languages": "Welsh, English"}),
        # a label before what the speaker says of themselves
        ("some background first: I'm based in Turin", {"location": "Turin"}),
        # a diagnosis told by someone else, and a wider vocabulary of conditions
        ("the consultant has confirmed it's lupus", {"health_conditions": "lupus"}),
        ("I have shingles", {"health_conditions": "shingles"}),
        # named children and pets replace their count and their bare species
        ("we have three kids, Ana, Rui and Bea", {"children": "Ana, Rui, Bea"}),
        ("we got a puppy yesterday and called him Pretzel", {"pets": "Pretzel (dog)"}),
        ("Jo proposed on the beach and I said yes", {"partner": "Jo"}),
    ],
)
def test_frames_found_missing_in_the_spent_sets(text, expected):
    facts = {f.key: f.value for f in extract_on(text).facts}

    assert {k: facts.get(k) for k in expected} == expected


@pytest.mark.parametrize(
    ("text", "retracted"),
    [
        ("took early retirement from Siemens last year", ("employer", "Siemens")),
        ("left my parents' house in Nantes, renting in Lille now", ("location", "Nantes")),
        ("my eczema has cleared up completely", ("health_conditions", "eczema")),
        ("found Bubbles, my goldfish, dead this morning", ("pets", "Bubbles (goldfish)")),
    ],
)
def test_changes_found_missing_in_the_spent_sets(text, retracted):
    assert retracted in [(r.key, r.value) for r in extract_on(text).retractions]


def test_a_code_stated_with_what_to_do_with_it_is_remembered_and_a_bare_one_is_not():
    kept = extract_on("the shed code is 9120, remind me in case I forget")
    said = extract_on("the safe combination is 7-7-2")

    assert [n.tags[0] for n in kept.notes] == ["remembered"] and "9120" in kept.notes[0].content
    assert not any(n.tags[0] == "remembered" for n in said.notes)


def test_may_after_a_preposition_is_the_month():
    notes = extract_on("I'm going to retile the bathroom in may").notes

    assert [(n.tags[0], n.occurred_at.date().isoformat()) for n in notes] == [("plan", "2026-05-01")]


# --- issue 18, requirement 2: change frames that generalise (each in words of no labelled message)


@pytest.mark.parametrize(
    ("text", "retracted"),
    [
        # "no more" ends a denied state as "any more" does
        ("I don't live in Ely no more", ("location", "Ely")),
        # a capitalised workplace after "not at … any more"
        ("not at Halfords any more, sadly", ("employer", "Halfords")),
        # a denied perfect over a stretch of time, not only "since"
        ("I haven't been pescatarian for about six months", ("diet", "pescatarian")),
        ("haven't worked at Argos in years", ("employer", "Argos")),
        # a past state with its end
        ("I was a welder until 2019", ("job_title", "welder")),
        ("worked at Greggs till the spring", ("employer", "Greggs")),
        ("I was with Nationwide for a decade before I retired", ("employer", "Nationwide")),
        ("stopped being keto in the new year", ("diet", "keto")),
        # a job ended, named by what it was
        ("wrapped up my placement with Arup on Friday", ("employer", "Arup")),
        ("gave up my post at the library", ("employer", "Library")),
        # a career ended "after … as a"
        ("I left after nine years as a plumber", ("job_title", "plumber")),
        ("formerly with Rightmove, freelancing now", ("employer", "Rightmove")),
        ("dropped out of Exeter after one term", ("school", "Exeter")),
        # healed
        ("fully recovered from the psoriasis now", ("health_conditions", "psoriasis")),
        # how one names oneself
        ("I don't call myself Buddhist these days", ("religion", "Buddhist")),
        # off a thing, then its time phrase
        ("came off the citalopram in october", ("medications", "citalopram")),
        ("migrated off Asana to ClickUp", ("tools", "Asana")),
        # a pet handed on
        ("we gave our budgie Kiwi to my nan", ("pets", "Kiwi (budgie)")),
        # break-ups told with the partner's role, by them, as a noun, or after the fact
        ("me and my fiancé Idris have called it off", ("partner", "Idris")),
        ("my wife Lotte and I are splitting up", ("partner", "Lotte")),
        ("Marco dumped me on valentine's", ("partner", "Marco")),
        ("Freya is my ex now", ("partner", "Freya")),
        ("the separation from Bilal is final", ("partner", "Bilal")),
        ("single again after a year with Anouk", ("partner", "Anouk")),
        ("separated from my husband Tariq in spring", ("partner", "Tariq")),
        # a trade given up by its verb is its title
        ("after a decade I quit nursing", ("job_title", "nurse")),
        ("not freelancing any more, I'm salaried now", ("job_title", "freelancer")),
        # "for ages", an adverb after the value, the article of a denied "take the …"
        ("I haven't lived in Hove for ages", ("location", "Hove")),
        ("I'm no longer allergic to latex apparently", ("allergies", "latex")),
        ("I don't take the omeprazole no more", ("medications", "omeprazole")),
        ("finished up at Deloitte on Friday", ("employer", "Deloitte")),
        # a pet killed or rehomed
        ("our dog Pepper was run over in January", ("pets", "Pepper (dog)")),
        ("we had to rehome our cat Mango", ("pets", "Mango (cat)")),
    ],
)
def test_general_change_frames_retract_the_old_fact(text, retracted):
    assert retracted in [(r.key, r.value) for r in extract_on(text).retractions]


@pytest.mark.parametrize(
    "text",
    [
        "I was in Cork until Sunday",  # a stay, not a home
        "I was at the match until midnight",  # a place, not a job
        "I finished Middlemarch last night",  # a book finished, no employer
        "Nadia left me a voicemail",  # a message left, not a break-up
        "I gave my dog a bath",  # no pet given away
        "still recovering from the flu",  # still so
        "I haven't been to Lisbon in years",  # no state denied
        "I'm not cooking tonight",  # a trade's verb for one evening
        "Dad left me in charge of the barbecue",  # a relative, and no break-up
        "Noor left me on read again",
        "I'm a season ticket holder at Leeds",  # no occupation
    ],
)
def test_near_misses_of_a_change_retract_nothing(text):
    assert extract_on(text).retractions == []


def test_a_stretch_of_time_before_an_event_dates_nothing():
    got = extract_on("I was at Ocado for five years before I left")

    assert not any(n.occurred_at and n.occurred_at.year > 2026 for n in got.notes)
    assert ("employer", "Ocado") in [(r.key, r.value) for r in got.retractions]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an occupation the lexicon lacks, in a frame that says it is a job
        ("I work as a glazier", {"job_title": "glazier"}),
        ("I'm a signalman for Network Rail", {"job_title": "signalman", "employer": "Network Rail"}),
        ("I'm a civil servant at DEFRA", {"job_title": "civil servant", "employer": "DEFRA"}),
        # "<Town>-based" is where one lives, not part of the title
        ("I'm a Norwich-based florist", {"job_title": "florist", "location": "Norwich"}),
        # a home told by its direction, by calling it home, or by settling in
        ("we live up in Inverness", {"location": "Inverness"}),
        ("these days I call Tallinn home", {"location": "Tallinn"}),
        ("we finally moved into our new flat in Dundee", {"location": "Dundee"}),
        ("slowly picking up Swahili", {"languages.learning": "Swahili"}),
        ("I went to Durham university", {"school": "Durham university"}),
        ("we have a 4 year old daughter", {"children": "daughter"}),
        # one form for a birthday
        ("my birthday is the 21st of October", {"birthday": "October 21"}),
        ("my birthday is Aug 2nd", {"birthday": "August 2"}),
        # a hedge covers what follows its cue, not the clause before it
        ("my husband Joss reckons I should rest", {"partner": "Joss"}),
        ("I teach at Hollybrook but might retrain", {"employer": "Hollybrook"}),
    ],
)
def test_general_frames_read_in_new_words(text, expected):
    facts = {f.key: f.value for f in extract_on(text).facts}

    assert {k: facts.get(k) for k in expected} == expected


@pytest.mark.parametrize(
    "text",
    [
        "I'm a member at Fitness First",  # an agent noun that is no job
        "I'm a regular at the Swan",
        "I'm a patient at Guy's",
        "I might work as a lifeguard at Butlins",  # hedged from the start
        "my GP believes I have gout",  # a hedge with nothing plain before it
        "picking up Noor from school",  # no language picked up
    ],
)
def test_open_frames_give_no_fact_where_they_should_not(text):
    assert extract_on(text).facts == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a verb after the organisation ends it
        ("my job at Primark is wearing me down", {"employer": "Primark"}),
        # pets counted, then named
        ("our two hamsters Bean and Sprout are asleep", {"pets": "Bean (hamster), Sprout (hamster)"}),
        # what one is known by in tech is the tool, not a taste
        ("I'm a Linux guy through and through", {"os": "Linux"}),
        ("I'm a Rust person", {"programming_languages": "Rust"}),
        # a condition lived with
        ("been coping with eczema since I was small", {"health_conditions": "eczema"}),
        # a language named as the main one, or by its course
        ("my main language is Polish", {"languages": "Polish"}),
        ("I'm taking a Portuguese evening class", {"languages.learning": "Portuguese"}),
        # a title introduced as a name is: "… here"
        ("electrician here, got a wiring question", {"job_title": "electrician"}),
    ],
)
def test_more_general_frames_in_new_words(text, expected):
    facts = {f.key: f.value for f in extract_on(text).facts}

    assert {k: facts.get(k) for k in expected} == expected
    if "programming_languages" in expected:
        assert not any(k.startswith("preference.") for k in facts)


def test_a_town_then_a_clause_is_the_town_alone():
    assert facts_of("I teach in Swansea, English is my second language").get("location") == "Swansea"
