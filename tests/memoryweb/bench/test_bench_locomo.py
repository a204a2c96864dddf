"""`bench locomo` with several retrieval modes side by side and the plain BM25 baseline."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory.models import App, Subject
from memoryweb.bench import locomo
from memoryweb.bench.bm25 import Bm25Index, document_tokens, question_tokens
from memoryweb.bench.locomo_data import parse_sample
from tests.memoryweb.bench.test_bench import tiny_locomo


@pytest.mark.django_db
def test_every_mode_and_the_baseline_are_scored_on_the_same_questions():
    summary = locomo.run(tiny_locomo(), ks=[5, 10], modes=["full", "fts"], bm25=True, out=lambda line: None)

    assert summary["mode"] == "full"
    assert set(summary["modes"]) == {"full", "fts"}
    # the primary mode is the top level too, so older readers of the JSON keep working
    assert summary["overall_1_4"] == summary["modes"]["full"]["overall_1_4"]
    for block in (*summary["modes"].values(), summary["bm25"]):
        assert block["questions"] == 3
        assert block["by_category"]["4"]["hit@5"] == 1.0  # "kayak" is only in D1:3
        assert set(block["cost_at_main_k"]["overall_1_4"]) == {"tokens_mean", "latency_p50_ms"}
    # the baseline's tokens are its k notes alone: fewer than a whole context
    assert 0 < summary["bm25"]["tokens_mean"] < summary["modes"]["full"]["tokens_mean"]
    # the headline names both comparisons: the plain baseline and memoryweb's own full-text mode
    text = locomo.render(summary, [5, 10])
    assert "full vs bm25, recall@10 categories 1-4" in text
    assert "full vs fts, recall@10 categories 1-4" in text


@pytest.mark.django_db
def test_skipped_conversations_are_neither_ingested_nor_scored():
    first, second = tiny_locomo()[0], {**tiny_locomo()[0], "sample_id": "tiny-2"}
    second["qa"] = second["qa"][:1]  # one scored question: the kayak

    summary = locomo.run([first, second], ks=[5], skip_conversations=1, out=lambda line: None)

    assert summary["conversations"] == 1
    assert summary["questions"] == 1
    assert summary["by_category"]["4"]["n"] == 1


@pytest.mark.django_db
def test_the_bm25_baseline_ranks_the_notes_that_share_rare_words(app, actor, config):
    sample = parse_sample(tiny_locomo()[0])
    subject, _, _ = locomo.ingest(sample, app=app, actor=actor, config=config)
    index = Bm25Index.for_subject(subject)

    best, _ = index.top("Which greyhound did Sam adopt?", 3)
    notes = {n.pk: n.content for n in subject.notes.all()}

    assert "greyhound called Biscuit" in notes[best[0]]
    assert index.top("the of and", 3)[0] == []  # only stop words: nothing to score


def test_the_bm25_baseline_keeps_term_frequency_in_notes_not_in_questions():
    assert document_tokens("The ferry, the ferry and a ferry to Oslo") == ["ferry", "ferry", "ferry", "oslo"]
    assert question_tokens("ferry ferry to Oslo?") == ["ferry", "oslo"]


@pytest.mark.django_db
def test_vector_modes_need_embeddings():
    with pytest.raises(locomo.BenchError, match="need embeddings"):
        locomo.run(tiny_locomo(), ks=[5], modes=["hybrid"], embeddings="none", out=lambda line: None)
    assert not App.objects.exists()  # refused before anything was written


@pytest.mark.django_db
def test_the_command_prints_modes_side_by_side_with_the_baseline(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(tiny_locomo()))
    out = tmp_path / "out.json"
    stdout = StringIO()

    call_command(
        "bench",
        "locomo",
        str(data),
        "--k",
        "5",
        "--mode",
        "fts,full",
        "--embeddings",
        "none",
        "--json",
        str(out),
        stdout=stdout,
    )

    summary = json.loads(out.read_text())
    assert summary["mode"] == "fts" and set(summary["modes"]) == {"fts", "full"}
    assert "bm25" in summary
    text = stdout.getvalue()
    assert "side by side" in text and "bm25 baseline" in text
    assert "fts vs bm25, recall@5 categories 1-4" in text
    assert Subject.objects.count() == 1


@pytest.mark.django_db
def test_the_command_refuses_an_unknown_mode(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(tiny_locomo()))

    with pytest.raises(CommandError, match="expected modes among"):
        call_command("bench", "locomo", str(data), "--mode", "fts,bm42", stdout=StringIO())


@pytest.mark.django_db
def test_the_local_embeddings_score_the_vector_and_hybrid_modes():
    summary = locomo.run(
        tiny_locomo(), ks=[5], modes=["hybrid", "vector"], embeddings="local", out=lambda line: None
    )

    assert summary["embeddings"] == "local/all-MiniLM-L6-v2"
    assert summary["embedding"]["notes"] == 8  # every stored note, once (D2:4 merged into D1:4)
    assert summary["modes"]["vector"]["questions"] == 3
    assert summary["modes"]["hybrid"]["by_category"]["4"]["hit@5"] == 1.0


@pytest.mark.django_db
def test_the_command_scores_the_embedding_model_it_is_given(tmp_path, minilm):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(tiny_locomo()))
    out = tmp_path / "out.json"

    call_command(
        "bench", "locomo", str(data), "--k", "5", "--mode", "vector", "--no-bm25",
        "--embedding-model", "all-MiniLM-L6-v2", "--json", str(out), stdout=StringIO(),
    )  # fmt: skip

    summary = json.loads(out.read_text())
    assert summary["embeddings"] == "local/all-MiniLM-L6-v2" and summary["embedding"]["notes"] == 8
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("bench", "locomo", str(data), "--embedding-model", "bge-small", stdout=StringIO())


def test_bench_embeddings_times_each_installed_model_and_names_the_missing_ones(tmp_path, minilm):
    from memory.embedding_models import MODELS, model_problem

    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(tiny_locomo()))
    out = tmp_path / "models.json"
    stdout = StringIO()

    call_command("bench", "embeddings", str(data), "--queries", "3", "--json", str(out), stdout=stdout)

    summary = json.loads(out.read_text())
    assert set(summary["models"]) == set(MODELS) and summary["queries"] == 3
    for name, row in summary["models"].items():
        if model_problem(MODELS[name]):
            assert "not installed" in row["skipped"]
        else:
            assert row["dim"] == MODELS[name].dim and row["query_ms"]["p50"] > 0
            assert row["batch_texts_per_s"] > 0
    assert "q p95 ms" in stdout.getvalue() and "all-MiniLM-L6-v2" in stdout.getvalue()
