import pytest

from memory.context import context_build
from memory.models import Note, RetrievalEvent
from memory.services import fact_set, note_store
from memory.services.conversations import conversation_get_or_create
from memory.tokens import estimate_tokens, truncate_to_tokens

pytestmark = pytest.mark.postgres


@pytest.fixture
def filled(subject, actor, config):
    fact_set(subject=subject, key="name", value="Alice", actor=actor)
    fact_set(
        subject=subject,
        key="allergy",
        value="peanuts",
        pinned=False,
        keywords=["food", "restaurant"],
        actor=actor,
    )
    fact_set(subject=subject, key="employer", value="Acme", pinned=False, keywords=["office"], actor=actor)
    for text in [
        "Alice's favourite restaurant is Taberna do Mar in Lisbon",
        "Alice had sushi with Bob at a Lisbon restaurant in May",
        "Alice's cat Miso hates the vacuum cleaner",
        "Lisbon trip: Alice booked the flight for March 3rd",
        "The team restaurant outing was cancelled because of rain",
    ]:
        note_store(subject=subject, content=text, actor=actor, config=config)
    return subject


def test_profile_shows_pinned_facts_and_contextual_facts_whose_keywords_hit(filled, config):
    context = context_build(subject=filled, message="Any restaurant tips for Lisbon?", config=config)

    profile = context.sections[0].text
    assert "- name: Alice" in profile
    assert "- allergy: peanuts" in profile
    assert "employer" not in profile


def test_contextual_keywords_match_other_word_forms(filled, config):
    context = context_build(subject=filled, message="which restaurants are good?", config=config)

    assert "allergy" in context.sections[0].text


def test_recalled_holds_the_top_k_and_the_index_points_to_the_rest(filled, config):
    context = context_build(subject=filled, message="restaurant in Lisbon", config=config, k=2)

    data = context.as_dict()
    recalled = [i for i in data["items"] if i["section"] == "recalled"]
    index = [i for i in data["items"] if i["section"] == "memory-index"]
    assert len(recalled) == 2
    assert index and all(i["id"].startswith("n:") for i in index)
    assert (
        data["tail"].index("### profile")
        < data["tail"].index("### recalled")
        < data["tail"].index("### memory-index")
    )
    assert all(item["reason"] for item in data["items"])


def test_every_section_stays_under_its_cap(subject, actor, config):
    for i in range(30):
        fact_set(subject=subject, key=f"fact{i}", value="a rather long value " * 8, actor=actor)
        note_store(
            subject=subject,
            content=f"Lisbon memory {i}: " + "words about Lisbon trams " * 60,
            actor=actor,
            config=config,
        )

    context = context_build(subject=subject, message="Lisbon trams", config=config, k=3)

    for block in [context.stable_prefix, *context.sections]:
        assert block.tokens <= block.cap, block.name
    assert context.sections[1].tokens > 0


def test_a_retrieval_event_records_each_build(filled, config):
    context = context_build(subject=filled, message="restaurant", config=config)

    event = RetrievalEvent.objects.get(pk=context.retrieval_event_id)
    assert event.query == "restaurant"
    assert event.tokens["total"] == context.tokens()["total"]
    assert [i["id"] for i in event.items] == [i.id for i in context.items]


def test_building_counts_a_recall_of_each_recalled_note(filled, config):
    context = context_build(subject=filled, message="cat vacuum", config=config)

    recalled = [int(i.id[2:]) for i in context.items if i.section == "recalled"]
    assert recalled
    assert all(n.recall_count == 1 and n.last_recalled_at for n in Note.objects.filter(pk__in=recalled))


def test_blocks_the_conversation_already_received_are_marked_unchanged(filled, config, actor):
    conversation, _ = conversation_get_or_create(subject=filled, external_id="c", actor=actor)
    first = context_build(subject=filled, message="restaurant", config=config, conversation=conversation)
    second = context_build(subject=filled, message="restaurant", config=config, conversation=conversation)
    third = context_build(subject=filled, message="cat", config=config, conversation=conversation)

    assert not any(b.unchanged for b in first.sections)
    assert second.as_dict()["unchanged"] is True and second.as_dict()["tail"] == ""
    assert third.stable_prefix.unchanged is True
    assert third.sections[1].unchanged is False and "Miso" in third.as_dict()["tail"]


