"""Consolidation: clusters of linked notes become lessons and procedures; votes decay.

The LLM path runs over a fake OpenAI on the wire (tests/llm_wire.py). The races and the kill run
real `manage.py consolidate` processes against a file database, with an OpenAI-compatible
server on localhost whose answers wait for the test's go-ahead, so one run is provably mid-way
while the other starts or is killed.
"""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import time_machine
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from consolidation.clusters import Cluster, adjacency, components, find_clusters, majority_tag
from consolidation.distill import SourceNote, distill_heuristic
from consolidation.distill.text import about_the_user, sentences_of
from consolidation.models import DeclinedCluster
from consolidation.schedule import SCHEDULE
from consolidation.services import (
    clusters_find,
    consolidate_all,
    consolidate_now,
    consolidation_run,
    votes_decay,
)
from consolidation.tasks import consolidate_all_task, consolidate_subject_task, votes_decay_task
from memory.leases import lease_acquire
from memory.models import JobRun, JobStatus, Lesson, Note, NoteLink, Procedure, ProcedureVersion, ProfileFact
from memory.search.lexical import lesson_search, procedure_search
from memory.services import app_config_set, subject_delete
from memoryweb.models import Counter, TaskIntent
from tests.factories import FactFactory, NoteFactory, SubjectFactory
from tests.llm_wire import openai_completion

DEPLOY = [
    "The deploy of the billing app failed because the migrations ran after the new code went live.",
    "Always run the migrations before switching traffic when deploying the billing app.",
    "Deploy steps that worked: first I backed up the database, then ran the migrations on staging, "
    "after that switched the traffic and finally watched the error rate for ten minutes.",
    "The staging deploy of the billing app went fine after running the migrations first.",
]
TRAVEL = [
    "Booked a refundable fare to Lisbon because the conference dates might move.",
    "The Porto trip moved twice at short notice; the refundable fare saved us the change fees.",
    "Prefer refundable fares for work trips, the dates change too often.",
]
GARDEN = [
    "Tomatoes on the balcony need water every evening in July.",
    "The balcony tomatoes split after a heavy watering following a dry week.",
    "Basil next to the tomatoes on the balcony keeps the aphids away.",
]


def linked(subject, contents, tags, *, start=None):
    """Notes in a chain of links, one day apart (oldest first)."""
    start = start or datetime(2025, 3, 1, tzinfo=UTC)
    notes = [
        NoteFactory(subject=subject, content=text, tags=list(tags), occurred_at=start + timedelta(days=i))
        for i, text in enumerate(contents)
    ]
    for a, b in zip(notes, notes[1:], strict=False):
        NoteLink.objects.create(src=a, dst=b, kind="related")
    return notes


def run(subject, config, actor):
    result = consolidation_run(subject=subject, config=config, actor=actor, owner="test-worker")
    assert result is not None
    return result


# --- the graph ------------------------------------------------------------------------------


def test_adjacency_is_undirected_and_ignores_edges_to_non_candidates():
    graph = adjacency([1, 2, 3], [(1, 2), (2, 9), (3, 3)])

    assert graph == {1: {2}, 2: {1}, 3: set()}


def test_components_are_found_by_bfs_from_the_best_connected_member():
    graph = adjacency(range(1, 8), [(1, 2), (2, 3), (2, 4), (4, 5), (6, 7)])

    assert components(graph) == [[2, 1, 3, 4, 5], [6, 7]]


def test_the_majority_tag_is_the_one_most_members_carry_ties_alphabetical():
    tags = {1: ["deploy", "work"], 2: ["deploy"], 3: ["work"], 4: ["food"]}

    assert majority_tag([1, 2, 3, 4], tags) in {"deploy", "work"}
    assert majority_tag([1, 2, 3, 4], tags) == "deploy"
    assert majority_tag([4], {4: []}) == ""


def test_a_component_is_trimmed_to_its_majority_tag_and_the_rest_regrouped():
    graph = adjacency(range(1, 9), [(i, i + 1) for i in range(1, 8)])
    tags = {i: ["deploy"] for i in range(1, 5)} | {i: ["garden"] for i in range(5, 9)}
    tags[1] = ["deploy", "garden"]

    clusters = find_clusters(graph, tags, min_size=3, max_size=20, require_shared_tag=True)

    assert [(set(c.note_ids), c.tag) for c in clusters] == [
        ({1, 2, 3, 4, 5, 6, 7, 8} & {i for i in tags if "garden" in tags[i]}, "garden"),
        ({2, 3, 4}, "deploy"),
    ]


def test_components_smaller_than_the_minimum_are_dropped():
    graph = adjacency(range(1, 6), [(1, 2), (3, 4), (4, 5)])
    tags = {i: ["t"] for i in range(1, 6)}

    clusters = find_clusters(graph, tags, min_size=3, max_size=20, require_shared_tag=True)

    assert [c.note_ids for c in clusters] == [(4, 3, 5)]


