"""The note link graph: typed edges written after a note is stored, BFS expansion at recall."""

import pytest
from django.utils import timezone

from memory.config import get_config
from memory.context import context_build
from memory.links import expand
from memory.models import NoteLink
from memory.services import note_store
from memory.services.conversations import conversation_get_or_create
from memory.services.links import note_link
from memory.tasks import note_link_task
from memoryweb.errors import ConfigError
from memoryweb.models import Counter
from tests.factories import AppFactory, NoteFactory, SubjectFactory

pytestmark = pytest.mark.postgres


def note(subject, content, tags=(), **kwargs):
    return NoteFactory(subject=subject, content=content, tags=list(tags), **kwargs)


def edges():
    return set(NoteLink.objects.values_list("src_id", "dst_id", "kind"))


def tasks_started(callbacks) -> list:
    """The on-commit callbacks that start a task; the others announce the change to open
    dashboard pages (memoryweb.live)."""
    return [callback for callback in callbacks if callback.__module__ != "memoryweb.live"]


def link(src, dst, kind="related", weight=0.5):
    return NoteLink.objects.create(src=src, dst=dst, kind=kind, weight=weight)


def with_links(config, **links):
    return config.with_overrides({"links": links})


# --- linking ---------------------------------------------------------------------------------


def test_linking_writes_weighted_edges_to_the_nearest_neighbours_only(subject, config):
    restaurant = note(subject, "Alice's favourite restaurant is Taberna do Mar in Lisbon")
    seafood = note(subject, "Alice ate at a seafood restaurant in Lisbon")
    cat = note(subject, "Alice's cat Miso hates the vacuum cleaner")
    new = note(subject, "Alice had sushi with Bob at a Lisbon restaurant in May")

    stats = note_link(note_id=new.pk, config=config)

    links = list(NoteLink.objects.order_by("dst_id"))
    assert stats == {"note": new.pk, "neighbours": 2, "linked": 2, "source": "heuristic"}
    assert {(link.src_id, link.dst_id) for link in links} == {(new.pk, restaurant.pk), (new.pk, seafood.pk)}
    assert all(link.origin == "task" and 0.2 <= link.weight <= 1.0 for link in links)
    # 0.7 · Jaccard({alice, favourite, restaurant, taberna, mar, lisbon}, {alice, sushi, bob,
    # lisbon, restaurant, may}) = 0.7 · 3/9, no tags
    assert links[0].weight == pytest.approx(0.7 * 3 / 9, abs=1e-4)
    assert not NoteLink.objects.filter(dst=cat).exists()


def neighbours_of(new):
    return {src if dst == new.pk else dst for src, dst, _ in edges()}


def test_linking_keeps_the_best_neighbours_above_the_minimum_similarity(subject, config):
    near = note(subject, "Lisbon tram 28 runs through Alfama and Graca every ten minutes")
    nearer = note(subject, "Lisbon tram 28 runs through Alfama and Graca at night")
    note(subject, "Lisbon has many hills")  # shares one word of eight: 0.7 · 1/8 < 0.2
    new = note(subject, "Lisbon tram 28 runs through Alfama and Graca")

    note_link(note_id=new.pk, config=config)
    assert neighbours_of(new) == {near.pk, nearer.pk}

    NoteLink.objects.all().delete()
    note_link(note_id=new.pk, config=with_links(config, neighbours=1))
    assert neighbours_of(new) == {nearer.pk}

    NoteLink.objects.all().delete()
    note_link(note_id=new.pk, config=with_links(config, minSimilarity=0.9))
    assert edges() == set()


def test_linking_never_crosses_subjects(subject, config):
    other = SubjectFactory(app=subject.app, external_id="bob")
    theirs = note(other, "Alice had sushi with Bob at a Lisbon restaurant in June")
    other_app_subject = SubjectFactory(app=AppFactory(), external_id="alice")
    note(other_app_subject, "Alice had sushi with Bob at a Lisbon restaurant in June")
    new = note(subject, "Alice had sushi with Bob at a Lisbon restaurant in May")

    stats = note_link(note_id=new.pk, config=config)

    assert stats["neighbours"] == 0 and edges() == set()
    note_link(note_id=theirs.pk, config=get_config(other.app))
    assert edges() == set()


def test_linking_twice_writes_each_edge_once(subject, config):
    note(subject, "Alice's favourite restaurant is Taberna do Mar in Lisbon")
    new = note(subject, "Alice had sushi with Bob at a Lisbon restaurant in May")
    note_link(note_id=new.pk, config=config)
    first = edges()

    again = note_link(note_id=new.pk, config=config)

    assert again["linked"] == 0 and edges() == first and len(first) == 1


