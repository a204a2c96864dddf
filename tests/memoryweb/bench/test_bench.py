import datetime
import json
from io import StringIO

import pytest
from django.core.management import call_command

from memory.models import App, Message, Note, NoteSource
from memoryweb.bench import locomo
from memoryweb.bench.context import app_name

UTC = datetime.UTC

LOCOMO_REQUIRED_KEYS = {
    "overall_1_4",
    "overall_1_5",
    "by_category",
    "tokens_mean",
    "tokens_mean_by_k",
    "latency_ms",
    "questions",
    "skipped",
}


def tiny_locomo() -> list[dict]:
    """Two sessions, nine turns, four questions, in the shape of the LoCoMo file."""
    session_1 = [
        {"speaker": "Ada", "dia_id": "D1:1", "text": "Hi Sam! How was your weekend?"},
        {"speaker": "Sam", "dia_id": "D1:2", "text": "Busy! I spent Saturday repairing the garden fence."},
        {
            "speaker": "Ada",
            "dia_id": "D1:3",
            "text": "I finally named my kayak Zephyrine, after my grandmother.",
        },
        {"speaker": "Sam", "dia_id": "D1:4", "text": "Pottery class tonight with the ceramics group!"},
        {
            "speaker": "Ada",
            "dia_id": "D1:5",
            "text": "Look at this view from the trail.",
            "blip_caption": "a photo of a mountain lake at sunrise",
        },
    ]
    session_2 = [
        {"speaker": "Sam", "dia_id": "D2:1", "text": "Guess what, I adopted a greyhound called Biscuit."},
        {"speaker": "Ada", "dia_id": "D2:2", "text": "Congratulations! Biscuit is a lovely name."},
        {"speaker": "Sam", "dia_id": "D2:3", "text": "He already loves the beach near Brighton."},
        {"speaker": "Sam", "dia_id": "D2:4", "text": "Pottery class tonight with the ceramics group!"},
    ]
    return [
        {
            "sample_id": "tiny-1",
            "conversation": {
                "speaker_a": "Ada",
                "speaker_b": "Sam",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": session_1,
                "session_2_date_time": "10:04 am on 19 June, 2023",
                "session_2": session_2,
                "session_3_date_time": "9:00 am on 1 July, 2023",  # a date without a session
            },
            "qa": [
                {
                    "question": "What did Ada name her kayak?",
                    "answer": "Zephyrine",
                    "evidence": ["D1:3"],
                    "category": 4,
                },
                {
                    "question": "Which greyhound did Sam adopt and where does he love to go?",
                    "answer": 2023,
                    "evidence": ["D2:1; D2:03", "D:9:9"],
                    "category": 1,
                },
                {
                    "question": "When is the pottery class with the ceramics group?",
                    "evidence": ["D2:4"],
                    "category": 5,
                    "adversarial_answer": "tomorrow",
                },
                {"question": "Is Ada an only child?", "answer": "Unknown", "evidence": ["D"], "category": 3},
            ],
        }
    ]


def tiny_locomo_with_facts() -> list[dict]:
    """The tiny set plus two turns the heuristic extractor reads: a move and an employer (facts and
    a dated note), and a relative's wedding (a note in the sensitive "relationships" category)."""
    data = tiny_locomo()
    conversation, qa = data[0]["conversation"], data[0]["qa"]
    conversation["session_2"] += [
        {"speaker": "Ada", "dia_id": "D2:5", "text": "I moved to Boston last year and I work at Google."},
        {"speaker": "Sam", "dia_id": "D2:6", "text": "My sister is getting married in Lisbon next month."},
    ]
    qa += [
        {
            "question": "Which company does Ada work for?",
            "answer": "Google",
            "evidence": ["D2:5"],
            "category": 4,
        },
        {
            "question": "Where is the wedding of Sam's sister?",
            "answer": "Lisbon",
            "evidence": ["D2:6"],
            "category": 1,
        },
    ]
    return data


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:3"], ["D1:3"]),
        (["D8:6; D9:17"], ["D8:6", "D9:17"]),
        (["D:11:26"], ["D11:26"]),
        (["D30:05"], ["D30:5"]),
        (["D"], []),
        (["D1:3", "d1:03", "D2:1"], ["D1:3", "D2:1"]),
        ("D4:2", ["D4:2"]),
        (None, []),
    ],
)
def test_evidence_normaliser_repairs_the_malformed_forms(raw, expected):
    assert locomo.normalise_evidence(raw) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime.datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:09 am on 13 September, 2023", datetime.datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
        ("12:30 pm on 1 January, 2024", datetime.datetime(2024, 1, 1, 12, 30, tzinfo=UTC)),
        ("10:04 AM on 19 June, 2023", datetime.datetime(2023, 6, 19, 10, 4, tzinfo=UTC)),
    ],
)
def test_session_date_parser_reads_locomo_dates(text, expected):
    assert locomo.parse_session_date(text) == expected


@pytest.mark.parametrize("text", ["", "yesterday", "13:00 pm on 8 May, 2023", "1:56 pm on 8 Smarch, 2023"])
def test_session_date_parser_refuses_other_text(text):
    with pytest.raises(ValueError):
        locomo.parse_session_date(text)