def test_members_without_the_shared_tag_do_not_count_towards_the_minimum():
    graph = adjacency(range(1, 5), [(1, 2), (2, 3), (3, 4)])
    tags = {1: ["t"], 2: ["t"], 3: ["u"], 4: ["v"]}

    assert find_clusters(graph, tags, min_size=3, max_size=20, require_shared_tag=True) == []
    assert len(find_clusters(graph, tags, min_size=3, max_size=20, require_shared_tag=False)) == 1


def test_a_component_without_any_tag_is_no_cluster_when_a_shared_tag_is_required():
    graph = adjacency(range(1, 4), [(1, 2), (2, 3)])

    assert find_clusters(graph, {}, min_size=3, max_size=20, require_shared_tag=True) == []


def test_a_big_cluster_is_cut_into_pieces_in_bfs_order_and_a_small_rest_waits():
    graph = adjacency(range(1, 12), [(i, i + 1) for i in range(1, 11)])
    tags = {i: ["t"] for i in range(1, 12)}

    clusters = find_clusters(graph, tags, min_size=3, max_size=4, require_shared_tag=True)

    assert [c.note_ids for c in clusters] == [(2, 1, 3, 4), (5, 6, 7, 8), (9, 10, 11)]
    clusters = find_clusters(graph, tags, min_size=4, max_size=4, require_shared_tag=True)
    assert [len(c.note_ids) for c in clusters] == [4, 4]  # the rest of 3 waits for more notes


def test_clusters_come_biggest_first_and_the_signature_ignores_order():
    graph = adjacency(range(1, 9), [(1, 2), (2, 3), (4, 5), (5, 6), (6, 7), (7, 8)])
    tags = {i: ["t"] for i in range(1, 9)}

    clusters = find_clusters(graph, tags, min_size=3, max_size=20, require_shared_tag=True)

    assert [len(c.note_ids) for c in clusters] == [5, 3]
    assert Cluster((3, 1, 2), "t").signature == Cluster((1, 2, 3), "x").signature


# --- heuristic distillation -------------------------------------------------------------------


def source(contents, tags=("deploy",)):
    start = datetime(2025, 3, 1, tzinfo=UTC)
    return [
        SourceNote(i + 1, text, list(tags), start + timedelta(days=30 * i)) for i, text in enumerate(contents)
    ]


def test_a_cluster_about_deploy_steps_gives_a_procedure_with_its_steps_in_order():
    result = distill_heuristic(source(DEPLOY), "deploy")

    assert result.procedure is not None
    assert result.procedure.steps == [
        "Back up the database.",
        "Run the migrations on staging.",
        "Switch the traffic.",
        "Watch the error rate for ten minutes.",
    ]
    assert "deploy" in result.procedure.title.lower()


def test_the_heuristic_lesson_is_a_principle_of_one_to_three_sentences_not_the_notes_pasted():
    result = distill_heuristic(source(DEPLOY), "deploy")

    sentences = sentences_of(result.lesson)
    assert 1 <= len(sentences) <= 3
    assert (
        sentences[0] == "Always run the migrations before switching traffic when deploying the billing app."
    )
    assert "Seen in 4 notes from March to May 2025" in result.lesson
    assert len(result.lesson.split()) <= 60
    assert DEPLOY[2] not in result.lesson and DEPLOY[3] not in result.lesson  # chosen, not pasted
    assert result.source_ids == [1, 2, 3, 4]


def test_a_lesson_is_generalised_with_the_topic_and_restated_about_the_user():
    notes = source(
        [
            "I always book a refundable fare because my plans change.",
            "Plans changed again, the refundable fare paid off.",
            "Booking refundable fares costs a bit more but saved me twice.",
        ],
        tags=("travel",),
    )

    result = distill_heuristic(notes, "travel")

    assert result.lesson.startswith(
        "For travel, the user always books a refundable fare because their plans change."
    )
    assert result.procedure is None


def test_notes_without_steps_give_no_procedure():
    assert distill_heuristic(source(TRAVEL, ("travel",)), "travel").procedure is None


def test_a_numbered_list_gives_the_procedure_steps():
    notes = source(
        [
            "Reset the router:\n1. Unplug the router\n2. Wait thirty seconds\n3. Plug it back in\n4. Check the lights",
            "The router reset fixed the wifi again; wait the full thirty seconds.",
            "Router lights blink orange when the reset was too short.",
        ],
        tags=("home",),
    )

    result = distill_heuristic(notes, "home")

    assert result.procedure.steps == [
        "Unplug the router.",
        "Wait thirty seconds.",
        "Plug it back in.",
        "Check the lights.",
    ]


