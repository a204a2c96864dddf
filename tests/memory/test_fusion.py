"""Fusion and ranking (memory/ranking/): weighted reciprocal rank, neighbouring turns,
sessions, dates, confirmations and the retrieval modes, through the real search backends."""

import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.config import get_config
from memory.context import context_build
from memory.models import Evidence, EvidenceStatus, Note
from memory.ranking import asks_when, message_dates, weighted_rrf
from memory.ranking.notes import named_entities
from memory.services import note_store
from memory.services.conversations import conversation_get_or_create, message_add
from memory.services.evidence import evidence_record
from memoryweb.errors import ConfigError
from tests.memory.ranking_world import NOW, rank, session

UTC = datetime.UTC


# --- pure parts ------------------------------------------------------------------------------


def test_weighted_rrf_sums_weight_over_k_plus_rank_and_scales_the_best_to_one():
    fused = weighted_rrf([([1, 2, 3], 1.0), ([3, 4], 0.5)], k=5)

    # 1: 1/6; 2: 1/7; 3: 1/8 + 0.5/6; 4: 0.5/7
    assert fused[3] == pytest.approx(1.0)
    assert fused[1] == pytest.approx((1 / 6) / (1 / 8 + 0.5 / 6))
    assert fused[4] == pytest.approx((0.5 / 7) / (1 / 8 + 0.5 / 6))
    assert sorted(fused, key=lambda i: -fused[i]) == [3, 1, 2, 4]


def test_a_list_with_zero_weight_does_not_count():
    assert weighted_rrf([([1], 1.0), ([2], 0.0)], k=5) == {1: 1.0}
    assert weighted_rrf([], k=5) == {}


@pytest.mark.parametrize(
    "question",
    [
        "When did Melanie paint a sunrise?",
        "what year did you move to Lisbon",
        "How long ago was the wedding?",
        "Since when has she been running?",
    ],
)
def test_questions_that_ask_for_a_time_are_recognised(question):
    assert asks_when(question)


@pytest.mark.parametrize("question", ["What did Caroline research?", "Where is the whenua gallery?"])
def test_other_questions_do_not_ask_when(question):
    assert not asks_when(question)


def test_a_date_with_a_year_is_a_range_and_a_bare_month_matches_any_year():
    (may,) = message_dates("What did Maria do in May 2023?", NOW)
    (june,) = message_dates("When did Melanie go camping in June?", NOW)

    assert may.holds(datetime.date(2023, 5, 20), 0)
    assert not may.holds(datetime.date(2023, 6, 2), 0)
    assert may.holds(datetime.date(2023, 6, 2), 3)  # the slack after the range
    assert june.holds(datetime.date(2021, 6, 3), 0) and june.holds(datetime.date(2023, 6, 30), 0)
    assert not june.holds(datetime.date(2023, 7, 2), 0)
    assert message_dates("What did Caroline research?", NOW) == []


def test_a_relative_month_is_the_one_month_it_resolves_to():
    (next_month,) = message_dates("What is the team trip next month?", NOW)

    assert next_month.holds(datetime.date(2024, 4, 10), 0)
    assert not next_month.holds(datetime.date(2023, 4, 10), 0)


# --- ranking over stored notes ---------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_turn_after_a_matching_turn_is_recalled_in_full_mode_only(subject, actor, config):
    session(subject, actor, config, "s1", ["Lovely weather for the harbour walk today."], NOW)
    question, answer, _ = session(
        subject,
        actor,
        config,
        "s2",
        [
            "Did you finally go to the poetry reading downtown?",
            "Yes! It was transgender people sharing their stories, so moving.",
            "Unrelated: the bakery had fresh croissants.",
        ],
        NOW,
    )

    full = rank(subject, config, "What was the poetry reading about?")
    fts = rank(subject, config, "What was the poetry reading about?", mode="fts")

    full_ids = [note.pk for note, _, _ in full]
    assert full_ids[0] == question.pk
    assert answer.pk in full_ids[1:3]  # with the turn after it, lifted as much (window 2)
    assert f"next to n:{question.pk}" in dict((n.pk, r) for n, _, r in full)[answer.pk]
    assert answer.pk not in [note.pk for note, _, _ in fts]


@pytest.mark.postgres
@pytest.mark.django_db
def test_neighbours_never_cross_into_another_conversation(subject, actor, config):
    (before,) = session(subject, actor, config, "s1", ["A story about the old lighthouse keeper."], NOW)
    (hit,) = session(subject, actor, config, "s2", ["The marathon in Lisbon was hard."], NOW)
    (after,) = session(subject, actor, config, "s3", ["Grandma's garden is blooming."], NOW)

    ranked = [note.pk for note, _, _ in rank(subject, config, "How was the Lisbon marathon?")]

    assert ranked == [hit.pk]
    assert before.pk not in ranked and after.pk not in ranked


