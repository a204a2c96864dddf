"""Chunking a long message before extraction (chat.reflection.chunking) and reading it chunk by
chunk (chat.reflection.accumulator), on the fixtures in tests/data/chunking/: a pasted hour-long
voice transcript (three speakers, timestamps, bracketed annotations) and an exported chat log."""

import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from chat.reflection.accumulator import ChunkedMessage
from chat.reflection.chunking import message_chunks, speaker_turns
from memory.config import get_config
from memory.services import app_config_set
from memory.tokens import estimate_tokens
from memoryweb.models import Counter

DATA = Path(__file__).resolve().parent.parent / "data" / "chunking"
TRANSCRIPT = (DATA / "voice_transcript.txt").read_text(encoding="utf-8")
CHAT_LOG = (DATA / "chat_log.txt").read_text(encoding="utf-8")
POSTED = datetime(2026, 3, 14, 18, 30, tzinfo=UTC)
TURN_START = re.compile(r"^\[\d{2}:\d{2}(?::\d{2})?\] \w+: ")

pytestmark = pytest.mark.django_db


def configured(app, actor, chunking=None, llm=None):
    memory: dict = {}
    if chunking:
        memory["chunking"] = chunking
    if llm:
        memory["llm"] = llm
    if memory:
        app_config_set(app=app, config={"memory": memory}, actor=actor)
    return get_config(app)


def read(text, config, known_names=()):
    """The operations the heuristic extractor takes from `text` posted as one message."""
    chunking = message_chunks(text, config=config)
    message = SimpleNamespace(pk=1, text=text, role="user", occurred_at=POSTED)
    reader = ChunkedMessage(message, chunking, known_names=known_names)
    for index, chunk in enumerate(chunking.chunks):
        reader.read(index, chunk)
    return chunking, reader, reader.operations()


def facts(ops):
    return [(o.key, o.value) for o in ops if o.op == "SET"]


def long_monologue(sentences=1100):
    """One paragraph of dictation, no line breaks: nothing at level 0 can cut it."""
    pool = [
        "The plan for the garden is to start with the raised beds along the south fence.",
        "Tomatoes go at the back where the sun stays longest in the afternoon.",
        "The compost needs turning every couple of weeks or it starts to smell.",
        "Last year the slugs ate most of the lettuce before anyone noticed.",
        "Copper tape around the beds seemed to help a little with that.",
        "The water butt fills up fast in spring and is empty by July.",
    ]
    return " ".join(pool[i % len(pool)] for i in range(sentences))


# --- level 0 ---------------------------------------------------------------------------------


def test_a_message_under_the_threshold_is_not_chunked(config):
    assert message_chunks("I live in Leeds. " * 100, config=config) is None


def test_chunking_switched_off_leaves_a_long_message_whole(app, actor):
    config = configured(app, actor, chunking={"enabled": False})

    assert message_chunks(TRANSCRIPT, config=config) is None


def test_the_transcript_is_cut_at_its_timestamped_turns_and_every_character_is_kept(config):
    chunking = message_chunks(TRANSCRIPT, config=config)

    assert "".join(c.text for c in chunking.chunks) == TRANSCRIPT
    assert [c.start for c in chunking.chunks[1:]] == [c.end for c in chunking.chunks[:-1]]
    assert len(chunking.chunks) >= 10 and chunking.level == 0 and chunking.fallback == ""
    assert all(TURN_START.match(c.text) for c in chunking.chunks[1:])
    assert all(len(c.text) >= config["chunking.minSegmentChars"] for c in chunking.chunks[:-1])
    # packed up to the threshold, never more than one turn past it
    assert all(len(c.text) <= config["chunking.thresholdChars"] + 1500 for c in chunking.chunks)