def test_notes_that_share_no_words_are_declined():
    notes = source(
        ["Bought new running shoes.", "Tomatoes need water daily.", "Quarterly taxes are due soon."]
    )

    assert distill_heuristic(notes, "misc").declined


@pytest.mark.parametrize(
    ("first_person", "about_user"),
    [
        ("I always deploy on Fridays", "the user always deploys on Fridays"),
        ("I'm moving to Porto", "the user is moving to Porto"),
        ("I went to Paris with my sister", "the user went to Paris with their sister"),
        ("I set up the server", "the user set up the server"),
        ("Alice likes tea", "Alice likes tea"),
    ],
)
def test_first_person_notes_are_restated_about_the_user(first_person, about_user):
    assert about_the_user(first_person) == about_user


# --- the consolidation run ------------------------------------------------------------------


@pytest.mark.postgres
def test_a_linked_cluster_becomes_a_lesson_and_a_procedure_and_its_notes_are_archived(subject, config, actor):
    notes = linked(subject, DEPLOY, ["deploy", "tech"])

    job = run(subject, config, actor)

    lesson = Lesson.objects.get()
    assert job.status == JobStatus.DONE
    assert job.stats["lessons"] == 1 and job.stats["procedures"] == 1 and job.stats["notes_archived"] == 4
    assert job.stats["lesson_ids"] == [lesson.pk]
    assert 1 <= len(sentences_of(lesson.text)) <= 3
    assert lesson.tags == ["deploy", "tech"]
    assert lesson.distiller == "heuristic"
    assert list(lesson.versions.values_list("version", "text")) == [(1, lesson.text)]
    procedure = Procedure.objects.get()
    assert procedure.lesson == lesson and len(procedure.steps) == 4
    assert ProcedureVersion.objects.get(procedure=procedure).steps == procedure.steps
    for note in notes:
        note.refresh_from_db()
        assert note.archived_at is not None and note.consolidated_into == lesson
    assert sorted(lesson.consolidated_notes.values_list("pk", flat=True)) == sorted(n.pk for n in notes)


@pytest.mark.postgres
def test_archived_notes_stay_readable_by_id_with_their_content(subject, config, actor):
    notes = linked(subject, TRAVEL, ["travel"])

    run(subject, config, actor)

    stored = Note.objects.get(pk=notes[0].pk)
    assert stored.content == TRAVEL[0]
    assert stored.archived_at is not None
    assert Note.objects.filter(subject=subject, archived_at__isnull=True).count() == 0


@pytest.mark.postgres
def test_with_links_off_consolidation_finds_nothing(subject, config, actor):
    for text in DEPLOY + TRAVEL:
        NoteFactory(subject=subject, content=text, tags=["deploy"])

    job = run(subject, config, actor)

    assert job.stats["candidates"] == 7 and job.stats["links"] == 0 and job.stats["clusters"] == 0
    assert Lesson.objects.count() == 0 and Procedure.objects.count() == 0
    assert Note.objects.filter(archived_at__isnull=False).count() == 0


@pytest.mark.postgres
def test_a_rerun_never_duplicates_a_lesson_and_never_loses_a_note(subject, config, actor):
    linked(subject, DEPLOY, ["deploy"])
    linked(subject, TRAVEL, ["travel"])

    first = run(subject, config, actor)
    second = run(subject, config, actor)

    assert first.stats["lessons"] == 2 and second.stats["lessons"] == 0
    assert Lesson.objects.count() == 2
    assert Note.objects.count() == 7
    assert Note.objects.filter(consolidated_into__isnull=False).count() == 7


def test_at_most_max_clusters_per_tick_are_distilled_and_the_rest_wait(subject, config, actor):
    linked(subject, DEPLOY, ["deploy"])
    linked(subject, TRAVEL, ["travel"])
    linked(subject, GARDEN, ["garden"])
    config = config.with_overrides({"consolidation": {"maxClustersPerTick": 2}})

    first = run(subject, config, actor)
    second = run(subject, config, actor)

    assert first.stats["clusters_found"] == 3 and first.stats["lessons"] == 2
    assert second.stats["clusters_found"] == 1 and second.stats["lessons"] == 1
    assert Lesson.objects.count() == 3


def test_the_biggest_cluster_goes_first(subject, config, actor):
    linked(subject, TRAVEL, ["travel"])
    deploy = linked(subject, DEPLOY, ["deploy"])
    config = config.with_overrides({"consolidation": {"maxClustersPerTick": 1}})

    run(subject, config, actor)

    assert set(Lesson.objects.get().consolidated_notes.values_list("pk", flat=True)) == {n.pk for n in deploy}


def test_a_cluster_smaller_than_min_cluster_size_is_left_alone(subject, config, actor):
    linked(subject, TRAVEL, ["travel"])
    config = config.with_overrides({"consolidation": {"minClusterSize": 4}})

    job = run(subject, config, actor)

    assert job.stats["clusters"] == 0 and Lesson.objects.count() == 0


