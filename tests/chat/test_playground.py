"""The chat playground: one turn builds the memory context, asks the `chat` model (streamed,
tested at the HTTP boundary with an OpenAI-style SSE stream), and stores the turn so
reflection runs. With `none` it says so, still shows the context and still stores the turn."""

import json

import httpx2
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings
from django.urls import reverse

from chat.models import ReflectionRun
from chat.playground import NO_MODEL, PLAYGROUND_CONVERSATION, playground_turn
from memory.config import get_config
from memory.models import Conversation, Message, ProfileFact, RetrievalEvent
from memory.services import Actor, app_config_set, fact_set
from memoryweb.asgi import application
from memoryweb.errors import InvalidInput
from memoryweb.llm import set_http_client_factory
from tests.dashboard_helpers import make_user
from tests.factories import SubjectFactory

RECEIVE_TIMEOUT = 10  # an upper bound for a missing answer, not a timing assertion


def sse_stream(pieces: list[str], finish: str = "stop") -> httpx2.Response:
    """The body OpenAI's chat.completions sends with stream=true."""

    def chunk(delta, finish_reason=None):
        body = {
            "id": "chatcmpl-play",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        return f"data: {json.dumps(body)}\n\n"

    text = chunk({"role": "assistant", "content": "", "refusal": None})
    text += "".join(chunk({"content": piece}) for piece in pieces)
    text += chunk({}, finish) + "data: [DONE]\n\n"
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=text.encode())


class ChatWire:
    """A fake OpenAI on the wire: plays the queued responses, records the request bodies."""

    def __init__(self, *responses: httpx2.Response):
        self.responses = list(responses)
        self.bodies: list[dict] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        return self.responses.pop(0)


