"""The interaction contract (memory/person/contract, memory/services/contract.py): what a
message says about depth, directness, pushback and pace; how signals aggregate into values
with confidence and evidence; the person's correction winning over observation; and where
`### contract` renders."""

import pytest

from chat.observe import observe_turn
from memory.context import context_build
from memory.models import AuditEvent, InteractionContract
from memory.person.contract import (
    DIMENSIONS,
    contract_observe_message,
    message_signals,
    render,
    style_votes,
)
from memory.services import app_config_set
from memory.services.contract import contract_observe, contract_reset, contract_set
from memory.services.conversations import conversation_get_or_create, message_add
from memoryweb.errors import InvalidInput

LONG_ANSWER = " ".join(["Here is a long explanation of every option and its background."] * 20)


def _moves(text, previous=""):
    return {(s.dimension, s.direction) for s in message_signals(text, previous=previous).signals}


# --- reading one message: phrasings, not sentences -------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Keep your replies tight from now on.",
        "could you be a little more concise",
        "Only paste the regex, nothing else.",
        "skip all the background please",
        "answer in two sentences max",
        "Honestly that's far too wordy.",
        "tl;dr?",
        "Get to the point.",
    ],
)
def test_requests_for_brevity_in_many_wordings_move_depth_to_brief(text):
    assert ("depth", -1) in _moves(text)


@pytest.mark.parametrize(
    "text",
    [
        "Can you go into more detail on the second option?",
        "I'd love a more thorough explanation",
        "please elaborate",
        "that's a bit too superficial",
        "Walk me through the reasoning behind it",
        "don't dumb it down for me",
    ],
)
def test_requests_for_depth_move_depth_to_detailed(text):
    assert ("depth", 1) in _moves(text)


@pytest.mark.parametrize(
    "text,direction",
    [
        ("Don't sugar-coat it, is my plan bad?", 1),
        ("Give me your honest opinion.", 1),
        ("stop hedging and tell me", 1),
        ("be brutally frank with me", 1),
        ("Whoa, that was a bit condescending.", -1),
        ("please be gentler when you review my essays", -1),
        ("go easy on me, it's my first try", -1),
    ],
)
def test_directness_requests_and_complaints(text, direction):
    assert ("directness", direction) in _moves(text)


@pytest.mark.parametrize(
    "text,dimension,direction",
    [
        ("slow down a little, one change at a time", "pace", -1),
        ("Hold my hand less, I have done this before", "pace", 1),
        ("Let's move on to the deployment part", "pace", 1),
        ("poke holes in this architecture", "pushback", 1),
        ("don't just agree with everything I say", "pushback", 1),
        ("Stop second-guessing me, I know what I'm doing", "pushback", -1),
    ],
)
def test_pace_and_pushback_requests(text, dimension, direction):
    assert (dimension, direction) in _moves(text)


def test_a_negation_turns_a_request_around():
    assert _moves("don't be so blunt") == {("directness", -1)}
    assert _moves("no need to be so detailed") == {("depth", -1)}
    assert ("depth", -1) not in _moves("don't be brief about it")


def test_words_that_only_look_like_requests_move_nothing():
    for text in (
        "The build takes too long on CI",
        "run the tests with --verbose and paste the log",
        "I wrote a short story about a cat",
        "Is the direct flight cheaper?",
    ):
        assert _moves(text) == set(), text


def test_pushback_taken_or_refused_counts_more_right_after_the_assistant_pushed_back():
    pushed = "I'd advise against rewriting the whole module at once; a safer approach is one file first."
    plain = "Done, the file is renamed."

    taken = message_signals("fair point, you're right", previous=pushed).signals
    weak = message_signals("fair point, you're right", previous=plain).signals
    refused = message_signals("no, do it my way", previous=pushed).signals

    assert [(s.dimension, s.direction, s.kind) for s in taken] == [("pushback", 1, "pushback")]
    assert taken[0].weight > weak[0].weight
    assert [(s.dimension, s.direction) for s in refused] == [("pushback", -1)]