def test_linked_notes_with_different_tags_are_split_when_a_shared_tag_is_required(subject, config, actor):
    notes = linked(subject, DEPLOY[:2] + TRAVEL[:2], ["x"])
    for note, tags in zip(notes, (["deploy"], ["deploy"], ["travel"], ["travel"]), strict=True):
        Note.objects.filter(pk=note.pk).update(tags=tags)

    assert clusters_find(subject, config=config)[0] == []
    relaxed = config.with_overrides({"consolidation": {"requireSharedTag": False, "minClusterSize": 4}})
    assert [len(c.note_ids) for c in clusters_find(subject, config=relaxed)[0]] == [4]


def test_notes_of_other_subjects_and_archived_notes_are_not_candidates(subject, config, actor, app):
    other = SubjectFactory(app=app)
    linked(other, DEPLOY, ["deploy"])
    archived = linked(subject, TRAVEL, ["travel"])
    Note.objects.filter(pk__in=[n.pk for n in archived]).update(archived_at=timezone.now())

    job = run(subject, config, actor)

    assert job.stats["candidates"] == 0 and Lesson.objects.count() == 0


@pytest.mark.postgres
def test_a_declined_cluster_is_not_offered_again_until_a_note_joins_it(subject, config, actor):
    notes = linked(
        subject, ["Bought new running shoes.", "Tomatoes need water daily.", "Taxes are due."], ["misc"]
    )

    first = run(subject, config, actor)
    second = run(subject, config, actor)
    newcomer = NoteFactory(subject=subject, content="More tomatoes need water and new shoes.", tags=["misc"])
    NoteLink.objects.create(src=notes[-1], dst=newcomer)
    third = run(subject, config, actor)

    assert first.stats["declined"] == 1 and first.stats["clusters"] == 1
    assert second.stats["clusters"] == 0 and second.stats["clusters_declined_before"] == 1
    assert third.stats["clusters"] == 1 and third.stats["lessons"] == 1
    assert DeclinedCluster.objects.count() == 0  # the stale signature is gone
    assert Note.objects.filter(archived_at__isnull=True).count() == 0


def test_a_run_while_another_holds_the_subject_lease_does_nothing(subject, config, actor):
    linked(subject, DEPLOY, ["deploy"])
    lease_acquire(f"consolidate:subject:{subject.pk}", "someone-else")

    assert consolidation_run(subject=subject, config=config, actor=actor, owner="me") is None
    assert Lesson.objects.count() == 0


@pytest.mark.postgres
def test_lessons_and_procedures_are_found_by_full_text_search(subject, config, actor):
    linked(subject, DEPLOY, ["deploy"])

    run(subject, config, actor)

    lesson, procedure = Lesson.objects.get(), Procedure.objects.get()
    assert [h.id for h in lesson_search(subject.pk, ["migrations"], limit=5)] == [lesson.pk]
    assert [h.id for h in procedure_search(subject.pk, ["database"], limit=5)] == [procedure.pk]
    assert lesson_search(subject.pk, ["zebra"], limit=5) == []
    assert lesson_search(SubjectFactory().pk, ["migrations"], limit=5) == []


@pytest.mark.postgres
def test_procedure_steps_in_any_language_are_searchable(subject):
    procedure = Procedure.objects.create(
        subject=subject, title="Morgenroutine", steps=["Kaffee in der Küche kochen.", "Zeitung lesen."]
    )

    assert [h.id for h in procedure_search(subject.pk, ["küche"], limit=5)] == [procedure.pk]


def test_deleting_a_subject_deletes_its_lessons_procedures_and_job_runs(subject, config, actor):
    linked(subject, DEPLOY, ["deploy"])
    run(subject, config, actor)

    subject_delete(subject=subject, actor=actor)

    assert (Lesson.objects.count(), Procedure.objects.count(), Note.objects.count()) == (0, 0, 0)
    assert JobRun.objects.count() == 0


def test_consolidate_now_runs_one_tick_with_the_apps_config(subject, actor):
    linked(subject, DEPLOY, ["deploy"])
    app_config_set(app=subject.app, config={"memory": {"consolidation": {"minClusterSize": 5}}}, actor=actor)
    subject.app.refresh_from_db()

    job = consolidate_now(subject=subject, actor=actor)

    assert job.kind == "consolidate" and job.subject == subject and job.stats["clusters"] == 0