def test_the_chat_log_is_cut_at_its_lines_and_each_chunk_knows_its_clock_time(config):
    chunking = message_chunks(CHAT_LOG, config=config)

    assert "".join(c.text for c in chunking.chunks) == CHAT_LOG
    assert len(CHAT_LOG.splitlines()) > 400 and len(chunking.chunks) >= 3
    assert all(TURN_START.match(c.text) for c in chunking.chunks[1:])
    first_stamps = [re.search(r"\[(\d{2}):(\d{2})\]", c.text).groups() for c in chunking.chunks]
    assert [(c.clock.hour, c.clock.minute) for c in chunking.chunks] == [
        (int(h), int(m)) for h, m in first_stamps
    ]
    second = chunking.chunks[1]
    assert second.occurred_at(POSTED) == POSTED.replace(hour=second.clock.hour, minute=second.clock.minute)


def test_elapsed_recording_timestamps_give_no_clock_time(config):
    chunking = message_chunks(TRANSCRIPT, config=config)

    assert {c.clock for c in chunking.chunks} == {None}
    assert chunking.chunks[3].occurred_at(POSTED) is None


def test_a_clock_time_later_than_the_message_was_the_day_before(config):
    text = (
        "\n".join(f"[23:{m:02d}] bob: the deploy went fine, the logs look quiet now" for m in range(59)) * 2
    )
    chunking = message_chunks(text, config=config)

    assert chunking.chunks[0].occurred_at(POSTED) == datetime(2026, 3, 13, 23, 0, tzinfo=UTC)


def test_tiny_turns_are_merged_with_their_neighbours(config):
    text = "".join(f"{'AMY' if i % 2 else 'BEN'}: ok, see you at {i % 12 + 1}.\n" for i in range(400))
    chunking = message_chunks(text, config=config)

    assert "".join(c.text for c in chunking.chunks) == text
    assert all(len(c.text) >= config["chunking.minSegmentChars"] for c in chunking.chunks[:-1])
    assert all(c.text.startswith(("AMY: ", "BEN: ")) for c in chunking.chunks)


def test_headings_rules_clock_times_and_chat_headers_are_boundaries(app, actor):
    config = configured(app, actor, chunking={"thresholdChars": 300, "minSegmentChars": 100})
    body = "The garden needs work before the summer, the beds are a mess and the shed leaks. " * 3
    parts = [
        f"# Saturday notes\n{body}\n",
        f"---\n{body}\n",
        f"***\n{body}\n",
        f"## Later\n{body}\n",
        f"12:34 PM the call with the landlord\n{body}\n",
        f"alice — 10:02\n{body}\n",
        f"[crosstalk] {body}\n",
    ]
    text = "".join(parts)

    chunking = message_chunks(text, config=config)

    assert [c.text for c in chunking.chunks] == parts


def test_without_structure_paragraphs_and_annotations_cut_the_message(app, actor):
    config = configured(app, actor, chunking={"thresholdChars": 300, "minSegmentChars": 100})
    body = "the flat is lovely but the street is loud at night and the bus stop is right outside " * 3
    parts = [f"{body}\n\n", f"{body}\n\n\n", f"(inaudible) {body}\n\n", f"{body}\n"]

    chunking = message_chunks("".join(parts), config=config)

    assert [c.text for c in chunking.chunks] == parts


def test_speaker_turns_read_labels_and_drop_stamps_and_annotations():
    text = (
        "so that was the end of it.\n"
        "[00:12:34] DANA: I live in Leeds [laughs] now.\n"
        "And I like it.\n"
        "Note: this line is no speaker.\n"
        "[10:02] alice: hi all (inaudible)\n"
        "Dr. Reyes: next please\n"
    )

    assert [(t.speaker, t.text) for t in speaker_turns(text)] == [
        (None, "so that was the end of it."),
        ("DANA", "I live in Leeds now.\nAnd I like it.\nNote: this line is no speaker."),
        ("alice", "hi all"),
        ("Dr. Reyes", "next please"),
    ]


# --- the accumulator -------------------------------------------------------------------------