@pytest.mark.django_db
def test_neighbour_window_zero_turns_the_signal_off(subject, actor, config):
    question, answer = session(
        subject, actor, config, "s1", ["Did you see the comet last night?", "Yes, from the rooftop!"], NOW
    )
    config = config.with_overrides({"scoring": {"neighbourWindow": 0}})

    ranked = [note.pk for note, _, _ in rank(subject, config, "Who saw the comet?")]

    assert ranked == [question.pk]


@pytest.mark.postgres
@pytest.mark.django_db
def test_an_archived_turn_is_not_lifted_as_a_neighbour(subject, actor, config):
    question, archived, kept = session(
        subject,
        actor,
        config,
        "s1",
        ["Did you see the comet last night?", "Yes, from the rooftop!", "We stayed up until three."],
        NOW,
    )
    Note.objects.filter(pk=archived.pk).update(archived_at=NOW)

    ranked = [note.pk for note, _, _ in rank(subject, config, "Who saw the comet?")]

    assert ranked == [question.pk, kept.pk]


def _turns(subject, actor, config, name, turns, when, *, notes=()):
    """One conversation of turns, each a message and its evidence unit (as reflection records
    every turn); the turns at the indexes in `notes` also get a note from their message."""
    conversation, _ = conversation_get_or_create(subject=subject, external_id=name, actor=actor)
    made = []
    for i, text in enumerate(turns):
        message, _ = message_add(
            conversation=conversation,
            role="user" if i % 2 == 0 else "assistant",
            text=text,
            occurred_at=when,
            actor=actor,
        )
        if i in notes:
            note, _ = note_store(
                subject=subject,
                content=text,
                conversation=conversation,
                source_message=message,
                occurred_at=when,
                actor=actor,
                config=config,
            )
            made.append(note)
        else:
            made.append(evidence_record(message=message, category="", actor=actor, config=config))
    return made


def _key(item) -> str:
    return f"e:{item.pk}" if isinstance(item, Evidence) else f"n:{item.pk}"


POETRY = [
    "Did you finally go to the poetry reading downtown?",
    "Yes! Retired sailors recited verses on the sea, so moving.",
    "Unrelated: the bakery had fresh croissants.",
]


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_turn_after_a_matching_evidence_unit_is_lifted_as_a_note_would_be(subject, actor, config):
    _turns(subject, actor, config, "s1", ["Lovely weather for the harbour walk today."], NOW)
    question, answer, _ = _turns(subject, actor, config, "s2", POETRY, NOW)

    full = rank(subject, config, "What was the poetry reading about?")
    fts = rank(subject, config, "What was the poetry reading about?", mode="fts")

    keys = [_key(item) for item, _, _ in full]
    assert keys[0] == _key(question)
    assert _key(answer) in keys[1:3]  # no candidate itself: it joins with its lift (window 2)
    reasons = {_key(item): reason for item, _, reason in full}
    assert f"next to e:{question.pk}" in reasons[_key(answer)]
    assert _key(answer) not in [_key(item) for item, _, _ in fts]


@pytest.mark.postgres
@pytest.mark.django_db
def test_notes_and_evidence_units_lift_each_other_across_kinds(subject, actor, config):
    question, answer, _ = _turns(subject, actor, config, "s1", POETRY, NOW, notes={0})  # a note, then units
    unit_then_note = _turns(
        subject,
        actor,
        config,
        "s2",
        [
            "Remember the lighthouse tour we planned?",
            "It got moved to the spring, the keeper is away.",
        ],
        NOW,
        notes={1},
    )

    by_note = {_key(i): r for i, _, r in rank(subject, config, "What was the poetry reading about?")}
    by_unit = {_key(i): r for i, _, r in rank(subject, config, "What happened to the lighthouse tour?")}

    assert isinstance(question, Note) and isinstance(answer, Evidence)
    assert f"next to n:{question.pk}" in by_note[_key(answer)]
    first, second = unit_then_note
    assert isinstance(first, Evidence) and isinstance(second, Note)
    assert f"next to e:{first.pk}" in by_unit[_key(second)]


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_unit_waiting_for_consent_or_in_another_conversation_is_never_lifted(subject, actor, config):
    (before,) = _turns(subject, actor, config, "s0", ["A story about the old lighthouse keeper."], NOW)
    question, pending, kept = _turns(
        subject,
        actor,
        config,
        "s1",
        ["Did you see the comet last night?", "Yes, from the rooftop!", "We stayed up until three."],
        NOW,
    )
    Evidence.objects.filter(pk=pending.pk).update(status=EvidenceStatus.PENDING)

    ranked = [_key(item) for item, _, _ in rank(subject, config, "Who saw the comet?")]

    assert ranked == [_key(question), _key(kept)]
    assert _key(before) not in ranked