def test_the_periodic_tick_starts_one_task_per_subject_with_links_each_under_its_lease(
    app, eager_tasks, django_capture_on_commit_callbacks
):
    alice, bob, carol = (SubjectFactory(app=app) for _ in range(3))
    linked(alice, DEPLOY, ["deploy"])
    linked(bob, TRAVEL, ["travel"])
    NoteFactory(subject=carol, content="unlinked", tags=["x"])

    with django_capture_on_commit_callbacks(execute=True):
        result = consolidate_all_task()

    task_starts = TaskIntent.objects.filter(task="consolidation.consolidate_subject", sent_at__isnull=False)
    assert result["subjects_started"] == 2
    assert sorted(i.args for i in task_starts) == sorted([[alice.pk], [bob.pk]])
    sweep = JobRun.objects.get(kind="consolidate_all")
    assert sweep.status == JobStatus.DONE and sweep.stats["subjects_started"] == 2
    runs = JobRun.objects.filter(kind="consolidate")
    assert {r.key for r in runs} == {f"consolidate:subject:{alice.pk}", f"consolidate:subject:{bob.pk}"}
    assert all(r.status == JobStatus.DONE and r.stats["lessons"] == 1 for r in runs)
    assert Lesson.objects.filter(subject__in=[alice, bob]).count() == 2


def test_a_tick_while_another_sweep_holds_the_lease_starts_nothing(
    subject, django_capture_on_commit_callbacks
):
    linked(subject, DEPLOY, ["deploy"])
    lease_acquire("consolidate:all", "someone-else")

    with django_capture_on_commit_callbacks() as started:
        assert consolidate_all() is None

    assert started == []


def test_the_subject_task_fetches_by_id_and_a_missing_subject_is_nothing_to_do(subject):
    linked(subject, DEPLOY, ["deploy"])

    result = consolidate_subject_task(subject.pk)

    assert result["lessons"] == 1 and result["status"] == JobStatus.DONE
    assert consolidate_subject_task(999_999) == {"missing": True}


def test_manage_py_consolidate_forces_a_tick_for_one_subject(subject, capsys):
    linked(subject, DEPLOY, ["deploy"])

    call_command("consolidate", "--app", subject.app.name, "--subject", subject.external_id)

    assert "1 lessons, 1 procedures, 4 notes archived" in capsys.readouterr().out
    assert Lesson.objects.filter(subject=subject).count() == 1


def test_the_schedule_runs_consolidation_and_decay_every_six_hours_expiring_just_under():
    jobs = {job.task: job for job in SCHEDULE}

    for task in ("consolidation.consolidate_all", "consolidation.votes_decay"):
        assert jobs[task].every == timedelta(hours=6)
        assert timedelta(hours=5) < timedelta(seconds=jobs[task].expires_seconds) < timedelta(hours=6)


# --- a run killed mid-way -------------------------------------------------------------------


class Killed(BaseException):
    """What a SIGKILL looks like from inside: nothing after it runs, no except clause catches it."""


def llm_config(config):
    return config.with_overrides({"llm": {"consolidation": "openai/gpt-4o-mini"}})


def answer(lesson, steps=None, ids=()):
    procedure = {"title": "Deploy the billing app", "steps": steps} if steps else None
    return {"lesson": lesson, "procedure": procedure, "source_note_ids": list(ids)}


@pytest.mark.postgres
def test_a_run_killed_after_half_the_clusters_is_finished_by_the_rerun_without_duplicates(
    subject, config, actor, openai_wire
):
    clusters = [
        linked(subject, [f"{topic} note {i} shares the word {topic}" for i in range(3)], [topic])
        for topic in ("alpha", "beta", "gamma", "delta")
    ]
    config = llm_config(config)
    for n in range(4):
        openai_wire.answer_json(answer(f"Lesson {n} for the user."))

    def kill_on_third(request):
        if len(openai_wire.requests) == 3:
            raise Killed

    openai_wire.on_request = kill_on_third
    with pytest.raises(Killed):
        consolidation_run(subject=subject, config=config, actor=actor, owner="doomed")

    dead = JobRun.objects.get()
    assert dead.status == JobStatus.RUNNING  # nothing ran after the kill
    assert Lesson.objects.count() == 2
    assert Note.objects.filter(consolidated_into__isnull=False).count() == 6  # whole clusters only
    for lesson in Lesson.objects.all():
        assert lesson.consolidated_notes.count() == 3

    openai_wire.on_request = None
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):  # the dead lease expires
        rerun = consolidation_run(subject=subject, config=config, actor=actor, owner="survivor")

    assert rerun.status == JobStatus.DONE and rerun.stats["lessons"] == 2
    dead.refresh_from_db()
    assert dead.status == JobStatus.ABANDONED
    assert Lesson.objects.count() == 4
    assert Note.objects.count() == 12
    for notes in clusters:
        lessons = {Note.objects.get(pk=n.pk).consolidated_into_id for n in notes}
        assert len(lessons) == 1 and None not in lessons


# --- the LLM distiller ----------------------------------------------------------------------