def test_a_bare_correction_reads_the_miss_from_the_answer_it_corrects():
    after_long = message_signals("No, that's not what I asked.", previous=LONG_ANSWER)
    after_short = message_signals("no, that's not what I asked", previous="Use git.")
    after_pushback = message_signals(
        "that's not what I asked", previous="I'd push back on that: are you sure you want to drop the index?"
    )

    assert after_long.correction and _moves("No, that's not what I asked.", LONG_ANSWER) == {("depth", -1)}
    assert {(s.dimension, s.direction) for s in after_short.signals} == {("depth", 1)}
    assert {(s.dimension, s.direction) for s in after_pushback.signals} == {("pushback", -1)}


def test_a_correction_strengthens_the_request_it_comes_with():
    plain = message_signals("just the command").signals[0]
    corrected = message_signals("no, that's not what I asked, just the command").signals[0]

    assert corrected.dimension == "depth" and corrected.weight > plain.weight


def test_style_votes_read_length_without_pasted_code_and_softeners():
    log = "it fails:\n```\n" + "\n".join(f'  File "app.py", line {i}, in run' for i in range(40)) + "\n```"

    assert style_votes("fix it")["depth"] == -1.0
    assert (
        style_votes(" ".join(["I have been thinking about how the system should grow"] * 9))["depth"] == 1.0
    )
    assert style_votes(log)["depth"] == -1.0  # two words of prose, the log does not count
    assert style_votes("could you please maybe look at this when you have time")["directness"] == -1.0
    assert style_votes("ok thanks!") == {}
    assert style_votes("next") == {"pace": 1.0}


# --- aggregating: values with confidence and evidence ------------------------------------------
def _observe(dimensions, texts, previous=""):
    for i, text in enumerate(texts, start=1):
        dimensions, _ = contract_observe_message(
            dimensions, text=text, previous=previous, message_id=i, at=f"2026-01-01T00:00:{i:02d}+00:00"
        )
    return dimensions


def test_one_explicit_request_is_confident_enough_to_render_with_its_evidence():
    dimensions = _observe({}, ["Please keep it short, I only need the command."])

    depth = dimensions["depth"]
    assert depth["value"] == "brief" and depth["source"] == "observed"
    assert 0.35 <= depth["confidence"] < 1 and depth["evidence"] == [1]
    assert "request" in depth["reason"]


def test_agreeing_signals_raise_confidence_and_disagreeing_ones_lower_it():
    once = _observe({}, ["be brief"])["depth"]["confidence"]
    thrice = _observe({}, ["be brief", "shorter answers please", "too long, just the fix"])["depth"]
    mixed = _observe({}, ["be brief", "can you elaborate on that", "more detail please"])["depth"]

    assert thrice["confidence"] > once
    assert thrice["evidence"] == [1, 2, 3]
    assert mixed["confidence"] < once
    assert mixed["value"] != "brief"


def test_style_alone_is_weak_evidence_a_single_request_outweighs_it():
    few = _observe({}, ["fix it", "now the tests", "rename it", "push", "same for api", "run it"])
    terse = _observe({}, ["fix it", "now the tests", "rename it", "push", "same for api", "run it"] * 5)
    request = _observe({}, ["be brief"])["depth"]["confidence"]

    assert few["depth"]["value"] == "brief" and few["depth"]["confidence"] < 0.35  # not yet a contract
    assert terse["depth"]["evidence"] == [] and 0.35 <= terse["depth"]["confidence"] < request
    turned = _observe(terse, ["please go into more detail, I want to understand why"])

    assert turned["depth"]["value"] == "detailed"


def test_render_shows_confident_dimensions_with_their_evidence_count_under_the_cap():
    dimensions = _observe({}, ["be brief", "don't sugarcoat anything", "be brief and blunt"])

    text, omitted = render(dimensions, min_confidence=0.35, cap=120)
    tiny, tiny_omitted = render(dimensions, min_confidence=0.35, cap=30)
    strict, _ = render(dimensions, min_confidence=0.95, cap=120)

    assert text.startswith("### contract\n") and omitted == 0
    assert "- depth: brief — " in text and "2 signals" in text
    assert "- directness: blunt — " in text
    assert tiny.count("\n- ") == 1 and tiny_omitted == 1
    assert strict == ""


