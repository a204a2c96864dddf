"""`bench context` with retrieval modes: fts, and hybrid on the real local model."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Count

from memory.models import App, Embedding, Note
from memoryweb.bench.context import app_name


def bench(tmp_path, *args):
    out = tmp_path / "context.json"
    stdout = StringIO()
    call_command("bench", "context", *args, "--no-http", "--json", str(out), stdout=stdout)
    return json.loads(out.read_text()), stdout.getvalue()


@pytest.mark.django_db
def test_fts_mode_reports_percentiles_and_no_query_embedding(tmp_path):
    summary, text = bench(tmp_path, "--notes", "40", "--queries", "6", "--ingest-sample", "4")

    mode = summary["sizes"]["40"]["modes"]["fts"]
    assert summary["modes"] == ["fts"]
    assert set(mode["context_ms"]) == {"p50", "p95", "p99", "mean"}
    assert mode["context_ms"]["p50"] <= mode["context_ms"]["p95"] <= mode["context_ms"]["p99"]
    assert mode["context_cpu_ms"]["p50"] > 0
    assert mode["query_embedding_ms"] is None
    assert mode["tokens_mean"] > 0
    assert not Embedding.objects.exists()
    assert "q-embed p95" in text


@pytest.mark.django_db
def test_hybrid_mode_embeds_every_note_once_and_times_the_query_embedding_apart(tmp_path):
    summary, text = bench(
        tmp_path, "--notes", "24", "--queries", "5", "--ingest-sample", "3", "--mode", "fts,hybrid"
    )

    size = summary["sizes"]["24"]
    app = App.objects.get(name=app_name(24, 1, 1))
    notes = Note.objects.filter(subject__app=app)
    assert Embedding.objects.filter(item_id__in=notes.values("id")).count() == notes.count()
    assert size["embedded"] == notes.count() and size["copied"] == 0
    assert size["embed_notes_per_s"] > 0
    hybrid = size["modes"]["hybrid"]
    assert hybrid["query_embedding_ms"]["p50"] > 0
    assert set(size["modes"]) == {"fts", "hybrid"}
    assert "hybrid" in text

    # a larger size of the same seed starts with the same texts: their vectors are copied
    summary, _ = bench(
        tmp_path, "--notes", "30", "--queries", "5", "--ingest-sample", "3", "--mode", "hybrid"
    )

    larger = summary["sizes"]["30"]
    assert larger["copied"] >= 20
    assert (
        larger["embedded"] + larger["copied"]
        == Note.objects.filter(subject__app__name=app_name(30, 1, 1)).count()
    )
    # and a second run at the same size embeds nothing
    again, _ = bench(tmp_path, "--notes", "30", "--queries", "5", "--mode", "hybrid")
    assert again["sizes"]["30"]["embedded"] == again["sizes"]["30"]["copied"] == 0


@pytest.mark.django_db
def test_many_subjects_spread_the_notes_and_every_subject_is_asked(tmp_path):
    summary, text = bench(
        tmp_path, "--notes", "60", "--subjects", "12", "--queries", "12", "--ingest-sample", "0"
    )

    app = App.objects.get(name=app_name(60, 12, 1))
    per_subject = app.subjects.annotate(n=Count("notes")).values_list("n", flat=True)
    assert sorted(per_subject) == [5] * 12
    assert summary["subjects"] == 12
    assert "notes" in text and "per subj" in text


def test_an_unknown_mode_is_refused():
    with pytest.raises(CommandError, match="expected modes among"):
        call_command("bench", "context", "--mode", "fts,turbo", stdout=StringIO())


@pytest.mark.django_db
def test_a_bench_run_leaves_celery_eager_mode_as_it_found_it(tmp_path):
    from memoryweb.celery import app as celery_app

    before = celery_app.conf.task_always_eager
    bench(tmp_path, "--notes", "40", "--queries", "6", "--ingest-sample", "4")
    assert celery_app.conf.task_always_eager == before


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_http_mode_breaks_each_request_down_and_prints_the_parts(tmp_path, live_server, settings):
    """measure_http against a live server of the test database (daphne cannot open an
    in-memory one): the breakdown's parts, and the table `bench context` prints."""
    from types import SimpleNamespace

    from memory.services import Actor
    from memoryweb.bench import context as bench_context

    settings.MEMORYWEB_SERVER_TIMING = True  # what BenchServer's environment says to daphne
    summary = bench_context.run(sizes=[20], queries=4, ingest_sample=0, http=False, out=lambda _: None)
    app = App.objects.get(name=app_name(20, 1, 1))
    http = bench_context.measure_http(
        SimpleNamespace(url=live_server.url), app, ["lunch plans?"] * 4, k=None, actor=Actor.system("t")
    )

    assert set(http["breakdown"]) == set(bench_context.BREAKDOWN)
    means = {name: part["mean"] for name, part in http["breakdown"].items()}
    assert all(ms >= 0 for ms in means.values())
    assert means["build"] > 0 and means["auth"] > 0
    assert sum(means.values()) == pytest.approx(http["mean"], abs=0.01)  # the parts add up
    summary["sizes"]["20"]["http_ms"] = http
    text = bench_context.render(summary)
    assert "http mean" in text
    for name in bench_context.BREAKDOWN:
        assert name in text.split("http mean", 1)[1]
    # without the HTTP measurement there is no breakdown table
    summary["sizes"]["20"]["http_ms"] = None
    assert "http mean" not in bench_context.render(summary)