def test_the_model_distils_the_cluster_from_a_prompt_holding_its_notes(subject, config, actor, openai_wire):
    notes = linked(subject, DEPLOY, ["deploy"])
    openai_wire.answer_json(
        answer(
            "When the user deploys the billing app, run migrations before switching traffic: a deploy "
            "failed when they ran after.",
            ["Back up the database.", "Run the migrations on staging.", "Switch traffic."],
            [n.pk for n in notes],
        )
    )

    job = run(subject, llm_config(config), actor)

    prompt = openai_wire.requests[0]["messages"][-1]["content"]
    assert all(f"[{n.pk}] 2025-03-0{i + 1}: " in prompt for i, n in enumerate(notes))
    assert 'share the topic "deploy"' in prompt
    lesson = Lesson.objects.get()
    assert lesson.text.startswith("When the user deploys the billing app")
    assert lesson.distiller == "openai/gpt-4o-mini"
    assert Procedure.objects.get().steps == [
        "Back up the database.",
        "Run the migrations on staging.",
        "Switch traffic.",
    ]
    assert job.stats["distillers"] == {"openai/gpt-4o-mini": 1}


def test_only_the_notes_the_model_says_the_lesson_rests_on_are_archived(subject, config, actor, openai_wire):
    notes = linked(subject, DEPLOY, ["deploy"])
    openai_wire.answer_json(answer("Run migrations before traffic.", ids=[notes[1].pk, notes[2].pk, 424242]))

    run(subject, llm_config(config), actor)

    lesson = Lesson.objects.get()
    assert sorted(lesson.consolidated_notes.values_list("pk", flat=True)) == [notes[1].pk, notes[2].pk]
    assert Note.objects.filter(archived_at__isnull=True).count() == 2


@pytest.mark.parametrize(
    "reply",
    ["Sure! Here is a lesson about deploys.", '{"lesson": "cut off', json.dumps({"lesson": 3})],
    ids=["prose", "truncated-json", "schema-mismatch"],
)
def test_a_malformed_answer_falls_back_to_the_heuristic_and_is_counted(
    subject, config, actor, openai_wire, reply
):
    linked(subject, DEPLOY, ["deploy"])
    openai_wire.answer_text(reply)

    job = run(subject, llm_config(config), actor)

    lesson = Lesson.objects.get()
    assert lesson.distiller == "heuristic"
    assert lesson.text.startswith("Always run the migrations before switching traffic")
    assert job.stats["llm_fallbacks"] == 1
    assert Counter.objects.filter(name__startswith="llm.fallback.consolidation").exists()


def test_a_model_that_finds_no_principle_declines_the_cluster(subject, config, actor, openai_wire):
    linked(subject, TRAVEL, ["travel"])
    openai_wire.answer_json(answer(None))

    job = run(subject, llm_config(config), actor)
    again = run(subject, llm_config(config), actor)

    assert job.stats["declined"] == 1 and again.stats["clusters"] == 0
    assert len(openai_wire.requests) == 1  # not asked again
    assert Lesson.objects.count() == 0 and Note.objects.filter(archived_at__isnull=True).count() == 3


def test_the_models_procedure_is_held_to_eight_steps_and_scrubbed_of_secrets(
    subject, config, actor, openai_wire
):
    linked(subject, DEPLOY, ["deploy"])
    steps = [f"{i}. Step number {i}" for i in range(1, 12)]
    steps[0] = "Log in with password=hunter2hunter2 to the console"
    openai_wire.answer_json(answer("One. Two. Three. Four sentences is one too many.", steps))

    run(subject, llm_config(config), actor)

    procedure = Procedure.objects.get()
    assert len(procedure.steps) == 8
    assert "hunter2" not in json.dumps(procedure.steps)
    assert procedure.steps[1] == "Step number 2."
    assert sentences_of(Lesson.objects.get().text) == ["One.", "Two.", "Three."]


# --- decay ----------------------------------------------------------------------------------


def scored(subject, score):
    note = NoteFactory(subject=subject, vote_score=score)
    fact = FactFactory(subject=subject, vote_score=score)
    lesson = Lesson.objects.create(subject=subject, text="A lesson.", vote_score=score)
    procedure = Procedure.objects.create(subject=subject, title="T", steps=["a", "b"], vote_score=score)
    return note, fact, lesson, procedure


def scores(items):
    return [type(item).objects.get(pk=item.pk).vote_score for item in items]


@pytest.mark.postgres
def test_decay_multiplies_every_score_by_signal_decay(subject, actor):
    items = scored(subject, 2.0)
    negative = NoteFactory(subject=subject, vote_score=-1.0)

    job = votes_decay(actor=actor)

    assert scores(items) == pytest.approx([1.8] * 4)
    assert Note.objects.get(pk=negative.pk).vote_score == pytest.approx(-0.9)
    assert job.stats["notes"] == 2 and job.stats["facts"] == 1
    assert job.stats["lessons"] == 1 and job.stats["procedures"] == 1