def test_each_fact_of_the_transcript_is_taken_once_from_the_person_who_said_it(config):
    chunking, reader, ops = read(TRANSCRIPT, config)

    assert reader.person == "DANA"
    assert sorted(facts(ops)) == [
        ("allergies", "shellfish"),  # said in two places, one operation
        ("diet", "vegetarian"),
        ("employer", "Northwind Analytics"),
        ("job_title", "data engineer"),
        ("languages.learning", "Portuguese"),
        ("location", "Leeds"),  # Marco lives in Sheffield; he said so before Dana introduced herself
        ("name", "Dana Whitfield"),
        ("pets", "Biscuit (dog)"),  # the beagle is Biscuit
    ]
    assert all(o.message.pk == 1 for o in ops)


def test_the_speaker_introduced_in_the_first_chunk_is_who_i_is_in_a_late_chunk(config):
    chunking, _, ops = read(TRANSCRIPT, config)
    by_key = {o.key: o for o in ops if o.op == "SET"}

    assert by_key["name"].chunk == 0
    assert by_key["languages.learning"].chunk >= 8  # "I started learning Portuguese", said by DANA
    marco = [o for o in ops if o.op == "NOTE" and o.content.startswith("MARCO: I started learning Japanese")]
    assert len(marco) == 1 and marco[0].chunk == by_key["languages.learning"].chunk  # his, not hers


def test_each_note_of_the_transcript_is_taken_once(config):
    _, _, ops = read(TRANSCRIPT, config)
    notes = [o.content for o in ops if o.op == "NOTE"]

    assert len(notes) == len(set(notes))
    assert len([n for n in notes if n.startswith("We decided to book the cabin in Snowdonia")]) == 1
    assert len([n for n in notes if n.startswith("I'm going to run the Leeds half marathon")]) == 1


def test_a_later_chunk_supersedes_a_value_and_a_list_key_gathers_its_items(config):
    filler = (
        "[00:{m:02d}:00] SAM: the weather was grey and the bus was late again, as it always is on Mondays. "
    )
    padding = "".join(filler.format(m=m) + "\n" for m in range(50))
    text = (
        "[00:00:01] SAM: My name is Sam Ortiz. I live in Leeds. I'm allergic to shellfish.\n"
        + padding
        + "[00:55:00] SAM: I live in York now. I'm also allergic to peanuts. I'm allergic to shellfish.\n"
    )

    chunking, _, ops = read(text, config)

    assert len(chunking.chunks) > 1
    assert sorted(facts(ops)) == [
        ("allergies", "shellfish, peanuts"),
        ("location", "York"),
        ("name", "Sam Ortiz"),
    ]


def test_a_later_chunk_taking_back_a_value_drops_the_earlier_set(config):
    filler = (
        "[00:{m:02d}:00] SAM: the weather was grey and the bus was late again, as it always is on Mondays.\n"
    )
    text = (
        "[00:00:01] SAM: My name is Sam Ortiz. I live in Paris.\n"
        + "".join(filler.format(m=m) for m in range(50))
        + "[00:55:00] SAM: I don't live in Paris anymore.\n"
    )

    _, _, ops = read(text, config)

    assert ("location", "Paris") not in facts(ops)
    assert [(o.key, o.value) for o in ops if o.op == "RETRACT"] == [("location", "Paris")]


def test_a_profile_name_tells_which_chat_log_speaker_is_the_person(config):
    _, reader, ops = read(CHAT_LOG, config, known_names=("Alice Moreau",))

    assert reader.person == "alice"
    assert sorted(facts(ops)) == [
        ("allergies", "peanuts"),  # said twice; chen's dairy allergy is his
        ("employer", "Brightline"),
        ("job_title", "product designer"),
    ]


def test_when_nobody_is_known_to_be_the_person_every_speakers_facts_are_kept(config):
    _, reader, ops = read(CHAT_LOG, config)

    assert reader.person is None
    assert ("location", "Glasgow") in facts(ops)  # as the unchunked message would have given it