# --- the service: observation, the person's correction, reset ---------------------------------
@pytest.fixture
def coding(subject, actor):
    conversation, _ = conversation_get_or_create(
        subject=subject, external_id="dbg", mode="coding_debug", actor=actor
    )
    return conversation


def _turn(conversation, actor, user, answer="Sure."):
    said, _ = message_add(conversation=conversation, role="user", text=user, actor=actor)
    reply, _ = message_add(conversation=conversation, role="assistant", text=answer, actor=actor)
    return [said, reply]


def test_observing_a_turn_writes_the_modes_contract_and_audits_it(subject, actor, config, coding):
    messages = _turn(coding, actor, "just give me the command, no explanation")

    stats = contract_observe(messages=messages, subject=subject, actor=actor, config=config)

    contract = InteractionContract.objects.get(subject=subject)
    assert contract.mode == "coding_debug" and contract.observations == 1
    assert contract.dimensions["depth"]["value"] == "brief"
    assert contract.dimensions["depth"]["evidence"] == [messages[0].pk]
    assert stats == {"messages": 1, "signals": 1, "corrections": 0, "modes": ["coding_debug"]}
    assert AuditEvent.objects.filter(action="contract.observed", subject=subject).count() == 1


def test_the_same_message_is_not_counted_twice(subject, actor, config, coding):
    messages = _turn(coding, actor, "be brief")
    contract_observe(messages=messages, subject=subject, actor=actor, config=config)

    again = contract_observe(messages=messages, subject=subject, actor=actor, config=config)

    assert again == {}
    assert InteractionContract.objects.get().dimensions["depth"]["explicit"]["signals"] == 1


def test_a_correction_reads_the_previous_answer_from_an_earlier_turn(subject, actor, config, coding):
    message_add(conversation=coding, role="user", text="how do I list open ports", actor=actor)
    message_add(conversation=coding, role="assistant", text=LONG_ANSWER, actor=actor)
    messages = _turn(coding, actor, "no, that's not what I asked")

    stats = contract_observe(messages=messages, subject=subject, actor=actor, config=config)

    assert stats["corrections"] == 1
    assert InteractionContract.objects.get().dimensions["depth"]["value"] == "brief"


def test_each_mode_learns_its_own_contract(subject, actor, config, coding):
    research, _ = conversation_get_or_create(
        subject=subject, external_id="r", mode="research_deep_dive", actor=actor
    )
    contract_observe(messages=_turn(coding, actor, "be brief"), subject=subject, actor=actor, config=config)
    contract_observe(
        messages=_turn(research, actor, "go deeper, I want all the detail"),
        subject=subject,
        actor=actor,
        config=config,
    )

    values = {c.mode: c.dimensions["depth"]["value"] for c in InteractionContract.objects.all()}
    assert values == {"coding_debug": "brief", "research_deep_dive": "detailed"}


def test_a_persons_correction_wins_over_observation_until_reset(subject, actor, config, coding):
    contract_observe(messages=_turn(coding, actor, "be brief"), subject=subject, actor=actor, config=config)

    contract_set(
        subject=subject,
        mode="coding_debug",
        values={"depth": "detailed"},
        reason="I like to learn",
        actor=actor,
        config=config,
    )
    for text in ("be brief", "too long", "just the command", "shorter please"):
        contract_observe(messages=_turn(coding, actor, text), subject=subject, actor=actor, config=config)

    depth = InteractionContract.objects.get().dimensions["depth"]
    assert depth["value"] == "detailed" and depth["source"] == "person" and depth["confidence"] == 1.0
    assert depth["reason"] == "I like to learn"
    assert AuditEvent.objects.filter(action="contract.set").count() == 1

    dropped = contract_reset(subject=subject, mode="coding_debug", dimension="depth", actor=actor)
    contract_observe(messages=_turn(coding, actor, "be brief"), subject=subject, actor=actor, config=config)

    assert dropped == 1
    depth = InteractionContract.objects.get().dimensions["depth"]
    assert depth["source"] == "observed" and depth["value"] == "brief"