@pytest.mark.postgres
def test_each_app_decays_by_its_own_factor(subject, actor, other_app):
    app_config_set(app=subject.app, config={"memory": {"voting": {"signalDecay": 0.5}}}, actor=actor)
    mine = NoteFactory(subject=subject, vote_score=1.0)
    theirs = NoteFactory(subject=SubjectFactory(app=other_app), vote_score=1.0)

    votes_decay(actor=actor)

    assert Note.objects.get(pk=mine.pk).vote_score == pytest.approx(0.5)
    assert Note.objects.get(pk=theirs.pk).vote_score == pytest.approx(0.9)


def test_a_score_that_decays_to_almost_nothing_becomes_zero(subject, actor):
    note = NoteFactory(subject=subject, vote_score=0.001)

    votes_decay(actor=actor)

    assert Note.objects.get(pk=note.pk).vote_score == 0


def test_a_periodic_decay_delivered_twice_decays_once(subject):
    note = NoteFactory(subject=subject, vote_score=1.0)

    first = votes_decay_task()
    second = votes_decay_task()

    assert "job_run" in first and second == {"skipped": True}
    assert Note.objects.get(pk=note.pk).vote_score == pytest.approx(0.9)
    with time_machine.travel(timezone.now() + timedelta(hours=6)):
        assert "job_run" in votes_decay_task()
    assert Note.objects.get(pk=note.pk).vote_score == pytest.approx(0.81)


def test_decay_for_one_app_leaves_the_others_alone(subject, actor, other_app):
    mine = NoteFactory(subject=subject, vote_score=1.0)
    theirs = NoteFactory(subject=SubjectFactory(app=other_app), vote_score=1.0)

    votes_decay(actor=actor, app=subject.app)

    assert Note.objects.get(pk=mine.pk).vote_score == pytest.approx(0.9)
    assert Note.objects.get(pk=theirs.pk).vote_score == 1.0
    assert ProfileFact.objects.count() == 0


# --- real processes against a file database -------------------------------------------------


class HeldLLM:
    """An OpenAI-compatible server on localhost. From request number `hold_from` on, each
    answer waits until `release` is set; `arrived` is set when the first such request comes."""

    def __init__(self, hold_from: int = 10**9):
        self.hold_from = hold_from
        self.count = 0
        self.lock = threading.Lock()
        self.arrived = threading.Event()
        self.release = threading.Event()
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with llm.lock:
                    llm.count += 1
                    n = llm.count
                if n >= llm.hold_from:
                    llm.arrived.set()
                    llm.release.wait(120)
                body = json.dumps(
                    openai_completion(json.dumps(answer(f"Lesson number {n} for the user.")))
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client was killed

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


SEED = """
import django, sys
django.setup()
from memory.models import App, Note, NoteLink, Subject
app = App.objects.create(name="race")
subject = Subject.objects.create(app=app, external_id="alice")
for topic in sys.argv[1].split(","):
    notes = [Note.objects.create(subject=subject, content=f"{topic} note {i} about {topic}", tags=[topic])
             for i in range(3)]
    for a, b in zip(notes, notes[1:]):
        NoteLink.objects.create(src=a, dst=b)
"""


def _env(var_dir: Path, llm: HeldLLM) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("MEMORY__")}
    for name in (
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "CELERY_TASK_ALWAYS_EAGER",
        "OPENAI_COMPATIBLE_API_KEY",
    ):
        env.pop(name, None)
    env.update(
        MEMORYWEB_VAR_DIR=str(var_dir),
        DJANGO_SETTINGS_MODULE="memoryweb.settings",
        MEMORY__EMBEDDINGS__PROVIDER="none",  # as the suite (tests/conftest.py)
        MEMORY__LLM__CONSOLIDATION="openai-compatible/test-model",
        MEMORY__LLM__BASEURL=llm.url,
        MEMORY__LLM__MAXRETRIES="0",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory):
    var_dir = tmp_path_factory.mktemp("migrated")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | {"MEMORYWEB_VAR_DIR": str(var_dir)}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=settings.BASE_DIR,
        env=env,
        check=True,
        timeout=300,
    )
    return var_dir / "memoryweb.sqlite3"


@pytest.fixture
def var_dir(migrated_db, tmp_path):
    target = tmp_path / "var"
    target.mkdir()
    shutil.copy(migrated_db, target / "memoryweb.sqlite3")
    return target


def seed(var_dir: Path, llm: HeldLLM, topics: list[str]) -> None:
    subprocess.run(
        [sys.executable, "-c", SEED, ",".join(topics)],
        cwd=settings.BASE_DIR,
        env=_env(var_dir, llm),
        check=True,
        timeout=120,
    )


