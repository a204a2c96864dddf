"""Selection by applicability (memory/ranking/applicability.py): the same person's memory gives
a coding_debug and a companion conversation different, policy-correct contexts."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.context import context_build
from memory.models import NoteLink
from memory.services import fact_set
from tests.factories import ConversationFactory, NoteFactory


def ids(context) -> set[str]:
    return {item["id"] for item in context.as_dict()["items"]}


def tail(context) -> str:
    return context.as_dict()["tail"]


@pytest.fixture
def person(subject, actor):
    """Alice, who codes on billing-api and talks about her life."""
    coding = ConversationFactory(subject=subject, scope="billing-api", mode="coding_debug")
    companion = ConversationFactory(subject=subject, scope="billing-api", mode="companion")
    research = ConversationFactory(subject=subject, scope="billing-api", mode="research_deep_dive")
    brainstorm = ConversationFactory(subject=subject, scope="billing-api", mode="brainstorm")
    return {"coding": coding, "companion": companion, "research": research, "brainstorm": brainstorm}


def test_a_companion_qualified_fact_renders_in_companion_but_not_in_coding_debug(
    subject, actor, config, person
):
    fact = fact_set(
        subject=subject,
        key="comfort",
        value="talk about her dog Biscuit when she is stressed",
        mode="companion",
        pinned=False,
        keywords=["stressed"],
        actor=actor,
    )[0]
    message = "I am so stressed about the deploy failing again"

    coding = context_build(
        subject=subject, message=message, config=config, conversation=person["coding"], record=False
    )
    companion = context_build(
        subject=subject, message=message, config=config, conversation=person["companion"], record=False
    )

    assert f"f:{fact.pk}" not in ids(coding) and "Biscuit" not in tail(coding)
    assert f"f:{fact.pk}" in ids(companion) and "Biscuit" in tail(companion)


def test_an_approved_health_note_is_absent_in_coding_debug_and_present_in_companion(subject, config, person):
    # approved (its consent category `health` let it be stored), but above coding_debug's ceiling
    note = NoteFactory(
        subject=subject, content="Alice feels anxious since the panic attack at work", category="health"
    )
    message = "I feel anxious at work again"

    coding = context_build(
        subject=subject, message=message, config=config, conversation=person["coding"], record=False
    )
    companion = context_build(
        subject=subject, message=message, config=config, conversation=person["companion"], record=False
    )

    assert f"n:{note.pk}" not in ids(coding) and "panic attack" not in tail(coding)
    assert f"n:{note.pk}" in ids(companion) and "panic attack" in tail(companion)


def test_another_projects_note_is_reached_in_research_and_brainstorm_but_not_coding_debug(
    subject, config, person
):
    other = NoteFactory(
        subject=subject, content="In the ledger-service we retried webhooks with jitter", scope="ledger"
    )
    message = "how should webhooks be retried with jitter"

    contexts = {
        name: context_build(
            subject=subject, message=message, config=config, conversation=person[name], record=False
        )
        for name in ("coding", "research", "brainstorm")
    }

    assert f"n:{other.pk}" not in ids(contexts["coding"])
    assert f"n:{other.pk}" in ids(contexts["research"])
    assert f"n:{other.pk}" in ids(contexts["brainstorm"])


def test_a_mode_without_unscoped_gets_no_unscoped_note(subject, config, person):
    from memory.modes import mode_from_manifest, mode_get

    manifest = {**mode_get("coding_debug").manifest, "name": "strict_project", "scopes": ["same"]}
    strict = mode_from_manifest(manifest, source="strict_project.json", builtin=True)
    unscoped = NoteFactory(subject=subject, content="webhooks retried with exponential backoff", scope="")
    mine = NoteFactory(
        subject=subject, content="billing webhooks retried with exponential backoff", scope="billing-api"
    )

    context = context_build(
        subject=subject,
        message="webhooks retried backoff",
        config=config,
        conversation=person["coding"],
        mode=strict,
        record=False,
    )

    assert f"n:{mine.pk}" in ids(context)
    assert f"n:{unscoped.pk}" not in ids(context)


def test_a_superseded_fact_never_renders_in_any_mode(subject, actor, config, person):
    old = fact_set(subject=subject, key="editor", value="vim for the billing code", actor=actor)[0]
    new = fact_set(subject=subject, key="editor", value="emacs for the billing code", actor=actor)[0]

    for conversation in person.values():
        context = context_build(
            subject=subject,
            message="which editor for the billing code",
            config=config,
            conversation=conversation,
            record=False,
        )
        assert f"f:{old.pk}" not in ids(context)
        assert "vim" not in tail(context)
    general = context_build(
        subject=subject, message="which editor for the billing code", config=config, record=False
    )
    assert f"f:{new.pk}" in ids(general) and "vim" not in tail(general)


def test_near_duplicates_do_not_fill_a_section(subject, config, person):
    texts = [
        "The billing webhook retries use exponential backoff with jitter",
        "The billing webhook retries use exponential backoff with jitter!",
        "billing webhook retries use exponential backoff with jitter",
    ]
    notes = [NoteFactory(subject=subject, content=text, scope="billing-api") for text in texts]
    different = NoteFactory(
        subject=subject, content="Webhook retries for billing stop after five attempts", scope="billing-api"
    )

    context = context_build(
        subject=subject,
        message="billing webhook retries backoff",
        config=config,
        conversation=person["coding"],
        record=False,
    )

    recalled = [i["id"] for i in context.as_dict()["items"] if i["section"] == "recalled"]
    assert len({f"n:{n.pk}" for n in notes} & set(recalled)) == 1
    assert f"n:{different.pk}" in recalled


def test_when_nothing_applies_nothing_is_rendered(subject, actor, config, person):
    fact_set(subject=subject, key="name", value="Alice", actor=actor)  # pinned
    # shares one incidental word of the message: a candidate, but no answer to it
    NoteFactory(subject=subject, content="Alice keeps an empty jar for coins")
    message = "the parser segfaults when the config file is empty, why?"

    coding = context_build(
        subject=subject, message=message, config=config, conversation=person["coding"], record=False
    )
    general = context_build(subject=subject, message=message, config=config, record=False)

    assert coding.as_dict()["items"] == [] and tail(coding) == ""
    # the default mode keeps rendering the pinned facts as before
    assert "- name: Alice" in tail(general) and "empty jar" in tail(general)


def test_every_item_carries_its_breakdown_and_its_score_is_the_final(subject, config, memories):
    context = context_build(
        subject=subject, message="Any Lisbon restaurant tips?", config=config, record=False
    )

    items = context.as_dict()["items"]
    assert items
    for item in items:
        breakdown = item["applicability"]
        assert set(breakdown) == {
            "task_fit",
            "mode_fit",
            "temporal",
            "epistemic",
            "risk",
            "applicability",
            "retrieval",
            "vitality",
            "confirmation",
            "privacy_penalty",
            "contradiction_penalty",
            "intrusive_penalty",
            "final",
            "judge",
        }
        assert breakdown["judge"] == "heuristic"
        assert item["score"] == pytest.approx(breakdown["final"], abs=1e-4)


def test_an_allergy_matters_when_the_message_is_about_food(subject, actor, config, person):
    allergy = fact_set(
        subject=subject, key="allergy", value="peanuts", pinned=False, keywords=["dinner"], actor=actor
    )[0]

    context = context_build(
        subject=subject,
        message="what should I cook for dinner",
        config=config,
        conversation=person["companion"],
        record=False,
    )

    item = next(i for i in context.as_dict()["items"] if i["id"] == f"f:{allergy.pk}")
    assert item["applicability"]["risk"] == 1.0


def test_a_note_contradicted_by_a_newer_one_is_penalised(subject, config):
    old = NoteFactory(
        subject=subject,
        content="Alice runs the Lisbon marathon in spring",
        occurred_at=timezone.now() - timedelta(days=9),
    )
    new = NoteFactory(
        subject=subject,
        content="Alice will not run the Lisbon marathon after all",
        occurred_at=timezone.now(),
    )
    NoteLink.objects.create(src=new, dst=old, kind="contradicts")

    items = {
        i["id"]: i
        for i in context_build(
            subject=subject, message="Lisbon marathon", config=config, record=False
        ).as_dict()["items"]
    }

    assert items[f"n:{old.pk}"]["applicability"]["contradiction_penalty"] == pytest.approx(0.3)
    assert items[f"n:{new.pk}"]["applicability"]["contradiction_penalty"] == 0.0


def test_a_past_plan_is_less_valid_than_a_current_state_in_a_strict_mode(subject):
    from memory.modes import mode_get
    from memory.ranking.applicability import Candidate
    from memory.ranking.applicability.heuristic import heuristic_scores

    long_ago = timezone.now() - timedelta(days=90)
    plan = NoteFactory(subject=subject, content="Alice will move to Porto next month", occurred_at=long_ago)
    state = NoteFactory(subject=subject, content="Alice lives in Porto", occurred_at=long_ago)

    def temporal(note, mode):
        candidate = Candidate("note", note, "notes", 1.0, 0, "")
        scores = heuristic_scores(
            candidate, message="Porto", terms=["porto"], mode=mode_get(mode), now=timezone.now(), said={}
        )
        return scores["temporal"]

    assert temporal(plan, "coding_debug") < temporal(state, "coding_debug") == 1.0
    assert temporal(plan, "general_qa") == 1.0  # the balanced default leaves the ranker's order


def test_a_feeling_fits_a_sensitive_mode_better_and_counts_for_nothing_in_the_balanced_one(subject):
    from memory.modes import mode_get
    from memory.ranking.applicability import Candidate
    from memory.ranking.applicability.heuristic import heuristic_scores

    feeling = NoteFactory(subject=subject, content="Alice felt lonely after the move")
    plain = NoteFactory(subject=subject, content="Alice moved to Porto after the summer")

    def mode_fit(note, mode):
        candidate = Candidate("note", note, "notes", 1.0, 0, "")
        scores = heuristic_scores(
            candidate, message="the move", terms=["move"], mode=mode_get(mode), now=timezone.now(), said={}
        )
        return scores["mode_fit"]

    assert mode_fit(feeling, "companion") > mode_fit(plain, "companion")
    assert mode_fit(feeling, "coding_debug") < mode_fit(plain, "coding_debug")
    assert mode_fit(feeling, "general_qa") == mode_fit(plain, "general_qa")  # emotionalSensitivity 0.5


def test_an_item_stops_rendering_once_the_person_denies_its_category(subject, actor, config, person):
    from memory.services.consent import consent_policy_set

    note = NoteFactory(
        subject=subject, content="Alice feels anxious since the panic attack", category="health"
    )
    message = "I feel anxious again"

    before = context_build(
        subject=subject, message=message, config=config, conversation=person["companion"], record=False
    )
    consent_policy_set(subject=subject, category="health", policy="deny", actor=actor)
    after = context_build(
        subject=subject, message=message, config=config, conversation=person["companion"], record=False
    )

    assert f"n:{note.pk}" in ids(before)
    assert f"n:{note.pk}" not in ids(after) and "panic attack" not in tail(after)
    assert type(note).objects.filter(pk=note.pk).exists()  # kept, not forgotten