def test_notes_in_another_scope_stay_out_of_the_context(subject, actor, config):
    work, _ = conversation_get_or_create(subject=subject, external_id="w", scope="work", actor=actor)
    home, _ = conversation_get_or_create(subject=subject, external_id="h", scope="home", actor=actor)
    note_store(
        subject=subject,
        content="quarterly budget review in Lisbon",
        conversation=work,
        actor=actor,
        config=config,
    )

    in_home = context_build(subject=subject, message="Lisbon budget", config=config, conversation=home)
    in_work = context_build(subject=subject, message="Lisbon budget", config=config, conversation=work)

    assert "budget" not in in_home.as_dict(full=True)["tail"]
    assert "budget" in in_work.as_dict(full=True)["tail"]


def test_notes_disabled_turns_the_context_off_without_touching_the_database(
    filled, config, django_assert_num_queries
):
    off = config.with_overrides({"notes": {"enabled": False}})

    with django_assert_num_queries(0):
        context = context_build(subject=filled, message="restaurant", config=off)

    assert context.as_dict()["tail"] == "" and context.as_dict()["enabled"] is False
    assert not RetrievalEvent.objects.exists()


def test_the_token_estimate_is_a_quarter_of_the_characters():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    cut = truncate_to_tokens("word " * 100, 10)
    assert estimate_tokens(cut) <= 10 and cut.endswith("…")


def test_lessons_and_procedures_render_in_their_own_sections_under_their_caps(subject, actor, config):
    from memory.models import Lesson, Procedure

    lesson = Lesson.objects.create(subject=subject, text="Deploys are safest on Tuesday mornings.")
    procedure = Procedure.objects.create(
        subject=subject,
        title="Deploy the api",
        steps=["Run the test suite.", "Tag the release.", "Run make deploy."],
    )
    Lesson.objects.create(subject=subject, text="Sourdough needs a warm kitchen.")

    context = context_build(subject=subject, message="how should I deploy the api on Tuesday?", config=config)

    data = context.as_dict()
    names = [b["name"] for b in data["blocks"]]
    assert names[-7:] == [
        "lessons",
        "procedures",
        "contract",
        "state",
        "consequences",
        "topics",
        "transcript",
    ]
    assert f"[l:{lesson.pk}]" in data["tail"] and f"[p:{procedure.pk}]" in data["tail"]
    assert "  2. Tag the release." in data["tail"]
    assert "Sourdough" not in data["tail"]
    assert (
        data["tail"].index("### recalled" if "### recalled" in data["tail"] else "### lessons")
        <= data["tail"].index("### lessons")
        < data["tail"].index("### procedures")
    )
    assert all(b["tokens"] <= b["cap"] for b in data["blocks"])
    assert {i["kind"] for i in data["items"]} >= {"lesson", "procedure"}


def test_votes_reach_lessons_and_procedures(client, subject):
    from memory.models import Lesson

    lesson = Lesson.objects.create(subject=subject, text="Deploys are safest on Tuesday mornings.")

    response = client.post(
        "/api/v1/subjects/alice/votes", {"item": f"l:{lesson.pk}", "signal": "up"}, format="json"
    )

    lesson.refresh_from_db()
    assert response.status_code == 201 and lesson.vote_score == 1.0


def test_votes_move_a_lesson_up_in_its_section(subject, actor, config):
    from memory.models import Lesson
    from memory.services import vote_cast

    plain = Lesson.objects.create(subject=subject, text="Deploy the api on Tuesday mornings after review.")
    loved = Lesson.objects.create(subject=subject, text="Deploy the api behind a feature flag on Tuesday.")
    one = config.with_overrides({"lessons": {"k": 1}})
    for _ in range(5):
        vote_cast(
            subject=subject, item_kind="lesson", item_id=loved.pk, signal="up", actor=actor, config=config
        )
    vote_cast(
        subject=subject, item_kind="lesson", item_id=plain.pk, signal="down", actor=actor, config=config
    )

    context = context_build(subject=subject, message="deploy the api on Tuesday", config=one)

    assert [i.id for i in context.items if i.kind == "lesson"] == [f"l:{loved.pk}"]