@pytest.mark.django_db
def test_with_evidence_off_no_unit_is_lifted(subject, actor, config):
    _turns(subject, actor, config, "s1", ["Did you see the comet last night?"], NOW, notes={0})
    _turns(subject, actor, config, "s1", ["Yes, from the rooftop!"], NOW)
    config = config.with_overrides({"evidence": {"enabled": False}})

    ranked = rank(subject, config, "Who saw the comet?")

    assert [type(item) for item, _, _ in ranked] == [Note]


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_full_mode_context_build_makes_as_many_queries_for_many_candidates_as_for_few(
    subject, actor, config
):
    question = "How did the garden fence turn out?"
    words = ["oak", "pine", "cedar", "birch", "maple", "elm", "ash", "yew", "fir", "larch"]

    def build():
        with CaptureQueriesContext(connection) as queries:
            context = context_build(subject=subject, message=question, config=config, record=False)
        return len(queries), context

    session(subject, actor, config, "s0", ["The garden fence is finally painted.", "Green, of course."], NOW)
    few, _ = build()
    for i, word in enumerate(words):
        session(
            subject,
            actor,
            config,
            f"s{i + 1}",
            [f"Another coat of {word} stain on the garden fence.", f"Then tea under the {word} tree."],
            NOW,
        )
    many, context = build()

    lifted = [i for i in context.items if "next to n:" in i.reason]
    assert len(rank(subject, config, question)) == 2 * len(words) + 2  # every turn is ranked
    assert lifted  # the neighbouring turns were looked up
    assert many == few


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_date_in_the_question_prefers_notes_of_that_date(subject, actor, config):
    (may,) = session(
        subject,
        actor,
        config,
        "may",
        ["Maria volunteered at the shelter."],
        datetime.datetime(2023, 5, 9, tzinfo=UTC),
    )
    (july,) = session(
        subject,
        actor,
        config,
        "jul",
        ["Maria volunteered at the shelter again."],
        datetime.datetime(2023, 7, 9, tzinfo=UTC),
    )

    in_may = rank(subject, config, "Where did Maria volunteer in May 2023?")
    in_july = rank(subject, config, "Where did Maria volunteer in July 2023?")

    assert in_may[0][0].pk == may.pk and "as asked" in in_may[0][2]
    assert in_july[0][0].pk == july.pk


@pytest.mark.django_db
def test_a_when_question_prefers_the_note_that_mentions_a_date(subject, actor, config):
    (plain,) = session(subject, actor, config, "s1", ["Melanie loves to paint sunrise scenes."], NOW)
    (dated,) = session(subject, actor, config, "s2", ["Melanie painted that sunrise last year."], NOW)

    ranked = rank(subject, config, "When did Melanie paint a sunrise?")
    without = rank(
        subject, config.with_overrides({"scoring": {"whenDated": 0.0}}), "When did Melanie paint a sunrise?"
    )

    assert ranked[0][0].pk == dated.pk
    assert "mentions a date" in ranked[0][2]
    assert dict((n.pk, s) for n, s, _ in ranked)[dated.pk] > dict((n.pk, s) for n, s, _ in without)[dated.pk]


def test_the_names_of_a_question_are_its_capitalised_words_but_question_words_and_months():
    assert named_entities("What has Melanie painted since May?") == {"Melanie"}
    assert named_entities("What subject have Caroline and Melanie both painted?") == {"Caroline", "Melanie"}
    assert named_entities("what did i paint last week?") == set()


@pytest.mark.django_db
def test_a_turn_said_by_the_person_the_question_names_is_preferred(subject, actor, config):
    other, said = session(
        subject,
        actor,
        config,
        "s1",
        [
            "Caroline: Wow, your painting of the lake sunrise looks lovely!",
            "Melanie: I painted a horse last week.",
        ],
        NOW,
    )
    off = config.with_overrides({"scoring": {"speakerMatch": 0.0, "entityMatch": 0.0}})

    ranked = {n.pk: (s, why) for n, s, why in rank(subject, config, "What has Melanie painted?")}
    without = {n.pk: s for n, s, _ in rank(subject, off, "What has Melanie painted?")}

    assert "said by Melanie" in ranked[said.pk][1]
    assert ranked[said.pk][0] == pytest.approx(without[said.pk] + config["scoring.speakerMatch"])
    assert ranked[other.pk][0] == pytest.approx(without[other.pk])  # names no one asked about


@pytest.mark.django_db
def test_a_note_naming_the_person_elsewhere_gains_the_entity_weight(subject, actor, config):
    (note,) = session(subject, actor, config, "s1", ["Caroline: Melanie showed me her horse painting."], NOW)
    off = config.with_overrides({"scoring": {"speakerMatch": 0.0, "entityMatch": 0.0}})

    (ranked,) = rank(subject, config, "What has Melanie painted?")
    (without,) = rank(subject, off, "What has Melanie painted?")

    assert "names Melanie" in ranked[2] and "said by" not in ranked[2]
    assert ranked[1] == pytest.approx(without[1] + config["scoring.entityMatch"])


