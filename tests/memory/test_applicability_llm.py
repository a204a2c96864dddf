"""The LLM applicability judge (`llm.applicability`), over fake OpenAI and Anthropic wires: one
batched call per build, its sub-scores on the items it answers, the heuristic for the rest and
whenever it is slow or unusable.

The judge runs on a worker thread whose LLM client counts its calls on that thread's own DB
connection, so these tests commit for real (as tests/memory/test_rewriter_llm.py does).
"""

import json
import threading

import httpx2
import pytest

from memory.config import get_config
from memory.context import context_build
from memory.services import app_config_set
from memoryweb.llm import set_http_client_factory
from memoryweb.models import Counter
from tests.factories import NoteFactory
from tests.llm_wire import anthropic_tool_message

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

MESSAGE = "Any Lisbon restaurant tips?"
SCORES = {"task_fit": 0.9, "mode_fit": 0.8, "temporal": 1.0, "epistemic": 0.7, "risk": 0.0}


def configure(app, actor, spec="openai/gpt-4o-mini", **applicability):
    memory: dict = {"llm": {"applicability": spec}}
    if applicability:
        memory["applicability"] = applicability
    app_config_set(app=app, config={"memory": memory}, actor=actor)
    return get_config(app)


@pytest.fixture
def notes(subject):
    return [
        NoteFactory(subject=subject, content="Alice's favourite restaurant is Taberna do Mar in Lisbon"),
        NoteFactory(subject=subject, content="Alice had sushi with Bob at a Lisbon restaurant in May"),
    ]


def judged(context) -> dict[str, dict]:
    return {i["id"]: i["applicability"] for i in context.as_dict()["items"]}


def test_one_batched_call_judges_the_candidates_it_answers(app, actor, subject, notes, openai_wire):
    config = configure(app, actor)
    first, second = notes
    openai_wire.answer_json({"items": [{"id": f"n:{first.pk}", **SCORES}]})

    context = context_build(subject=subject, message=MESSAGE, config=config, record=False)

    assert len(openai_wire.requests) == 1
    prompt = openai_wire.requests[0]["messages"][-1]["content"]
    assert f"<message>\n{MESSAGE}\n</message>" in prompt
    assert f"id n:{first.pk} (note" in prompt and f"id n:{second.pk} (note" in prompt
    scores = judged(context)
    assert scores[f"n:{first.pk}"]["judge"] == "llm"
    assert scores[f"n:{first.pk}"]["task_fit"] == 0.9 and scores[f"n:{first.pk}"]["epistemic"] == 0.7
    # the item the answer missed keeps the heuristic's judgement, counted
    assert scores[f"n:{second.pk}"]["judge"] == "heuristic"
    assert Counter.objects.get(name="llm.fallback.applicability.item").value == 1


def test_the_judge_speaks_anthropic_too(app, actor, subject, notes, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    first, second = notes
    sent: list[dict] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sent.append(body)
        items = [{"id": f"n:{n.pk}", **SCORES, "task_fit": 0.2} for n in (first, second)]
        return httpx2.Response(200, json=anthropic_tool_message(body["tools"][0]["name"], {"items": items}))

    previous = set_http_client_factory(lambda spec: httpx2.Client(transport=httpx2.MockTransport(handler)))
    try:
        config = configure(app, actor, spec="anthropic/claude-haiku-4-5")
        context = context_build(subject=subject, message=MESSAGE, config=config, record=False)
    finally:
        set_http_client_factory(previous)

    assert len(sent) == 1 and sent[0]["tools"][0]["name"] == "record_applicability"
    scores = judged(context)
    assert {s["judge"] for s in scores.values()} == {"llm"}
    assert all(s["task_fit"] == 0.2 for s in scores.values())


def test_a_slow_judge_falls_back_to_the_heuristic_and_counts_the_timeout(
    app, actor, subject, notes, openai_wire
):
    config = configure(app, actor, timeoutMs=50)
    answered = threading.Event()
    openai_wire.on_request = lambda request: answered.wait(timeout=5)  # far beyond 50 ms
    openai_wire.answer_json({"items": [{"id": f"n:{notes[0].pk}", **SCORES}]})

    try:
        context = context_build(subject=subject, message=MESSAGE, config=config, record=False)
    finally:
        answered.set()  # the abandoned call finishes; its late answer is never used

    assert {s["judge"] for s in judged(context).values()} == {"heuristic"}
    assert f"n:{notes[0].pk}" in judged(context)
    assert Counter.objects.get(name="llm.fallback.applicability.timeout").value == 1


@pytest.mark.parametrize(
    "answer,reason",
    [
        ('{"items": [', "invalid_json"),
        ('{"verdicts": []}', "schema_mismatch"),
    ],
)
def test_an_unusable_answer_falls_back_to_the_heuristic(
    app, actor, subject, notes, openai_wire, answer, reason
):
    config = configure(app, actor)
    openai_wire.answer_text(answer)

    context = context_build(subject=subject, message=MESSAGE, config=config, record=False)

    assert {s["judge"] for s in judged(context).values()} == {"heuristic"}
    assert len(judged(context)) == 2
    assert Counter.objects.get(name=f"llm.fallback.applicability.{reason}").value == 1


def test_a_garbled_item_keeps_the_heuristic_for_that_item(app, actor, subject, notes, openai_wire):
    config = configure(app, actor)
    first, second = notes
    openai_wire.answer_json(
        {"items": [{"id": f"n:{first.pk}", **SCORES}, {"id": f"n:{second.pk}", **SCORES, "task_fit": 7}]}
    )

    scores = judged(context_build(subject=subject, message=MESSAGE, config=config, record=False))

    assert scores[f"n:{first.pk}"]["judge"] == "llm"
    assert scores[f"n:{second.pk}"]["judge"] == "heuristic"


def test_the_context_endpoint_reports_the_judges_breakdown(client, app, actor, subject, notes, openai_wire):
    configure(app, actor)
    openai_wire.answer_json({"items": [{"id": f"n:{n.pk}", **SCORES} for n in notes]})

    response = client.post(
        "/api/v1/context", {"subject": subject.external_id, "message": MESSAGE}, format="json"
    )

    assert response.status_code == 200
    items = [i for i in response.json()["items"] if i["kind"] == "note"]
    assert {i["applicability"]["judge"] for i in items} == {"llm"}
    assert all(i["score"] == i["applicability"]["final"] for i in items)
