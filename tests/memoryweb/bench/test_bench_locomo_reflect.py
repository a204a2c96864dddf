"""`bench locomo --reflect`: the turns posted the way a chat app posts them, scored beside the harness.

The pipeline commits after every message and its reflection runs on that commit, so these tests
use a transactional database (serialized_rollback keeps the consent categories the migrations
seed for the tests after them)."""

import datetime
import json
from io import StringIO

import pytest
from django.core.management import call_command

from chat.models import ReflectionRun, RunStatus
from memory.context import Item
from memory.models import App, Evidence, Message, Note, ProfileFact
from memoryweb.bench import locomo
from memoryweb.bench.reflect import Provenance
from memoryweb.celery import app as celery_app
from tests.memoryweb.bench.test_bench import LOCOMO_REQUIRED_KEYS, tiny_locomo, tiny_locomo_with_facts

transactional = pytest.mark.django_db(transaction=True, serialized_rollback=True)
COMPANY = (
    "Which company does Ada work for?"  # evidence D2:5, "I moved to Boston last year and I work at Google."
)


@transactional
def test_reflect_posts_the_turns_through_the_chat_path_and_finds_a_stated_fact(eager_tasks):
    plain = locomo.run(tiny_locomo_with_facts(), ks=[5, 10], out=lambda line: None)
    summary = locomo.run(
        tiny_locomo_with_facts(), ks=[5, 10], reflect=True, details=True, out=lambda line: None
    )

    # the harness figures do not depend on --reflect
    assert set(summary) - set(plain) == {"reflect", "harness_vs_reflect", "details"}
    for key in ("overall_1_4", "overall_1_5", "by_category", "with_memory_index"):
        assert summary[key] == plain[key]
    ref = summary["reflect"]
    assert LOCOMO_REQUIRED_KEYS <= set(ref)
    assert set(ref["overall_1_4"]) == {"recall@5", "hit@5", "recall@10", "hit@10", "n"}
    assert ref["questions"] == summary["questions"] == 5
    assert summary["harness_vs_reflect"]["overall_1_4"] == {
        "harness": summary["overall_1_4"],
        "reflect": ref["overall_1_4"],
    }

    # every turn went through messages_add into the pipeline's own App, as said, with no note per turn
    app = App.objects.get(name=ref["app"])
    messages = Message.objects.filter(conversation__subject__app=app)
    assert messages.count() == ref["posting"]["turns"] == 11
    d25 = messages.get(external_id="D2:5")
    assert (d25.role, d25.name, d25.text) == (
        "user",
        "Ada",
        "I moved to Boston last year and I work at Google.",
    )
    assert set(messages.values_list("role", "name")) == {("user", "Ada"), ("assistant", "Sam")}
    assert Evidence.objects.get(subject__app=app, message=d25).content.startswith("Ada: I moved to Boston")
    assert d25.occurred_at == datetime.datetime(2023, 6, 19, 10, 4, tzinfo=datetime.UTC)
    assert messages.get(external_id="D2:6").role == "assistant"
    assert set(Note.objects.filter(subject__app=app).values_list("origin", flat=True)) <= {"reflection"}
    # one reflection per assistant message (Sam's six turns), all done, and one more: Ada's last
    # turn of session 1 has no reply after it, and the idle-turn sweep reflects it
    runs = ReflectionRun.objects.filter(conversation__subject__app=app)
    assert set(runs.values_list("status", flat=True)) == {RunStatus.DONE}
    assert ref["reflection"]["runs"] == {"done": 7} and ref["reflection"]["sources"] == {"heuristic": 7}
    assert ref["reflection"]["unreflected_messages"] == 0

    # the employer stated in D2:5 is a fact from that message, and it reaches the context
    employer = ProfileFact.objects.get(subject__app=app, key="employer", valid_to=None)
    assert (employer.value, employer.source_message.external_id) == ("Google", "D2:5")
    row = next(r for r in ref["details"] if r["question"] == COMPANY)
    assert row["by_k"]["5"]["recall"] == 1.0
    assert row["by_k"]["5"]["recall_by_kind"]["fact"] == 1.0
    assert ref["by_kind"]["fact"]["overall_1_4"]["recall@5"] > 0
    assert ref["stored"]["evidence_rows"] == 11  # every turn, the trailing one too
    # the harness finds it too, from the turn's note
    assert next(r for r in summary["details"] if r["question"] == COMPANY)["by_k"]["5"]["recall"] == 1.0
    # the pipeline's idle-turn sweep reflected its own subjects only, never the harness's turns
    harness = App.objects.get(name=summary["app"])
    assert not ReflectionRun.objects.filter(conversation__subject__app=harness).exists()
    assert not Evidence.objects.filter(subject__app=harness).exists()
    # by default a sensitive turn waits for the person: the sister's wedding (relationships)
    assert Evidence.objects.get(subject__app=app, message__external_id="D2:6").status == "pending"