def consolidator(var_dir: Path, llm: HeldLLM) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "consolidate", "--app", "race", "--subject", "alice"],
        cwd=settings.BASE_DIR,
        env=_env(var_dir, llm),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def query(var_dir: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(var_dir / "memoryweb.sqlite3") as db:
        return db.execute(sql).fetchall()


def wait_for_exit(processes, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                return process
        time.sleep(0.05)
    raise AssertionError("no consolidator finished in time")


@pytest.fixture
def held_llm():
    servers = []

    def make(**kwargs):
        servers.append(HeldLLM(**kwargs))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.mark.own_stack
def test_two_consolidators_started_together_one_does_the_work_the_other_skips(var_dir, held_llm):
    llm = held_llm(hold_from=1)  # the winner waits on its first answer until the loser is gone
    seed(var_dir, llm, ["alpha", "beta", "gamma"])

    processes = [consolidator(var_dir, llm), consolidator(var_dir, llm)]
    try:
        loser = wait_for_exit(processes)
        loser_out = loser.communicate(timeout=30)[0]
        llm.release.set()
        winner = next(p for p in processes if p is not loser)
        winner_out = winner.communicate(timeout=120)[0]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()

    assert loser.returncode == 0 and winner.returncode == 0, loser_out + winner_out
    assert "skipped race/alice: another consolidation holds its lease" in loser_out
    assert "done race/alice: 3 clusters → 3 lessons" in winner_out
    assert query(var_dir, "SELECT status FROM memory_jobrun") == [("done",)]
    assert query(var_dir, "SELECT COUNT(*) FROM memory_lesson") == [(3,)]
    assert llm.count == 3


@pytest.mark.own_stack
def test_a_consolidator_killed_mid_run_leaves_whole_clusters_and_the_rerun_finishes_them(var_dir, held_llm):
    llm = held_llm(hold_from=3)  # two clusters are written, the third is in flight
    seed(var_dir, llm, ["alpha", "beta", "gamma", "delta"])

    doomed = consolidator(var_dir, llm)
    try:
        assert llm.arrived.wait(120), doomed.communicate(timeout=5)[0]
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=30)
    finally:
        if doomed.poll() is None:
            doomed.kill()

    assert query(var_dir, "SELECT status FROM memory_jobrun") == [("running",)]
    assert query(var_dir, "SELECT COUNT(*) FROM memory_lesson") == [(2,)]
    per_lesson = query(
        var_dir,
        "SELECT consolidated_into_id, COUNT(*) FROM memory_note GROUP BY consolidated_into_id ORDER BY 2",
    )
    assert sorted(count for _, count in per_lesson) == [3, 3, 6]  # two whole clusters, six notes live

    # time passes: the dead worker's lease expires
    query(var_dir, "UPDATE memory_jobrun SET lease_expires_at = '2000-01-01 00:00:00'")
    rerun_llm = held_llm()
    survivor = consolidator(var_dir, rerun_llm)
    out = survivor.communicate(timeout=120)[0]

    assert survivor.returncode == 0, out
    assert "done race/alice: 2 clusters → 2 lessons" in out
    assert rerun_llm.count == 2
    assert query(var_dir, "SELECT status FROM memory_jobrun ORDER BY id") == [
        ("abandoned",),
        ("done",),
    ]
    assert query(var_dir, "SELECT COUNT(*) FROM memory_lesson") == [(4,)]
    assert query(var_dir, "SELECT COUNT(*), COUNT(consolidated_into_id) FROM memory_note") == [(12, 12)]
    assert query(
        var_dir,
        "SELECT COUNT(*) FROM (SELECT 1 FROM memory_note GROUP BY consolidated_into_id HAVING COUNT(*) = 3)",
    ) == [(4,)]


def test_job_runs_and_declined_clusters_are_listed_in_the_admin(admin_client, subject, config, actor):
    linked(subject, ["Bought new running shoes.", "Tomatoes need water daily.", "Taxes are due."], ["misc"])
    run(subject, config, actor)

    runs = admin_client.get(reverse("admin:memory_jobrun_changelist"))
    declined = admin_client.get(reverse("admin:consolidation_declinedcluster_changelist"))

    assert runs.status_code == 200 and f"consolidate:subject:{subject.pk}" in runs.content.decode()
    assert declined.status_code == 200 and "alice" in declined.content.decode()


def test_bench_consolidate_reports_ticks_and_clusters_found(db, tmp_path, capsys):
    out = tmp_path / "consolidate.json"

    call_command("bench", "consolidate", "--notes", "400", "--ticks", "2", "--json", str(out))

    summary = json.loads(out.read_text())
    result = summary["sizes"]["400"]
    assert result["notes"] == 400 and result["links"] > 100
    first, second = result["ticks"]
    assert first["clusters_found"] > 5 and first["lessons"] == 5
    assert second["clusters_found"] < first["clusters_found"]
    assert Lesson.objects.count() == 10
    assert "clusters found" in capsys.readouterr().out