PLACES = ["Belém", "Graça", "Alfama", "Estrela", "Campo de Ourique", "Baixa", "Chiado", "Lapa"]
PLACES += ["Prazeres", "Martim Moniz", "Cais do Sodré", "Santos", "Ajuda", "Benfica", "Restelo"]


@pytest.fixture
def many_notes(subject, actor, config):
    for i, place in enumerate(PLACES):
        note_store(
            subject=subject, content=f"Tram {i + 10} takes Alice to {place}", actor=actor, config=config
        )
    return subject


def _block(data, name):
    return next(b for b in data["blocks"] if b["name"] == name)


def test_a_section_that_cannot_show_every_match_says_how_many_it_left_out(many_notes, config):
    small = config.with_overrides({"index": {"limit": 4}})

    data = context_build(subject=many_notes, message="which tram goes where", config=small, k=2).as_dict()

    index = _block(data, "memory-index")
    shown = [i for i in data["items"] if i["section"] in ("recalled", "memory-index")]
    assert len(shown) == 6
    assert index["omitted"] == len(PLACES) - 6 == 9
    assert index["text"].endswith("\n(9 more notes not shown)")
    assert "(9 more notes not shown)" in data["tail"]
    assert _block(data, "recalled")["omitted"] == 0 and "not shown" not in _block(data, "recalled")["text"]
    assert index["tokens"] <= index["cap"]


def test_the_line_saying_what_was_left_out_fits_under_the_cap(many_notes, config):
    # room for the heading and a few pointers: the line takes the place of the last one
    tight = config.with_overrides({"index": {"maxTokens": 40}})

    data = context_build(subject=many_notes, message="which tram goes where", config=tight, k=1).as_dict()

    index = _block(data, "memory-index")
    lines = index["text"].splitlines()
    pointers = [line for line in lines if line.startswith("- n:")]
    assert index["tokens"] <= 40
    assert lines[-1] == f"({index['omitted']} more notes not shown)"
    assert index["omitted"] == len(PLACES) - 1 - len(pointers)
    assert len([i for i in data["items"] if i["section"] == "memory-index"]) == len(pointers)


def test_facts_that_do_not_fit_the_profile_are_counted_as_left_out(subject, actor, config):
    for i in range(6):
        fact_set(subject=subject, key=f"fact{i}", value="a rather long value " * 4, actor=actor)
    small = config.with_overrides({"profile": {"maxTokens": 80}})

    data = context_build(subject=subject, message="hello", config=small).as_dict()

    profile = _block(data, "profile")
    placed = [i for i in data["items"] if i["section"] == "profile"]
    assert profile["omitted"] == 6 - len(placed) > 0
    noun = "fact" if profile["omitted"] == 1 else "facts"
    assert profile["text"].endswith(f"({profile['omitted']} more {noun} not shown)")


def test_when_everything_fits_no_section_says_anything_was_left_out(filled, config):
    data = context_build(subject=filled, message="restaurant in Lisbon", config=config).as_dict()

    assert [b["omitted"] for b in data["blocks"]] == [0] * len(data["blocks"])
    assert "not shown" not in data["tail"]


def test_the_api_reports_what_each_block_left_out(client, many_notes):
    response = client.post(
        "/api/v1/context", {"subject": "alice", "message": "which tram goes where", "k": 2}, format="json"
    )

    data = response.json()
    blocks = {b["name"]: b for b in data["blocks"]}
    assert response.status_code == 200
    # 2 recalled in full and 12 pointers (index.limit) of the 15 notes
    assert {name: b["omitted"] for name, b in blocks.items()} == {
        "stable_prefix": 0,
        "profile": 0,
        "recalled": 0,
        "memory-index": 1,
        "lessons": 0,
        "procedures": 0,
        "contract": 0,
        "state": 0,
        "consequences": 0,
        "topics": 0,
        "transcript": 0,
    }
    assert data["tail"].endswith("(1 more note not shown)")
