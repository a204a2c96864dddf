"""`bench cache`: a LoCoMo replay with the context cache on and off, on a tiny synthetic file."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memory.models import App, ContextCacheEntry, Subject
from memoryweb.bench import cache
from tests.memoryweb.bench.test_bench import tiny_locomo


def tiny_with_a_follow_up() -> list[dict]:
    """The tiny set, with a turn that only repeats the words of the one before it."""
    data = tiny_locomo()
    session = data[0]["conversation"]["session_2"]
    at = next(i for i, t in enumerate(session) if t["dia_id"] == "D2:3") + 1
    session.insert(at, {"speaker": "Ada", "dia_id": "D2:5", "text": "Loves the beach near Brighton?"})
    return data


@pytest.mark.django_db
def test_the_replay_is_served_from_the_cache_only_with_it_on_and_recall_is_compared():
    summary = cache.run(tiny_with_a_follow_up(), out=lambda line: None)

    on, off = summary["on"], summary["off"]
    assert on["turns"] == off["turns"] == 10
    assert on["hits"] >= 1 and off["hits"] == 0  # the Brighton follow-up at least
    assert on["hit_rate"] == pytest.approx(on["hits"] / 10)
    assert on["questions"] == off["questions"] == 3
    assert off["question_hits"] == 0
    assert summary["recall_delta"] == pytest.approx(on["recall_at_10"] - off["recall_at_10"])
    assert off["recall_at_10"] > 0  # "kayak" is only in D1:3
    # each pass's subjects are gone before the next one ranks (and the warm-up's too)
    assert App.objects.filter(name__startswith="bench-cache-").count() == 3
    assert not Subject.objects.exists() and not ContextCacheEntry.objects.exists()


@pytest.mark.django_db
def test_limit_and_samples_cut_the_replay(tmp_path):
    summary = cache.run(tiny_with_a_follow_up() * 2, samples=1, limit=4, questions=1, out=lambda line: None)

    assert summary["samples"] == 1
    assert summary["on"]["turns"] == summary["off"]["turns"] == 4
    assert summary["on"]["questions"] == 1


@pytest.mark.django_db
def test_the_command_prints_both_passes_side_by_side(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(tiny_with_a_follow_up()))
    out = tmp_path / "out.json"
    stdout = StringIO()

    call_command("bench", "cache", str(data), "--samples", "1", "--json", str(out), stdout=stdout)

    text = stdout.getvalue()
    assert "cache on" in text and "cache off" in text and "recall@10" in text
    assert "recall@10 with the cache minus without" in text
    written = json.loads(out.read_text())
    assert written["on"]["turns"] == 10 and written["off"]["hits"] == 0
