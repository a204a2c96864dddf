"""Consequence chains (memory/person/consequences.py, memory/services/consequences.py): a
reported outcome of the assistant's advice becomes action → outcome → tendency, linked to the
advice turn; `### consequences` shows the relevant chains when the person is stuck again."""

import json

import httpx2
import pytest

from chat.reflect import reflection_enqueue, turn_reflect
from memory.config import get_config
from memory.context import context_build
from memory.models import AuditEvent, Consequence, Subject
from memory.person.consequences import action_gist, loop_signals, outcome_report, tendency_of
from memory.services import app_config_set
from memory.services.consequences import consequence_delete, consequence_edit
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.errors import InvalidInput
from memoryweb.llm import set_http_client_factory
from memoryweb.models import Counter
from tests.factories import SubjectFactory
from tests.llm_wire import anthropic_tool_message

ADVICE = (
    "The lint errors come from mixed formatting. Run `black .` on the whole repository to "
    "reformat every file at once, then commit the result."
)


@pytest.mark.parametrize(
    "text,outcome",
    [
        ("that broke the build", "failure"),
        ("Tried it, the CI is red now and everything broke", "failure"),
        ("hm, that didn't help at all", "failure"),
        ("your change made it worse, now it crashes on start", "failure"),
        ("It worked, thanks!", "success"),
        ("that fixed it, all green now", "success"),
        ("ran the command and it did the trick", "success"),
    ],
)
def test_outcome_reports_in_many_wordings(text, outcome):
    report = outcome_report(text)

    assert report is not None and report.outcome == outcome


@pytest.mark.parametrize(
    "text",
    [
        "Could you explain what a reverse proxy is?",
        "it didn't break anything, I just want to understand the flag",
        "Thanks for the explanation of monads",
        "",
    ],
)
def test_messages_that_report_no_outcome(text):
    assert outcome_report(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "still failing",
        "Same error again, see the log",
        "the deploy failed again this morning",
        "ok that's still not working",
        "we're back to square one",
        "it keeps crashing with the new config",
    ],
)
def test_failure_and_loop_signals(text):
    assert loop_signals(text)


@pytest.mark.parametrize(
    "text",
    ["thanks, that makes sense", "let's move on to the README", "can you say it again more slowly?"],
)
def test_calm_messages_have_no_loop_signal(text):
    assert loop_signals(text) == []


def test_the_action_is_the_sentence_that_tells_the_person_to_do_something():
    assert action_gist(ADVICE).startswith("Run `black .` on the whole repository")
    advice = "Sure! I'd suggest you pin numpy to 1.26 in requirements.txt. That avoids the ABI change."
    assert action_gist(advice) == "I'd suggest you pin numpy to 1.26 in requirements.txt."
    assert action_gist("Hello there. Nice weather.") == "Hello there."


@pytest.mark.parametrize(
    "action,outcome,expected",
    [
        ("Run black on the whole repository", "failure", "fragile to sweeping changes"),
        ("Refactor every handler to the new API at once", "failure", "fragile to sweeping changes"),
        ("Upgrade django to 5.2 with pip install -U django", "failure", "fragile to dependency changes"),
        ("Set the DEBUG environment variable to false", "failure", "sensitive to configuration changes"),
        ("Drop the table and migrate again", "failure", "destructive operations"),
        ("Add a retry around the HTTP call", "failure", "did not hold here"),
        ("Add a retry around the HTTP call", "success", "works in this setup"),
    ],
)
def test_the_tendency_follows_the_kind_of_change(action, outcome, expected):
    assert expected in tendency_of(action=action, report="", outcome=outcome)


# --- through reflection -----------------------------------------------------------------------


@pytest.fixture
def conversation(subject, actor):
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id="repo", mode="coding_debug", scope="acme/api", actor=actor
    )
    return conversation


def say(conversation, actor, role, text):
    return message_add(conversation=conversation, role=role, text=text, actor=actor)[0]


def reflect(conversation, through):
    run = reflection_enqueue(conversation=conversation, through_message=through)
    return turn_reflect(run_id=run.pk)


@pytest.fixture
def reported(conversation, actor):
    """The person asked, the assistant advised a sweeping change, the person reported it broke
    the build; reflection ran over the report."""
    say(conversation, actor, "user", "How do I get rid of these lint errors in the api?")
    advice = say(conversation, actor, "assistant", ADVICE)
    report = say(conversation, actor, "user", "that broke the build")
    stats = reflect(conversation, report)
    return advice, report, stats


def sections(context) -> dict[str, str]:
    return {block.name: block.text for block in context.sections}


def test_a_reported_failure_becomes_a_chain_linked_to_the_advice_turn(subject, conversation, reported):
    advice, report, stats = reported

    chain = Consequence.objects.get(subject=subject)
    assert chain.advice_message_id == advice.pk and chain.outcome_message_id == report.pk
    assert chain.conversation_id == conversation.pk
    assert chain.outcome == "failure" and chain.outcome_text == "that broke the build"
    assert chain.action.startswith("Run `black .` on the whole repository")
    assert "fragile to sweeping changes" in chain.tendency
    assert (chain.mode, chain.scope, chain.origin) == ("coding_debug", "acme/api", "reflection")
    assert stats["observed"]["consequences"] == {"recorded": 1}
    assert AuditEvent.objects.filter(action="consequence.recorded", object_id=str(chain.pk)).exists()