@pytest.mark.django_db
def test_a_note_said_again_counts_as_confirmed(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", actor=actor)
    text = "Pottery class tonight with the ceramics group at the studio"
    for i in range(3):
        message, _ = message_add(conversation=conversation, role="user", text=f"{text} ({i})", actor=actor)
        note, _ = note_store(
            subject=subject,
            content=text,
            conversation=conversation,
            source_message=message,
            actor=actor,
            config=config,
        )
    assert Note.objects.filter(subject=subject).count() == 1  # merged by dedup

    (ranked,) = rank(subject, config, "pottery class", mode="fts")
    (unconfirmed,) = rank(
        subject, config.with_overrides({"scoring": {"confirmations": 0.0}}), "pottery class", mode="fts"
    )

    assert "said 3 times" in ranked[2]
    assert ranked[1] == pytest.approx(unconfirmed[1] + 0.05)


@pytest.mark.django_db
def test_full_mode_without_embeddings_is_full_text_with_signals(subject, actor, config):
    session(subject, actor, config, "s1", ["The kayak is called Zephyrine."], NOW)

    assert config["retrieve.mode"] == "full" and config["embeddings.provider"] == "none"
    assert [n.content for n, _, _ in rank(subject, config, "name of the kayak")] == [
        "The kayak is called Zephyrine."
    ]
    assert rank(subject, config, "name of the kayak", mode="vector") == []  # no vectors: nothing


@pytest.mark.django_db
def test_the_context_keeps_its_contract_in_full_mode(subject, actor, config):
    session(
        subject,
        actor,
        config,
        "s1",
        [f"Turn {i} about the garden fence and tomatoes." for i in range(30)],
        NOW,
    )
    config = config.with_overrides({"recallInjection": {"k": 5}})

    context = context_build(subject=subject, message="How is the garden fence?", config=config, record=False)

    recalled = [i for i in context.items if i.section == "recalled"]
    assert len(recalled) == 5
    for block in context.sections:
        assert block.tokens <= block.cap
    assert [b.name for b in context.sections][:3] == ["profile", "recalled", "memory-index"]


# --- embeddings (the real local model) -------------------------------------------------------


@pytest.fixture
def local_config(app):
    app.config = {"memory": {"embeddings": {"provider": "local"}}}
    app.save()
    return get_config(app)


@pytest.mark.django_db
def test_hybrid_mode_finds_a_note_by_meaning_that_full_text_misses(subject, actor, local_config):
    from memory.services.embeddings import embed_notes

    notes = session(
        subject,
        actor,
        local_config,
        "s1",
        [
            "I adopted a small puppy from the shelter last week.",
            "The tax forms are due in April.",
            "My favourite band released a new album about dogs.",
        ],
        NOW,
    )
    assert embed_notes(notes, config=local_config) == 3
    question = "Does she have a young dog?"

    fts = [n.pk for n, _, _ in rank(subject, local_config, question, mode="fts")]
    vector = [n.pk for n, _, _ in rank(subject, local_config, question, mode="vector")]
    hybrid = rank(subject, local_config, question, mode="hybrid")

    assert notes[0].pk not in fts  # "puppy" shares no word with "young dog"
    assert vector[0] == notes[0].pk
    assert notes[0].pk in [n.pk for n, _, _ in hybrid]
    assert "similar meaning" in dict((n.pk, r) for n, _, r in hybrid)[notes[0].pk]


# --- configuration ---------------------------------------------------------------------------


def test_an_unknown_retrieval_mode_is_refused_with_a_suggestion(app):
    app.config = {"memory": {"retrieve": {"mode": "hybird"}}}

    with pytest.raises(ConfigError, match=r"memory\.retrieve\.mode .*did you mean hybrid"):
        get_config(app)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("scoring", "neighbours", -0.1),
        ("scoring", "neighbourWindow", 11),
        ("scoring", "speakerMatch", -0.1),
        ("scoring", "entityMatch", -0.1),
    ],
)
def test_bad_signal_weights_are_refused_by_name(app, section, key, value):
    app.config = {"memory": {section: {key: value}}}

    with pytest.raises(ConfigError, match=rf"memory\.{section}\.{key}"):
        get_config(app)


def test_a_non_positive_rrf_k_is_refused(app):
    app.config = {"memory": {"retrieve": {"fusion": {"rrfK": 0}}}}

    with pytest.raises(ConfigError, match=r"memory\.retrieve\.fusion\.rrfK"):
        get_config(app)