@transactional
def test_reflect_consent_allow_posts_into_subjects_that_allow_every_category(eager_tasks):
    summary = locomo.run(
        tiny_locomo_with_facts(), ks=[5], reflect=True, reflect_consent="allow", out=lambda line: None
    )

    ref = summary["reflect"]
    app = App.objects.get(name=ref["app"])
    assert Evidence.objects.get(subject__app=app, message__external_id="D2:6").status == "visible"
    assert not Evidence.objects.filter(subject__app=app).exclude(status="visible").exists()
    assert ref["stored"]["pending_rows"] == 0 and "allowed" in ref["consent"]
    with pytest.raises(locomo.BenchError, match="consent"):
        locomo.run(tiny_locomo(), ks=[5], reflect=True, reflect_consent="maybe", out=lambda line: None)


@transactional
def test_the_command_prints_harness_and_reflect_side_by_side(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(tiny_locomo_with_facts()))
    out = tmp_path / "out.json"
    stdout = StringIO()

    call_command(
        "bench",
        "locomo",
        str(data),
        "--k",
        "5",
        "--reflect",
        "--embeddings",
        "none",
        "--json",
        str(out),
        stdout=stdout,
    )

    summary = json.loads(out.read_text())
    assert summary["reflect"]["reflection"]["facts"] >= 1
    assert set(summary["harness_vs_reflect"]) == {"overall_1_4", "overall_1_5", "1", "2", "3", "4", "5"}
    assert summary["reflect"]["by_category"]["4"]["hit@5"] > 0  # the employer question
    text = stdout.getvalue()
    assert "harness vs reflect" in text and "posting:" in text and "recall of each item kind" in text
    assert celery_app.conf.task_always_eager is False  # the command put it back


@pytest.mark.django_db
def test_reflect_refuses_to_run_with_tasks_queued_for_a_worker():
    assert celery_app.conf.task_always_eager is False
    with pytest.raises(locomo.BenchError, match="inline"):
        locomo.run(tiny_locomo(), ks=[5], reflect=True, out=lambda line: None)
    assert not App.objects.exists()


@pytest.mark.django_db
def test_provenance_maps_any_item_kind_to_its_source_turns(app, actor, config):
    sample = locomo.parse_sample(tiny_locomo()[0])
    subject, _, _ = locomo.ingest(sample, app=app, actor=actor, config=config)
    merged = Note.objects.get(subject=subject, source_message__external_id="D1:4")  # D2:4 merged into it
    fact = ProfileFact.objects.create(
        subject=subject, key="pet", value="Biscuit", source_message=Message.objects.get(external_id="D2:1")
    )
    said = Message.objects.get(external_id="D2:3")
    turn = Evidence.objects.create(
        subject=subject, conversation=said.conversation, message=said, role=said.role, text=said.text,
        occurred_at=said.occurred_at,
    )  # fmt: skip
    items = [
        Item(id=f"n:{merged.pk}", kind="note", section="recalled", score=1.0, reason=""),
        Item(id=f"f:{fact.pk}", kind="fact", section="profile", score=1.0, reason=""),
        Item(id=f"e:{turn.pk}", kind="evidence", section="recalled", score=1.0, reason=""),
        Item(id="n:0", kind="note", section="memory-index", score=1.0, reason=""),
        Item(id="x:1", kind="no-such-kind", section="recalled", score=1.0, reason=""),
    ]

    found = Provenance().dia_ids(items, exclude_sections=frozenset({"memory-index"}))

    assert found == {
        "note": {"D1:4", "D2:4"},
        "fact": {"D2:1"},
        "evidence": {"D2:3"},  # the unit's OneToOne key to its message
        "no-such-kind": set(),
    }