def test_parse_sample_keeps_existing_evidence_and_drops_the_rest():
    sample = locomo.parse_sample(tiny_locomo()[0])
    assert [s.number for s in sample.sessions] == [1, 2]
    assert sample.sessions[1].date == datetime.datetime(2023, 6, 19, 10, 4, tzinfo=UTC)
    multi_hop = sample.questions[1]
    assert multi_hop.evidence == ["D2:1", "D2:3"]
    assert multi_hop.dropped == ["D:9:9"]
    assert sample.questions[3].evidence == []
    assert sample.sessions[0].turns[4].note_content == (
        "Ada: Look at this view from the trail. [shares an image: a photo of a mountain lake at sunrise]"
    )


@pytest.mark.django_db
def test_locomo_bench_scores_the_tiny_dataset():
    summary = locomo.run(tiny_locomo(), ks=[5, 10], out=lambda line: None)

    assert LOCOMO_REQUIRED_KEYS <= set(summary)
    assert set(summary["by_category"]) == {"1", "2", "3", "4", "5"}
    assert set(summary["overall_1_4"]) == {"recall@5", "hit@5", "recall@10", "hit@10", "n"}
    assert set(summary["tokens_mean_by_k"]) == {"5", "10"}
    assert set(summary["latency_ms"]) == {"p50", "p95"}
    assert summary["questions"] == 3
    assert summary["skipped"] == 1
    assert summary["by_category"]["4"]["hit@5"] == 1.0  # "kayak" is only in D1:3
    assert summary["by_category"]["4"]["recall@5"] == 1.0
    assert summary["overall_1_4"]["n"] == 2
    assert summary["overall_1_5"]["n"] == 3
    assert 0.0 <= summary["overall_1_5"]["recall@10"] <= 1.0
    assert summary["tokens_mean"] == summary["tokens_mean_by_k"]["10"] > 0
    assert "reflect" not in summary

    # every turn is a message with its dia_id, and every message is the source of a note
    app = App.objects.get(name=summary["app"])
    messages = Message.objects.filter(conversation__subject__app=app)
    assert sorted(messages.values_list("external_id", flat=True)) == sorted(
        [f"D1:{i}" for i in range(1, 6)] + [f"D2:{i}" for i in range(1, 5)]
    )
    assert messages.get(external_id="D2:1").occurred_at == datetime.datetime(2023, 6, 19, 10, 4, tzinfo=UTC)
    assert NoteSource.objects.filter(message__in=messages).count() == 9


@pytest.mark.django_db
def test_a_turn_merged_by_dedup_still_counts_for_its_own_dia_id():
    summary = locomo.run(tiny_locomo(), ks=[5], out=lambda line: None)

    app = App.objects.get(name=summary["app"])
    assert summary["ingest"]["merged_notes"] == 1  # D2:4 repeats D1:4 word for word
    assert Note.objects.filter(subject__app=app).count() == 8
    # the pottery question's evidence is D2:4, whose note was merged into D1:4's
    assert summary["by_category"]["5"]["hit@5"] == 1.0


@pytest.mark.django_db
def test_bench_locomo_command_writes_the_summary(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(tiny_locomo()))
    out = tmp_path / "out.json"
    stdout = StringIO()

    call_command("bench", "locomo", str(data), "--k", "5,10", "--json", str(out), stdout=stdout)

    summary = json.loads(out.read_text())
    assert LOCOMO_REQUIRED_KEYS <= set(summary)
    assert summary["by_category"]["4"]["hit@10"] == 1.0
    assert "overall_1_4" in stdout.getvalue()


@pytest.mark.django_db
def test_bench_context_command_reports_every_size(tmp_path):
    out = tmp_path / "context.json"
    args = ["--notes", "50", "--queries", "5", "--ingest-sample", "10", "--no-http", "--json", str(out)]

    call_command("bench", "context", *args, stdout=StringIO())

    summary = json.loads(out.read_text())
    assert {"sizes", "db", "queries"} <= set(summary)
    assert summary["queries"] == 5
    assert summary["db"] in {"sqlite", "postgresql"}
    size = summary["sizes"]["50"]
    assert {"ingest_notes_per_s", "ingest_messages_per_s", "context_ms", "http_ms", "tokens_mean"} <= set(
        size
    )
    assert set(size["context_ms"]) == {"p50", "p95", "mean"}
    assert size["http_ms"] is None
    assert size["tokens_mean"] > 0
    app = App.objects.get(name=app_name(50, 1, 1))
    assert Note.objects.filter(subject__app=app).count() + size["ingest_merged"] == 50
    assert Message.objects.filter(conversation__subject__app=app).count() == 10


@pytest.mark.django_db
def test_bench_context_reuses_a_filled_size(tmp_path):
    out = tmp_path / "context.json"
    args = ["--notes", "30", "--queries", "3", "--subjects", "3", "--ingest-sample", "5", "--no-http"]
    call_command("bench", "context", *args, stdout=StringIO())

    call_command("bench", "context", *args, "--json", str(out), stdout=StringIO())

    size = json.loads(out.read_text())["sizes"]["30"]
    assert size["reused"] is True
    assert size["ingest_notes_per_s"] is None
    app = App.objects.get(name=app_name(30, 3, 1))
    assert app.subjects.count() == 3
    assert Note.objects.filter(subject__app=app).count() <= 30