def test_reflecting_the_same_report_again_records_no_second_chain(conversation, reported):
    _advice, report, _ = reported
    reflect(conversation, report)  # a newer run over the same turn (nothing new since)

    assert Consequence.objects.count() == 1


def test_a_report_without_advice_before_it_records_nothing(subject, conversation, actor):
    report = say(conversation, actor, "user", "that broke the build")
    reflect(conversation, report)

    assert not Consequence.objects.exists()


def test_the_chain_shows_when_the_person_is_stuck_again_and_is_marked_surfaced(
    subject, conversation, reported, config
):
    context = context_build(
        subject=subject, message="still failing, same error again", config=config, conversation=conversation
    )

    text = sections(context)["consequences"]
    assert text.startswith("### consequences\n")
    assert "Run `black .` on the whole repository" in text and "that broke the build" in text
    assert "fragile to sweeping changes" in text
    chain = Consequence.objects.get()
    assert chain.surfaced_count == 1 and chain.last_surfaced_at is not None


def test_a_calm_message_shows_no_chain_and_marks_nothing(subject, conversation, reported, config):
    context = context_build(
        subject=subject,
        message="thanks, what does the flake8 config do?",
        config=config,
        conversation=conversation,
    )

    assert sections(context)["consequences"] == ""
    assert Consequence.objects.get().surfaced_count == 0


def test_an_unrecorded_build_shows_the_chain_without_marking_it(subject, conversation, reported, config):
    context = context_build(
        subject=subject, message="still failing", config=config, conversation=conversation, record=False
    )

    assert sections(context)["consequences"]
    assert Consequence.objects.get().surfaced_count == 0


def test_a_stuck_message_is_never_served_from_the_context_cache(subject, conversation, reported, config):
    context_build(
        subject=subject, message="lint errors in the api build", config=config, conversation=conversation
    )

    context = context_build(
        subject=subject,
        message="lint errors in the api build, still failing",
        config=config,
        conversation=conversation,
    )

    assert not context.from_cache
    assert "fragile to sweeping changes" in sections(context)["consequences"]


def test_an_unrelated_conversation_does_not_get_the_chain(subject, actor, reported, config):
    elsewhere, _ = conversation_get_or_create(subject=subject, external_id="garden", actor=actor)

    context = context_build(
        subject=subject,
        message="the tomato seedlings keep dying, still failing",
        config=config,
        conversation=elsewhere,
    )

    assert sections(context)["consequences"] == ""


def test_the_mode_can_keep_the_chains_out(subject, conversation, reported, config):
    context = context_build(
        subject=subject, message="still failing", config=config, conversation=conversation, mode="companion"
    )

    assert sections(context)["consequences"] == ""  # companion: renders.consequences false


def test_another_subjects_chains_never_show(app, actor, reported, config):
    bob = SubjectFactory(app=app, external_id="bob")
    theirs, _ = conversation_get_or_create(subject=bob, external_id="repo", scope="acme/api", actor=actor)

    context = context_build(
        subject=bob, message="lint errors, still failing", config=config, conversation=theirs
    )

    assert sections(context)["consequences"] == ""


def test_the_most_relevant_chains_come_first_under_the_limit(subject, conversation, actor, reported, app):
    other, _ = conversation_get_or_create(subject=subject, external_id="other", scope="acme/api", actor=actor)
    say(other, actor, "assistant", "Try to restart the worker with `make restart`.")
    report = say(other, actor, "user", "it worked, thanks")
    reflect(other, report)
    app_config_set(app=app, config={"memory": {"consequences": {"limit": 1}}}, actor=actor)

    context = context_build(
        subject=subject, message="still failing", config=get_config(app), conversation=conversation
    )

    block = next(b for b in context.sections if b.name == "consequences")
    assert "black" in block.text and "restart" not in block.text  # same conversation, a failure
    assert block.omitted == 1


def test_consequences_enabled_off_records_and_shows_nothing(app, actor, subject, conversation):
    app_config_set(app=app, config={"memory": {"consequences": {"enabled": False}}}, actor=actor)
    say(conversation, actor, "assistant", ADVICE)
    report = say(conversation, actor, "user", "that broke the build")
    reflect(conversation, report)

    assert not Consequence.objects.exists()


# --- corrections ------------------------------------------------------------------------------


def test_the_person_corrects_the_tendency(reported, actor):
    chain = Consequence.objects.get()

    edited = consequence_edit(consequence=chain, tendency="CI runs black 23, locally 24", actor=actor)

    chain.refresh_from_db()
    assert chain.tendency == edited.tendency == "CI runs black 23, locally 24"
    assert chain.confidence == 1.0
    assert AuditEvent.objects.filter(action="consequence.edited").count() == 1