def test_a_note_without_a_date_is_dated_at_its_chunks_clock_time(config):
    chunking, _, ops = read(CHAT_LOG, config, known_names=("Alice",))
    logo = next(o for o in ops if o.op == "NOTE" and "blue logo" in o.content)

    assert logo.occurred_at == chunking.chunks[logo.chunk].occurred_at(POSTED)
    assert logo.occurred_at.date() == POSTED.date() and logo.occurred_at < POSTED


# --- level 1 ---------------------------------------------------------------------------------


def marked(prompt: str) -> str:
    return prompt.split("<text>\n", 1)[1].rsplit("\n</text>", 1)[0]


def test_a_segment_over_the_token_limit_is_cut_where_the_model_says(app, actor, openai_wire):
    config = configured(app, actor, llm={"chunking": "openai/gpt-4o-mini"})
    text = long_monologue()
    assert estimate_tokens(text) > config["chunking.maxSegmentTokens"]
    openai_wire.answer_json({"cuts": [8]})

    chunking = message_chunks(text, config=config)

    shown = marked(openai_wire.requests[0]["messages"][-1]["content"])
    markers = [int(n) for n in re.findall(r"⟦(\d+)⟧", shown)]
    assert markers == list(range(1, len(markers) + 1)) and len(markers) >= 15
    assert "".join(c.text for c in chunking.chunks) == text
    assert re.sub(r" ⟦\d+⟧ ", "", shown.split(" ⟦8⟧ ")[0]) == chunking.chunks[0].text
    assert [c.level for c in chunking.chunks] == [1, 1]
    assert chunking.stats() == {"chunks": 2, "level": 1, "fallback": ""} and chunking.model_cuts == 1
    assert chunking.chunks[0].text.endswith(".")  # markers sit at sentence ends


@pytest.mark.parametrize(
    "answer, reason",
    [
        ({"cuts": [99]}, "invalid answer: unknown marker"),
        ({"cuts": [9, 4]}, "invalid answer: markers out of order"),
        ({"cuts": [1]}, "invalid answer: a chunk over maxSegmentTokens"),
        ({"cuts": []}, "invalid answer: no cuts"),
        ("the topic changes at marker four, I think", "model failed"),
    ],
)
def test_an_unusable_answer_falls_back_to_size_bounded_cuts_logged_and_counted(
    app, actor, openai_wire, caplog, answer, reason
):
    config = configured(app, actor, llm={"chunking": "openai/gpt-4o-mini"})
    if isinstance(answer, dict):
        openai_wire.answer_json(answer)
    else:
        openai_wire.answer_text(answer)
    text = long_monologue()

    with caplog.at_level(logging.WARNING, logger="chat.reflection.chunking"):
        chunking = message_chunks(text, config=config)

    assert chunking.fallback == reason and chunking.level == 1
    assert "".join(c.text for c in chunking.chunks) == text
    assert all(estimate_tokens(c.text) <= config["chunking.maxSegmentTokens"] for c in chunking.chunks)
    assert len(chunking.chunks) == 2
    assert any(reason in r.getMessage() for r in caplog.records)
    counter = "chunking.fallback." + reason.split(":")[0].replace(" ", "_")
    assert Counter.objects.get(name=counter).value == 1


def test_without_a_chunking_model_the_cuts_are_by_size(config, caplog):
    text = long_monologue(1400)

    with caplog.at_level(logging.WARNING, logger="chat.reflection.chunking"):
        chunking = message_chunks(text, config=config)

    assert chunking.fallback == "no model" and len(chunking.chunks) == 2
    assert all(estimate_tokens(c.text) <= config["chunking.maxSegmentTokens"] for c in chunking.chunks)
    assert Counter.objects.get(name="chunking.fallback.no_model").value == 1
    assert "no model" in caplog.text