def test_a_pair_linked_either_way_is_left_alone(subject, config):
    old = note(subject, "Alice's favourite restaurant is Taberna do Mar in Lisbon")
    new = note(subject, "Alice had sushi with Bob at a Lisbon restaurant in May")
    link(old, new, kind="elaborates", weight=1.0)  # by hand, from the dashboard say

    note_link(note_id=new.pk, config=config)
    note_link(note_id=old.pk, config=config)

    assert edges() == {(old.pk, new.pk, "elaborates")}


def test_archived_notes_are_never_linked(subject, config):
    archived = note(subject, "Alice's favourite restaurant is Taberna do Mar in Lisbon")
    archived.archived_at = timezone.now()
    archived.save(update_fields=["archived_at"])
    new = note(subject, "Alice had sushi with Bob at a Lisbon restaurant in May")

    assert note_link(note_id=new.pk, config=config)["neighbours"] == 0
    assert note_link(note_id=archived.pk, config=config) == {"note": archived.pk, "skipped": "archived"}
    assert edges() == set()


def test_linking_a_forgotten_note_is_a_no_op(db):
    assert note_link(note_id=999_999) == {"note": 999_999, "skipped": "no such note"}


def test_linking_is_skipped_when_links_are_disabled_for_the_app(db):
    app = AppFactory(config={"memory": {"links": {"enabled": False}}})
    subject = SubjectFactory(app=app)
    note(subject, "Alice's favourite restaurant is Taberna do Mar in Lisbon")
    new = note(subject, "Alice had sushi with Bob at a Lisbon restaurant in May")

    assert note_link(note_id=new.pk) == {"note": new.pk, "skipped": "links disabled"}
    assert edges() == set()


@pytest.mark.parametrize(
    ("old_text", "new_text", "tags", "kind", "new_is_source"),
    [
        (
            "Lisbon trip: flights booked with TAP for March",
            "Lisbon trip: hotel booked near Alfama for March",
            ["lisbon-trip"],
            "same_topic",
            True,
        ),
        (
            "Alice adopted a cat named Miso",
            "Alice adopted a cat named Miso from the Lisbon shelter in 2021, a grey tabby",
            [],
            "elaborates",
            True,
        ),
        (
            "Alice adopted a cat named Miso from the Lisbon shelter in 2021, a grey tabby",
            "Alice adopted a cat named Miso",
            [],
            "elaborates",
            False,
        ),
        (
            "Alice works at Acme as a data engineer",
            "Alice no longer works at Acme as a data engineer, she moved to Globex",
            [],
            "contradicts",
            True,
        ),
        (
            "Alice is vegetarian and eats fish only at Christmas",
            "Actually Alice is vegetarian and eats no fish at all",
            [],
            "contradicts",
            True,
        ),
        (
            "The Lisbon flight was cancelled on Friday",
            "The storm caused the Lisbon flight to be cancelled",
            [],
            "causes",
            True,
        ),
        (
            "The deploy failed because the database migration timed out",
            "The deploy failed on Tuesday",
            [],
            "causes",
            False,
        ),
        (
            "Alice's favourite restaurant is Taberna do Mar in Lisbon",
            "Alice had sushi with Bob at a Lisbon restaurant in May",
            [],
            "related",
            True,
        ),
    ],
)
def test_the_heuristic_types_each_edge(subject, config, old_text, new_text, tags, kind, new_is_source):
    old = note(subject, old_text, tags)
    new = note(subject, new_text, tags)

    note_link(note_id=new.pk, config=config)

    expected = (new.pk, old.pk, kind) if new_is_source else (old.pk, new.pk, kind)
    assert edges() == {expected}


def test_storing_a_note_links_it_after_commit(subject, actor, config, django_capture_on_commit_callbacks):
    from memoryweb.celery import app as celery_app

    old, _ = note_store(
        subject=subject,
        content="Alice's favourite restaurant is Taberna do Mar in Lisbon",
        actor=actor,
        config=config,
    )
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            new, _ = note_store(
                subject=subject,
                content="Alice had sushi with Bob at a Lisbon restaurant in May",
                actor=actor,
                config=config,
            )
    finally:
        celery_app.conf.task_always_eager = previous

    assert len(tasks_started(callbacks)) == 1
    assert edges() == {(new.pk, old.pk, "related")}
    assert Counter.objects.get(name="links.written").value == 1