@pytest.fixture
def chat_wire(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    wire = ChatWire()
    previous = set_http_client_factory(lambda spec: httpx2.Client(transport=httpx2.MockTransport(wire)))
    yield wire
    set_http_client_factory(previous)


@pytest.fixture
def chat_model(app, actor):
    app_config_set(app=app, config={"memory": {"llm": {"chat": "openai/gpt-4o-mini"}}}, actor=actor)
    return app


@pytest.fixture
def remembered(subject, actor):
    fact, _ = fact_set(subject=subject, key="city", value="Lisbon", actor=actor)
    return fact


def playground_rows(subject):
    return list(
        Message.objects.filter(
            conversation__subject=subject, conversation__external_id=PLAYGROUND_CONVERSATION
        ).values_list("role", "text")
    )


# --- the turn ------------------------------------------------------------------------------


def test_without_a_model_the_turn_says_so_shows_the_context_and_is_stored(subject, remembered, actor):
    chunks = []

    result = playground_turn(
        subject=subject,
        text="Where do I live?",
        actor=actor,
        config=get_config(subject.app),
        on_chunk=chunks.append,
    )

    assert result.answered is False and result.reply == NO_MODEL and chunks == [NO_MODEL]
    assert result.prompt.model == "none"
    assert "### profile" in result.prompt.system and "city: Lisbon" in result.prompt.system
    assert [i["id"] for i in result.prompt.context["items"]] == [f"f:{remembered.pk}"]
    assert playground_rows(subject) == [("user", "Where do I live?"), ("assistant", NO_MODEL)]
    run = ReflectionRun.objects.get(conversation__subject=subject)
    assert run.through_message_id == result.reply_message.pk
    assert RetrievalEvent.objects.filter(subject=subject, query="Where do I live?").count() == 1


def test_the_reply_streams_from_the_model_with_the_memory_in_its_system_prompt(
    chat_model, subject, remembered, actor, chat_wire
):
    chat_wire.responses.append(sse_stream(["You live", " in Lis", "bon."]))
    chunks = []

    result = playground_turn(
        subject=subject,
        text="Where do I live?",
        actor=actor,
        config=get_config(subject.app),
        on_chunk=chunks.append,
    )

    assert chunks == ["You live", " in Lis", "bon."]
    assert result.answered is True and result.reply == "You live in Lisbon." and result.failed is None
    sent = chat_wire.bodies[0]
    assert sent["stream"] is True and sent["model"] == "gpt-4o-mini"
    assert sent["messages"][0]["role"] == "system" and "city: Lisbon" in sent["messages"][0]["content"]
    assert sent["messages"][1:] == [{"role": "user", "content": "Where do I live?"}]
    assert playground_rows(subject) == [("user", "Where do I live?"), ("assistant", "You live in Lisbon.")]
    assert ReflectionRun.objects.filter(through_message=result.reply_message).exists()


def test_the_next_turn_sends_the_earlier_messages(chat_model, subject, actor, chat_wire):
    chat_wire.responses += [sse_stream(["Hi Ana!"]), sse_stream(["Ana."])]
    config = get_config(subject.app)

    playground_turn(subject=subject, text="Hello, I'm Ana", actor=actor, config=config)
    playground_turn(subject=subject, text="What's my name?", actor=actor, config=config)

    assert chat_wire.bodies[1]["messages"][1:] == [
        {"role": "user", "content": "Hello, I'm Ana"},
        {"role": "assistant", "content": "Hi Ana!"},
        {"role": "user", "content": "What's my name?"},
    ]
    assert Conversation.objects.filter(subject=subject, external_id=PLAYGROUND_CONVERSATION).count() == 1


def test_when_the_model_fails_only_the_user_message_is_stored(chat_model, subject, actor, chat_wire):
    error = {"error": {"message": "bad key", "type": "invalid_request_error", "param": None, "code": "x"}}
    chat_wire.responses.append(httpx2.Response(401, json=error))

    result = playground_turn(subject=subject, text="Hello", actor=actor, config=get_config(subject.app))

    assert result.answered is False and result.failed == "error" and result.reply_message is None
    assert playground_rows(subject) == [("user", "Hello")]
    assert not ReflectionRun.objects.exists()


@pytest.mark.parametrize("text", ["", "   ", None, "x" * 8001])
def test_an_empty_or_oversized_message_is_refused_and_nothing_is_stored(subject, actor, text):
    with pytest.raises(InvalidInput) as refused:
        playground_turn(subject=subject, text=text, actor=actor, config=get_config(subject.app))

    assert refused.value.field == "message"
    assert not Message.objects.exists() and not RetrievalEvent.objects.exists()


# --- the page (and its no-JavaScript form) --------------------------------------------------


def test_the_page_shows_the_transcript_and_that_no_model_is_configured(owned_subject, owner_client, actor):
    playground_turn(
        subject=owned_subject, text="I love hiking", actor=actor, config=get_config(owned_subject.app)
    )

    response = owner_client.get(reverse("dashboard:playground", args=[owned_subject.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "No model is configured" in html and "I love hiking" in html
    assert f'data-ws-path="/ws/s/{owned_subject.pk}/playground/"' in html


def test_the_no_model_notice_says_where_to_set_one_once_not_every_turn(owned_subject, owner_client, actor):
    for text in ("Hello", "Where do I live?", "I love hiking"):
        playground_turn(subject=owned_subject, text=text, actor=actor, config=get_config(owned_subject.app))

    html = owner_client.get(reverse("dashboard:playground", args=[owned_subject.pk])).content.decode()

    assert html.count("No model is configured") == 1  # the note above the conversation
    assert "MEMORY__LLM__CHAT" in html and "this App's config in the admin" in html
    assert html.count("No model answered") == 3  # each turn: one short line
    assert len(NO_MODEL) < 100


def test_posting_the_form_stores_the_turn_and_shows_the_context(owned_subject, owner_client, actor):
    fact_set(subject=owned_subject, key="city", value="Lisbon", actor=actor)

    response = owner_client.post(
        reverse("dashboard:playground_send", args=[owned_subject.pk]), {"message": "Where do I live?"}
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert "city: Lisbon" in html and "System prompt" in html
    assert playground_rows(owned_subject) == [("user", "Where do I live?"), ("assistant", NO_MODEL)]


def test_posting_an_empty_message_answers_400_naming_the_field(owned_subject, owner_client):
    response = owner_client.post(
        reverse("dashboard:playground_send", args=[owned_subject.pk]), {"message": " "}
    )

    assert response.status_code == 400
    assert 'data-field="message"' in response.content.decode()
    assert not Message.objects.exists()


def test_another_persons_playground_is_404_and_stores_nothing(owned_subject, stranger_client):
    page = stranger_client.get(reverse("dashboard:playground", args=[owned_subject.pk]))
    sent = stranger_client.post(
        reverse("dashboard:playground_send", args=[owned_subject.pk]), {"message": "hello"}
    )

    assert page.status_code == 404 and sent.status_code == 404
    assert not Message.objects.exists()


# --- the websocket --------------------------------------------------------------------------


@pytest.fixture
def in_memory_layer():
    with override_settings(CHANNEL_LAYERS={"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}):
        yield


def playground_socket(user, subject_id):
    headers = [(b"origin", b"http://testserver")]
    if user is not None:
        client = Client()
        client.force_login(user)
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return WebsocketCommunicator(application, f"/ws/s/{subject_id}/playground/", headers=headers)


def converse(communicator, message):
    """Connect, send one message, collect what comes back until the turn is done."""

    async def scenario():
        ok, code = await communicator.connect(timeout=RECEIVE_TIMEOUT)
        assert ok, f"refused with {code}"
        await communicator.send_json_to({"message": message})
        received = []
        while not received or received[-1]["type"] not in ("done", "error"):
            received.append(await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT))
        await communicator.disconnect()
        return received

    return async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_over_the_websocket_the_reply_streams_and_reflection_learns_from_the_turn(
    in_memory_layer, eager_tasks, chat_wire
):
    owner = make_user("ana-login")
    subject = SubjectFactory(external_id="ana", owner=owner)
    app_config_set(
        app=subject.app,
        config={"memory": {"llm": {"chat": "openai/gpt-4o-mini"}}},
        actor=Actor.system("test"),
    )
    fact_set(subject=subject, key="pet", value="a cat called Miso", actor=Actor.system("test"))
    chat_wire.responses.append(sse_stream(["Nice to meet", " you!"]))

    received = converse(playground_socket(owner, subject.pk), "I live in Dublin now and my cat is Miso")

    kinds = [m["type"] for m in received]
    assert kinds == ["context", "chunk", "chunk", "done"]
    context = received[0]
    assert context["model"] == "openai/gpt-4o-mini" and "pet: a cat called Miso" in context["system"]
    assert "System prompt" in context["html"]
    assert "".join(m["text"] for m in received[1:3]) == "Nice to meet you!"
    done = received[-1]
    assert done["answered"] is True and done["reply"] == "Nice to meet you!"
    assert playground_rows(subject) == [
        ("user", "I live in Dublin now and my cat is Miso"),
        ("assistant", "Nice to meet you!"),
    ]
    run = ReflectionRun.objects.get(conversation__subject=subject)
    assert run.status == "done"
    assert ProfileFact.objects.filter(subject=subject, key="location", value="Dublin", valid_to=None).exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_over_the_websocket_without_a_model_the_notice_is_the_reply(in_memory_layer):
    owner = make_user("ana-login")
    subject = SubjectFactory(external_id="ana", owner=owner)

    received = converse(playground_socket(owner, subject.pk), "Hello there")

    assert [m["type"] for m in received] == ["context", "chunk", "done"]
    assert received[0]["model"] == "none" and received[1]["text"] == NO_MODEL
    assert received[-1]["answered"] is False
    assert playground_rows(subject) == [("user", "Hello there"), ("assistant", NO_MODEL)]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_over_the_websocket_an_empty_message_gets_an_error_naming_the_field(in_memory_layer):
    owner = make_user("ana-login")
    subject = SubjectFactory(external_id="ana", owner=owner)

    received = converse(playground_socket(owner, subject.pk), "  ")

    assert received == [{"type": "error", "error": "message must be a non-empty string", "field": "message"}]
    assert not Message.objects.exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("who", ["anonymous", "another person"])
def test_the_playground_socket_is_refused_to_anyone_but_the_owner_and_staff(in_memory_layer, who):
    subject = SubjectFactory(external_id="ana", owner=make_user("ana-login"))
    user = None if who == "anonymous" else make_user("bob-login")
    communicator = playground_socket(user, subject.pk)

    async def connect():
        ok, _ = await communicator.connect(timeout=RECEIVE_TIMEOUT)
        return ok

    assert async_to_sync(connect)() is False


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_staff_may_use_any_subjects_playground(in_memory_layer):
    subject = SubjectFactory(external_id="ana", owner=make_user("ana-login"))
    staff = make_user("operator", is_staff=True)

    received = converse(playground_socket(staff, subject.pk), "Hello")

    assert received[-1]["type"] == "done"
    assert Message.objects.filter(conversation__subject=subject).count() == 2