@pytest.mark.parametrize(
    "changes,field",
    [({"outcome": "meh"}, "outcome"), ({"action": "   "}, "action"), ({"tendency": "x" * 201}, "tendency")],
)
def test_an_invalid_correction_names_its_field_and_writes_nothing(reported, actor, changes, field):
    chain = Consequence.objects.get()
    before = (chain.action, chain.outcome, chain.tendency)

    with pytest.raises(InvalidInput) as error:
        consequence_edit(consequence=chain, actor=actor, **{"tendency": "a new one", **changes})

    assert error.value.field == field
    chain.refresh_from_db()
    assert (chain.action, chain.outcome, chain.tendency) == before


def test_deleting_a_chain_keeps_its_messages(reported, actor):
    advice, report, _ = reported

    consequence_delete(consequence=Consequence.objects.get(), actor=actor)

    assert not Consequence.objects.exists()
    assert advice.__class__.objects.filter(pk__in=[advice.pk, report.pk]).count() == 2
    assert AuditEvent.objects.filter(action="consequence.deleted").exists()


# --- llm.consequences over the wire ---------------------------------------------------------------


@pytest.fixture
def llm_app(app, actor):
    app_config_set(app=app, config={"memory": {"llm": {"consequences": "openai/gpt-4o-mini"}}}, actor=actor)
    return app


def _turn(conversation, actor, text="that broke the build"):
    say(conversation, actor, "assistant", ADVICE)
    return say(conversation, actor, "user", text)


def test_the_model_words_the_chain(llm_app, subject, conversation, actor, openai_wire):
    openai_wire.answer_json(
        {
            "report": True,
            "outcome": "failure",
            "action": "reformat the whole repository with black",
            "outcome_text": "the build broke",
            "tendency": "CI pins an older black than local",
            "confidence": 0.9,
        }
    )

    stats = reflect(conversation, _turn(conversation, actor))

    prompt = openai_wire.requests[-1]["messages"][-1]["content"]
    assert "<advice>\nThe lint errors come from mixed formatting." in prompt
    assert "<message>\nthat broke the build\n</message>" in prompt
    chain = Consequence.objects.get()
    assert (chain.action, chain.tendency, chain.confidence) == (
        "reformat the whole repository with black",
        "CI pins an older black than local",
        0.9,
    )
    assert stats["observed"]["consequences"] == {"recorded": 1, "llm": 1}
    assert AuditEvent.objects.get(action="consequence.recorded").data["decided_by"] == "llm"


def test_the_model_can_say_it_is_no_report(llm_app, conversation, actor, openai_wire):
    openai_wire.answer_json(
        {
            "report": False,
            "outcome": "failure",
            "action": "",
            "outcome_text": "",
            "tendency": "",
            "confidence": 0.2,
        }
    )

    stats = reflect(conversation, _turn(conversation, actor, "that broke my heart, the movie I mean"))

    assert not Consequence.objects.exists()
    assert stats["observed"]["consequences"] == {"rejected_by_llm": 1}


@pytest.mark.parametrize(
    "answer,counter",
    [
        ('{"report": tru', "llm.fallback.consequences.invalid_json"),
        (json.dumps({"verdict": "failure"}), "llm.fallback.consequences.schema_mismatch"),
        (
            json.dumps(
                {
                    "report": True,
                    "outcome": "failure",
                    "action": " ",
                    "outcome_text": "x",
                    "tendency": "",
                    "confidence": 1,
                }
            ),
            "llm.fallback.consequences.invalid_chain",
        ),
    ],
)
def test_an_unusable_answer_falls_back_to_the_heuristic(
    llm_app, conversation, actor, openai_wire, answer, counter
):
    openai_wire.answer_text(answer)

    reflect(conversation, _turn(conversation, actor))

    chain = Consequence.objects.get()
    assert "fragile to sweeping changes" in chain.tendency  # the heuristic's
    assert Counter.objects.get(name=counter).value == 1


def test_a_failing_provider_falls_back_to_the_heuristic(llm_app, conversation, actor, openai_wire):
    # no answer queued: the fake provider answers 500 to every try

    reflect(conversation, _turn(conversation, actor))

    assert Consequence.objects.get().outcome == "failure"
    assert Counter.objects.filter(name__startswith="llm.fallback.consequences.").exists()


def test_the_model_speaks_anthropic_too(app, actor, conversation, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    app_config_set(
        app=app, config={"memory": {"llm": {"consequences": "anthropic/claude-haiku-4-5"}}}, actor=actor
    )
    sent: list[dict] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sent.append(body)
        chain = {
            "report": True,
            "outcome": "success",
            "action": "reformat with black",
            "outcome_text": "lint passes",
            "tendency": "",
            "confidence": 0.7,
        }
        return httpx2.Response(200, json=anthropic_tool_message(body["tools"][0]["name"], chain))

    previous = set_http_client_factory(lambda spec: httpx2.Client(transport=httpx2.MockTransport(handler)))
    try:
        reflect(conversation, _turn(conversation, actor, "that fixed it, thanks"))
    finally:
        set_http_client_factory(previous)

    assert len(sent) == 1
    chain = Consequence.objects.get()
    assert (chain.outcome, chain.action, chain.outcome_text) == (
        "success",
        "reformat with black",
        "lint passes",
    )
    assert Subject.objects.count() == 1