def test_storing_a_note_starts_no_link_task_when_links_are_disabled(
    subject, actor, config, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        note_store(
            subject=subject,
            content="Alice had sushi with Bob at a Lisbon restaurant in May",
            actor=actor,
            config=with_links(config, enabled=False),
        )

    assert tasks_started(callbacks) == []


def test_a_merged_duplicate_starts_no_link_task(subject, actor, config, django_capture_on_commit_callbacks):
    text = "Alice had sushi with Bob at a Lisbon restaurant in May"
    note_store(subject=subject, content=text, actor=actor, config=config)

    with django_capture_on_commit_callbacks() as callbacks:
        _, created = note_store(subject=subject, content=text, actor=actor, config=config)

    assert created is False and tasks_started(callbacks) == []


# --- the LLM typer ----------------------------------------------------------------------------


def llm_config(config):
    return config.with_overrides({"llm": {"consolidation": "openai/gpt-4o-mini"}})


def test_the_link_typing_prompt_renders_and_its_example_matches_its_strict_schema():
    from memoryweb.llm import prompt_schema, render_prompt, template_variables
    from memoryweb.llm.parsing import extract_json, schema_problem, strict_compatible

    assert template_variables("link_typing") == {"note", "candidates"}
    text = render_prompt("link_typing", {"note": "<<note>>", "candidates": "<<candidates>>"})
    example = extract_json(text[text.rindex("link_typing.schema.json") :])

    assert "<<note>>" in text and "<<candidates>>" in text and "$" not in text
    assert example is not None and schema_problem(example, prompt_schema("link_typing")) is None
    assert strict_compatible(prompt_schema("link_typing"))


def test_the_model_types_the_candidate_pairs(subject, config, openai_wire):
    flight = note(subject, "The Lisbon flight was cancelled on Friday", ["lisbon-trip"])
    hotel = note(subject, "Alice paid for the Lisbon hotel on Friday", ["lisbon-trip"])
    new = note(subject, "A storm hit Lisbon on Friday and grounded every flight", ["lisbon-trip"])
    openai_wire.answer_json(
        {
            "links": [
                {"id": flight.pk, "kind": "causes", "direction": "new_to_candidate"},
                {"id": hotel.pk, "kind": "none", "direction": "new_to_candidate"},
                {"id": 999_999, "kind": "related", "direction": "new_to_candidate"},
            ]
        }
    )

    stats = note_link(note_id=new.pk, config=llm_config(config))

    assert stats["source"] == "llm"
    assert edges() == {(new.pk, flight.pk, "causes")}
    prompt = openai_wire.requests[0]["messages"][-1]["content"]
    assert f"[{new.pk}]" in prompt.split("<notes>")[1]
    assert f"[{flight.pk}]" in prompt.split("<notes>")[2] and f"[{hotel.pk}]" in prompt.split("<notes>")[2]


def test_the_model_can_point_an_edge_at_the_new_note(subject, config, openai_wire):
    old = note(subject, "Alice works at Acme as a data engineer")
    new = note(subject, "Alice works at Acme as a data engineer on the billing team")
    openai_wire.answer_json(
        {"links": [{"id": old.pk, "kind": "contradicts", "direction": "candidate_to_new"}]}
    )

    note_link(note_id=new.pk, config=llm_config(config))

    assert edges() == {(old.pk, new.pk, "contradicts")}


def test_pairs_the_model_leaves_out_get_the_heuristic_type(subject, config, openai_wire):
    old = note(subject, "Alice adopted a cat named Miso")
    new = note(subject, "Alice adopted a cat named Miso from the Lisbon shelter in 2021")
    openai_wire.answer_json({"links": []})

    note_link(note_id=new.pk, config=llm_config(config))

    assert edges() == {(new.pk, old.pk, "elaborates")}


def test_an_unusable_answer_falls_back_to_the_heuristic(subject, config, openai_wire):
    old = note(subject, "Alice works at Acme as a data engineer")
    new = note(subject, "Alice no longer works at Acme, she moved to Globex as a data engineer")
    openai_wire.answer_text('{"links": [{"id": ')

    stats = note_link(note_id=new.pk, config=llm_config(config))

    assert stats["source"] == "llm-fallback"
    assert edges() == {(new.pk, old.pk, "contradicts")}
    assert Counter.objects.filter(name__startswith="llm.fallback.consolidation.").exists()


def test_the_model_is_not_asked_when_llm_typing_is_off(subject, config, openai_wire):
    note(subject, "Alice's favourite restaurant is Taberna do Mar in Lisbon")
    new = note(subject, "Alice had sushi with Bob at a Lisbon restaurant in May")

    stats = note_link(note_id=new.pk, config=with_links(llm_config(config), llmTyping=False))

    assert stats["source"] == "heuristic" and stats["linked"] == 1
    assert openai_wire.requests == []


# --- expansion --------------------------------------------------------------------------------


@pytest.fixture
def chain(subject):
    """tram —0.8— cat —0.5— bakery; only the tram note matches "Lisbon tram"."""
    tram = note(subject, "Lisbon tram 28 goes through Alfama")
    cat = note(subject, "Alice's cat Miso hates the vacuum cleaner")
    bakery = note(subject, "The Porto bakery opens at seven")
    link(tram, cat, "same_topic", 0.8)
    link(bakery, cat, "related", 0.5)  # pointing in: BFS follows edges both ways
    return tram, cat, bakery


def note_items(context):
    return {item["id"]: item for item in context.as_dict()["items"] if item["kind"] == "note"}


def test_recall_expands_the_selected_notes_one_hop_by_default(subject, config, chain):
    tram, cat, bakery = chain

    items = note_items(context_build(subject=subject, message="Lisbon tram", config=config))

    assert set(items) == {f"n:{tram.pk}", f"n:{cat.pk}"}
    assert items[f"n:{tram.pk}"]["expanded"] is False
    linked = items[f"n:{cat.pk}"]
    assert linked["expanded"] is True
    assert linked["reason"] == f"linked (same_topic) from n:{tram.pk}"
    # the ranker's score (the item's retrieval, ÷ the best) carries the link's factor and weight
    retrieval = {pk: item["applicability"]["retrieval"] for pk, item in items.items()}
    assert retrieval[f"n:{cat.pk}"] == pytest.approx(retrieval[f"n:{tram.pk}"] * 0.5 * 0.8, abs=1e-3)


def test_recall_follows_two_hops_at_depth_two(subject, config, chain):
    tram, cat, bakery = chain

    context = context_build(
        subject=subject, message="Lisbon tram", config=with_links(config, expansionDepth=2)
    )

    items = note_items(context)
    assert items[f"n:{bakery.pk}"]["expanded"] is True
    assert items[f"n:{bakery.pk}"]["reason"] == f"linked (related) from n:{cat.pk}"
    assert items[f"n:{bakery.pk}"]["applicability"]["retrieval"] == pytest.approx(
        items[f"n:{cat.pk}"]["applicability"]["retrieval"] * 0.5 * 0.5, abs=1e-3
    )
    assert "Porto bakery" in context.as_dict()["tail"]


def test_recall_does_not_expand_when_links_are_off(subject, config, chain):
    for off in (with_links(config, enabled=False), with_links(config, expansionDepth=0)):
        items = note_items(context_build(subject=subject, message="Lisbon tram", config=off))

        assert list(items) == [f"n:{chain[0].pk}"]


def test_at_most_max_expanded_notes_are_added_strongest_edges_first(subject, config):
    tram = note(subject, "Lisbon tram 28 goes through Alfama")
    neighbours = [note(subject, f"Unrelated memory number {i} about gardening") for i in range(5)]
    for i, other in enumerate(neighbours):
        link(tram, other, weight=0.1 * (i + 1))

    items = note_items(
        context_build(subject=subject, message="Lisbon tram", config=with_links(config, maxExpanded=2))
    )

    expanded = {item_id for item_id, item in items.items() if item["expanded"]}
    assert expanded == {f"n:{neighbours[4].pk}", f"n:{neighbours[3].pk}"}


def test_archived_neighbours_are_never_expanded_nor_walked_through(subject, config, chain):
    tram, cat, bakery = chain
    cat.archived_at = timezone.now()
    cat.save(update_fields=["archived_at"])

    context = context_build(
        subject=subject, message="Lisbon tram", config=with_links(config, expansionDepth=2)
    )

    assert list(note_items(context)) == [f"n:{tram.pk}"]


def test_an_expanded_note_takes_a_free_recalled_slot_but_never_a_direct_hit_s(subject, config):
    trams = [note(subject, f"Lisbon tram {n} goes through Alfama") for n in (12, 15, 28)]
    cat = note(subject, "Alice's cat Miso hates the vacuum cleaner")
    link(trams[0], cat, weight=1.0)

    full = note_items(context_build(subject=subject, message="Lisbon tram", config=config, k=3))
    roomy = note_items(context_build(subject=subject, message="Lisbon tram", config=config, k=4))

    assert all(full[f"n:{t.pk}"]["section"] == "recalled" for t in trams)
    assert full[f"n:{cat.pk}"]["section"] == "memory-index" and full[f"n:{cat.pk}"]["expanded"]
    assert roomy[f"n:{cat.pk}"]["section"] == "recalled" and roomy[f"n:{cat.pk}"]["expanded"]


def test_a_note_that_matches_on_its_own_is_not_marked_expanded(subject, config):
    tram = note(subject, "Lisbon tram 28 goes through Alfama")
    other = note(subject, "Lisbon tram 15 goes to Belem")
    link(tram, other, weight=1.0)

    items = note_items(context_build(subject=subject, message="Lisbon tram", config=config))

    assert not any(item["expanded"] for item in items.values())


def test_expansion_keeps_to_the_conversation_s_scopes(subject, actor, config):
    conversation, _ = conversation_get_or_create(subject=subject, external_id="c", scope="home", actor=actor)
    tram = note(subject, "Lisbon tram 28 goes through Alfama")
    work = note(subject, "Quarterly report is due on Friday", scope="work")
    home = note(subject, "Alice's cat Miso hates the vacuum cleaner", scope="home")
    link(tram, work, weight=0.9)
    link(tram, home, weight=0.8)

    items = note_items(
        context_build(subject=subject, message="Lisbon tram", config=config, conversation=conversation)
    )

    assert set(items) == {f"n:{tram.pk}", f"n:{home.pk}"}


def test_expansion_is_recorded_in_the_retrieval_event(subject, config, chain):
    from memory.models import RetrievalEvent

    tram, cat, _ = chain

    context = context_build(subject=subject, message="Lisbon tram", config=config)

    event = RetrievalEvent.objects.get(pk=context.retrieval_event_id)
    assert {i["id"]: i["expanded"] for i in event.items if i["kind"] == "note"} == {
        f"n:{tram.pk}": False,
        f"n:{cat.pk}": True,
    }


def test_expand_walks_edges_both_ways_breadth_first(subject, chain):
    tram, cat, bakery = chain

    one = expand([tram.pk], 1, 10)
    two = expand([tram.pk], 2, 10)
    capped = expand([tram.pk], 2, 1)

    assert one == [(cat.pk, tram.pk, "same_topic", 0.8)]
    assert two == [(cat.pk, tram.pk, "same_topic", 0.8), (bakery.pk, cat.pk, "related", 0.5)]
    assert capped == one
    assert expand([bakery.pk], 2, 10) == [
        (cat.pk, bakery.pk, "related", 0.5),
        (tram.pk, cat.pk, "same_topic", 0.8),
    ]
    assert expand([tram.pk], 0, 10) == [] and expand([], 2, 10) == []


def test_expand_reaches_each_note_once_from_its_first_seed(subject):
    a, b = note(subject, "first seed"), note(subject, "second seed")
    shared = note(subject, "shared neighbour")
    link(a, shared, weight=0.2)
    link(b, shared, weight=0.9)

    assert expand([a.pk, b.pk], 1, 10) == [(shared.pk, a.pk, "related", 0.2)]


def test_expand_keeps_to_the_subject(subject):
    mine = note(subject, "mine")
    theirs = note(SubjectFactory(app=subject.app), "theirs")
    link(mine, theirs)

    assert expand([mine.pk], 1, 10, subject_id=subject.pk) == []


# --- configuration ----------------------------------------------------------------------------


def test_the_links_section_has_its_defaults_and_suggests_misspelt_keys(config):
    assert (config["links.expansionDepth"], config["links.maxExpanded"]) == (1, 12)
    assert config["links.enabled"] is True

    with pytest.raises(ConfigError, match="did you mean expansionDepth"):
        config.with_overrides({"links": {"depth": 2}})


def test_a_link_task_links_every_note_of_its_batch_and_still_takes_one_id(subject, actor, config):
    texts = [
        "Alice's favourite restaurant is Taberna do Mar in Lisbon",
        "Alice had sushi with Bob at a Lisbon restaurant in May",
        "Alice ate at a seafood restaurant in Lisbon",
    ]
    notes = [note_store(subject=subject, content=t, actor=actor, config=config)[0] for t in texts]
    assert not NoteLink.objects.exists()  # the test's transaction never commits: no task ran

    result = note_link_task([notes[1].pk, notes[2].pk])
    linked = set(NoteLink.objects.values_list("src_id", flat=True))
    assert result["notes"] == 2 and linked == {notes[1].pk, notes[2].pk}
    assert note_link_task(notes[0].pk)["notes"] == 1  # eager runs, and messages queued before batching