def test_contract_set_refuses_unknown_modes_dimensions_and_values_naming_the_field(subject, actor, config):
    cases = [
        ({"mode": "nope", "values": {"depth": "brief"}}, "mode"),
        ({"mode": "coding_debug", "values": {"tone": "warm"}}, "tone"),
        ({"mode": "coding_debug", "values": {"pace": "brief"}}, "pace"),
        ({"mode": "coding_debug", "values": {}}, "depth"),
    ]
    for kwargs, field in cases:
        with pytest.raises(InvalidInput) as error:
            contract_set(subject=subject, actor=actor, config=config, **kwargs)
        assert error.value.field == field
    assert not InteractionContract.objects.exists()


def test_reset_of_every_mode_drops_the_rows_and_is_safe_to_repeat(subject, actor, config, coding):
    contract_set(subject=subject, mode="coding_debug", values={"pace": "fast"}, actor=actor, config=config)
    contract_set(
        subject=subject, mode="companion", values={"directness": "diplomatic"}, actor=actor, config=config
    )

    assert contract_reset(subject=subject, actor=actor) == 2
    assert contract_reset(subject=subject, actor=actor) == 0
    assert not InteractionContract.objects.exists()


def test_reflection_runs_the_contract_observer(subject, actor, config, coding):
    messages = _turn(coding, actor, "Don't sugarcoat it: is this design bad?")

    stats = observe_turn(messages=messages, subject=subject, actor=actor, config=config)

    assert stats["contract"]["signals"] == 1
    assert InteractionContract.objects.get().dimensions["directness"]["value"] == "blunt"


def test_with_the_contract_switched_off_nothing_is_observed_or_rendered(subject, actor, app, coding):
    from memory.config import get_config

    contract_set(
        subject=subject, mode="coding_debug", values={"depth": "brief"}, actor=actor, config=get_config(app)
    )
    app_config_set(app=app, config={"memory": {"contract": {"enabled": False}}}, actor=actor)
    config = get_config(app)

    stats = contract_observe(
        messages=_turn(coding, actor, "be blunt"), subject=subject, actor=actor, config=config
    )
    context = context_build(subject=subject, message="why does it crash", config=config, conversation=coding)

    assert stats == {}
    assert "directness" not in InteractionContract.objects.get().dimensions
    assert "### contract" not in context.as_dict()["tail"]


# --- rendering in the context where the mode asks for it --------------------------------------
def test_the_contract_renders_in_coding_debug_and_not_in_brainstorm(subject, actor, config, coding):
    contract_observe(
        messages=_turn(coding, actor, "just give me the command, no explanations"),
        subject=subject,
        actor=actor,
        config=config,
    )
    brainstorm, _ = conversation_get_or_create(
        subject=subject, external_id="b", mode="brainstorm", actor=actor
    )
    contract_observe(
        messages=_turn(brainstorm, actor, "be brief"), subject=subject, actor=actor, config=config
    )

    debugging = context_build(subject=subject, message="the build fails", config=config, conversation=coding)
    ideas = context_build(subject=subject, message="names for a cafe", config=config, conversation=brainstorm)

    block = next(b for b in debugging.sections if b.name == "contract")
    assert block.text.startswith("### contract\n- depth: brief")
    assert "### contract" in debugging.as_dict()["tail"]
    assert "### contract" not in ideas.as_dict()["tail"]
    assert InteractionContract.objects.filter(mode="brainstorm").exists()  # learned, just not shown there


def test_a_dimension_below_min_confidence_does_not_render(subject, actor, app, coding):
    from memory.config import get_config

    app_config_set(app=app, config={"memory": {"contract": {"minConfidence": 0.9}}}, actor=actor)
    config = get_config(app)
    contract_observe(messages=_turn(coding, actor, "be brief"), subject=subject, actor=actor, config=config)

    context = context_build(subject=subject, message="the build fails", config=config, conversation=coding)

    assert "### contract" not in context.as_dict()["tail"]


def test_every_dimension_has_guidance_for_each_value():
    from memory.person.contract import GUIDANCE

    assert {(d, v) for d, values in DIMENSIONS.items() for v in values} == set(GUIDANCE)
