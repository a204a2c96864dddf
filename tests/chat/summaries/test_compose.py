"""Phase 2's composition (chat/summaries/compose.py, heuristic.py): what MEMORY.md, the
summary and the skills say for a set of extractions, with and without a model."""

import pytest

from chat.summaries.blocks import Skill, failure_item, workflow_item
from chat.summaries.compose import answer_composition, documents_compose, model_inputs, skill_markdown
from chat.summaries.pipeline import scope_extractions
from memory.config import get_config
from memory.tokens import estimate_tokens
from memoryweb.models import Counter
from tests.chat.summaries.phase2_rows import backend_on, extraction_write

RELEASE = ["Run the full test suite.", "Bump the version in pyproject.", "Tag the release and push the tag."]


@pytest.fixture
def config(app, actor):
    return backend_on(app, actor)


def compose(subject, config, scope=""):
    return documents_compose(
        subject=subject,
        scope=scope,
        extractions=scope_extractions(subject=subject, scope=scope),
        config=config,
    )


@pytest.fixture
def two_sessions(subject, actor):
    older = extraction_write(
        subject,
        actor,
        "c-old",
        "Fixing the flaky suite",
        {
            "decisions": [
                "Tests use a shared fixture directory.",
                "The billing service stays on Python 3.11.",
            ],
            "failures": [failure_item("The integration suite failed at random on CI", "")],
            "workflows": [workflow_item("release-checklist", RELEASE[:2])],
            "tools": ["pytest with xdist."],
            "open_questions": ["Should the invoices table get a partial index on unpaid rows?"],
        },
        days_ago=9,
        synopsis="Chased random CI failures in the integration suite.",
    )
    newer = extraction_write(
        subject,
        actor,
        "c-new",
        "Release 1.4",
        {
            "decisions": [
                "Tests use a fresh temporary directory each.",
                "The invoices table gets a partial index on unpaid rows.",
            ],
            "constraints": ["Never push to main without a green CI run."],
            "failures": [
                failure_item(
                    "The integration suite failed at random on CI",
                    "give every test its own temporary directory",
                )
            ],
            "workflows": [workflow_item("release-checklist", RELEASE)],
            "tools": ["pytest with xdist"],
            "preferences": ["Prefers short commit messages in the imperative."],
        },
        days_ago=2,
        synopsis="Cut release 1.4 after fixing the test isolation.",
    )
    return older, newer


def test_the_heuristic_merges_duplicates_and_keeps_provenance(subject, config, two_sessions):
    composition = compose(subject, config)

    memory = composition.memory_md
    assert composition.method == "heuristic"
    assert memory.startswith("# Memory\n")
    assert memory.count("pytest with xdist") == 1
    assert "“Release 1.4”; +1 earlier)" in memory
    assert "The billing service stays on Python 3.11. (" in memory and "“Fixing the flaky suite”" in memory


def test_the_newer_decision_replaces_the_older_one_about_the_same_thing(subject, config, two_sessions):
    memory = compose(subject, config).memory_md

    assert "shared fixture directory" not in memory
    assert "Tests use a fresh temporary directory each." in memory
    assert "(replaces an earlier decision)" in memory


def test_a_failure_reported_again_keeps_the_fix_and_appears_once(subject, config, two_sessions):
    memory = compose(subject, config).memory_md

    section = memory.split("## Known failures and fixes\n")[1].split("\n## ")[0]
    assert section.count("integration suite failed") == 1
    assert "Fix: give every test its own temporary directory" in section


def test_an_open_question_a_later_session_decided_is_dropped(subject, config, two_sessions):
    memory = compose(subject, config).memory_md

    assert "Should the invoices table" not in memory
    assert "## Open questions" not in memory


def test_an_open_question_nobody_answered_stays(subject, actor, config, two_sessions):
    extraction_write(
        subject,
        actor,
        "c-q",
        "Planning",
        {"open_questions": ["Which region should the replica live in?"]},
        days_ago=1,
    )

    memory = compose(subject, config).memory_md

    assert "## Open questions\n- Which region should the replica live in?" in memory


def test_a_workflow_seen_twice_becomes_a_skill_with_the_newest_steps_and_its_pitfalls(
    subject, config, two_sessions
):
    composition = compose(subject, config)

    [skill] = composition.skills
    assert skill.name == "release-checklist"
    assert skill.steps == RELEASE
    assert "in 2 conversations" in skill.description
    # the MEMORY.md line keeps the steps (one line a reader takes in) and points to the skill
    line = next(
        line for line in composition.memory_md.splitlines() if line.startswith("- release-checklist:")
    )
    assert "; ".join(RELEASE) in line
    assert "(skill: memory://root/skills/release-checklist/SKILL.md)" in line


def test_pitfalls_come_from_failures_that_share_words_with_the_workflow(subject, actor, config):
    extraction_write(
        subject,
        actor,
        "c1",
        "Deploys",
        {
            "workflows": [
                workflow_item("deploy-web", ["Build the docker image.", "Push the image.", "Roll the pods."])
            ],
            "failures": [
                failure_item("The docker image build ran out of disk", "prune old images first"),
                failure_item("The cat knocked the router off the desk", "move it"),
            ],
        },
        days_ago=1,
    )

    [skill] = compose(subject, config).skills

    assert skill.pitfalls == ["The docker image build ran out of disk. Fix: prune old images first"]


def test_a_workflow_mentioned_once_with_two_steps_is_no_skill(subject, actor, config):
    extraction_write(
        subject,
        actor,
        "c1",
        "Notes",
        {"workflows": [workflow_item("tidy-up", ["Delete branches.", "Prune."])]},
        days_ago=1,
    )

    composition = compose(subject, config)

    assert composition.skills == []
    assert "tidy-up: Delete branches.; Prune." in composition.memory_md


def test_skills_are_capped_at_max_skills_and_their_names_are_unique(subject, actor, app):
    config = backend_on(app, actor, memories={"minRolloutIdleHours": 0, "maxSkills": 2})
    steps = [
        ["Open the panel.", "Press the lever.", "Log the result."],
        ["Fetch the backups.", "Verify their checksums.", "Restore onto staging."],
        ["Draft the newsletter.", "Proofread it twice.", "Schedule the send."],
        ["Rotate the certificates.", "Reload nginx.", "Probe the endpoints."],
    ]
    workflows = [workflow_item(f"job-{n}", s) for n, s in enumerate(steps)]
    extraction_write(subject, actor, "c1", "Ops", {"workflows": workflows}, days_ago=1)

    skills = compose(subject, config).skills

    assert [s.name for s in skills] == ["job-0", "job-1"]


def test_memory_md_stays_within_its_budget_dropping_the_oldest_first(subject, actor, app):
    config = backend_on(app, actor, memories={"minRolloutIdleHours": 0, "memoryMaxTokens": 300})
    topics = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    for n, topic in enumerate(topics):
        extraction_write(
            subject,
            actor,
            f"c{n}",
            f"Session {n}",
            {"constraints": [f"Constraint number {n}: the {topic} {topic}s must keep their {topic} quirks."]},
            days_ago=20 - n,
        )

    memory = compose(subject, config).memory_md

    assert estimate_tokens(memory) <= 300
    assert "Constraint number 11:" in memory
    assert "Constraint number 0:" not in memory
    assert "older items left out" in memory


def test_the_summary_is_compact_and_carries_the_useful_items(subject, config, two_sessions):
    summary = compose(subject, config).summary_md

    assert estimate_tokens(summary) <= 600
    assert "Never push to main without a green CI run." in summary
    assert "Tests use a fresh temporary directory each." in summary
    assert "Fix: give every test its own temporary directory" in summary
    assert "Prefers short commit messages" in summary
    assert "release-checklist (memory://root/skills/release-checklist/SKILL.md)" in summary
    assert summary.rstrip().endswith("memory://root/MEMORY.md")


def test_the_summary_budget_holds_with_many_items(subject, actor, config):
    for n in range(40):
        extraction_write(
            subject,
            actor,
            f"c{n}",
            f"S{n}",
            {"decisions": [f"Service {n} uses queue {n} for retries."]},
            days_ago=n + 1,
        )

    summary = compose(subject, config).summary_md

    assert estimate_tokens(summary) <= 600
    assert "Service 0 uses queue 0" in summary  # the newest first


def test_a_project_scope_names_itself_and_links_its_own_skills(subject, actor, config):
    extraction_write(
        subject,
        actor,
        "c1",
        "Billing",
        {"workflows": [workflow_item("ship", RELEASE)]},
        days_ago=1,
        scope="billing-api",
    )

    composition = compose(subject, config, scope="billing-api")

    assert composition.memory_md.startswith("# Memory: billing-api\n")
    assert "memory://scope/billing-api/skills/ship/SKILL.md" in composition.memory_md


def test_the_same_extractions_compose_byte_identical_documents(subject, config, two_sessions):
    first, second = compose(subject, config), compose(subject, config)

    assert first.memory_md == second.memory_md
    assert first.summary_md == second.summary_md
    assert [skill_markdown(s) for s in first.skills] == [skill_markdown(s) for s in second.skills]


def test_skill_markdown_has_front_matter_numbered_steps_and_pitfalls():
    skill = Skill(
        name="release-checklist",
        description='When the user cuts a "release".',
        steps=["Run the tests.", "Tag  it."],
        pitfalls=["Tagging before the bump."],
    )

    text = skill_markdown(skill)

    assert text == (
        "---\n"
        "name: release-checklist\n"
        'description: "When the user cuts a \\"release\\"."\n'
        "---\n"
        "\n"
        "# release-checklist\n"
        "\n"
        '**When to use:** When the user cuts a "release".\n'
        "\n"
        "## Steps\n"
        "\n"
        "1. Run the tests.\n"
        "2. Tag it.\n"
        "\n"
        "## Pitfalls\n"
        "\n"
        "- Tagging before the bump.\n"
    )
    assert skill_markdown(skill) == text


# --- the model's path, at the HTTP boundary ---------------------------------------------------


@pytest.fixture
def llm_config(app, actor):
    return backend_on(app, actor, llm={"summaries": "openai/gpt-4o-mini"})


def answer(**parts):
    return {
        "memory_md": "# Memory\n\n## Decisions\n- Tests use a fresh temporary directory each (2 days ago).",
        "memory_summary": "- Tests get their own temporary directory.",
        "skills": [
            {
                "name": "Release Checklist",
                "description": "When the user cuts a release.",
                "steps": RELEASE,
                "pitfalls": ["Pushing the tag before the bump is merged."],
            },
            {"name": "one-step", "description": "Too short.", "steps": ["Do it."], "pitfalls": []},
        ],
        **parts,
    }


def test_a_valid_model_answer_is_used_with_the_model_as_method(
    subject, llm_config, two_sessions, openai_wire
):
    openai_wire.answer_json(answer())

    composition = compose(subject, llm_config)

    assert composition.method == "openai/gpt-4o-mini"
    assert composition.memory_md.startswith("# Memory\n\n## Decisions\n- Tests use a fresh")
    assert composition.summary_md == "- Tests get their own temporary directory.\n"
    assert [(s.name, s.steps) for s in composition.skills] == [("release-checklist", RELEASE)]
    assert composition.input_tokens > 0 and composition.output_tokens > 0
    [sent] = openai_wire.requests
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert "second phase of memoryweb's session-summary pipeline" in system
    assert user.index("Release 1.4 — ") < user.index("Fixing the flaky suite — ")  # newest first
    assert "- Tests use a fresh temporary directory each." in user
    assert "Cut release 1.4 after fixing the test isolation." in user
    assert 4000 in (sent.get("max_tokens"), sent.get("max_completion_tokens"))


def test_an_answer_with_an_empty_memory_falls_back_to_the_heuristic(
    subject, llm_config, two_sessions, openai_wire
):
    openai_wire.answer_json(answer(memory_md="  "))

    composition = compose(subject, llm_config)

    assert composition.method == "heuristic"
    assert "Tests use a fresh temporary directory each." in composition.memory_md


def test_an_answer_that_is_not_the_schema_falls_back_to_the_heuristic(
    subject, llm_config, two_sessions, openai_wire
):
    openai_wire.answer_json({"memory": "wrong shape"})

    composition = compose(subject, llm_config)

    assert composition.method == "heuristic"
    assert Counter.objects.filter(name="llm.fallback.summaries.schema_mismatch").exists()


def test_the_model_gets_only_the_newest_extractions_that_fit_its_budget(subject, actor, app):
    config = backend_on(app, actor, memories={"minRolloutIdleHours": 0, "consolidationInputTokens": 500})
    for n in range(6):
        extraction_write(
            subject,
            actor,
            f"c{n}",
            f"Session {n}",
            {"decisions": [f"Decision {n} " + "word " * 150]},
            days_ago=10 - n,
        )

    raw, synopses, sent = model_inputs(
        extractions=scope_extractions(subject=subject, scope=""), config=config
    )

    assert 1 <= sent < 6
    assert estimate_tokens(raw) + estimate_tokens(synopses) <= 500
    assert "Session 5 — " in raw and "Session 0 — " not in raw
    assert get_config(app)["memories.consolidationInputTokens"] == 500


def test_model_skills_need_a_valid_unique_name_two_steps_and_room_under_max_skills(app, actor):
    config = backend_on(app, actor, memories={"minRolloutIdleHours": 0, "maxSkills": 2})
    steps = ["First.", "Second."]
    skills = [
        {"name": "!!!", "description": "", "steps": steps, "pitfalls": []},
        {"name": "Deploy Web", "description": "", "steps": steps, "pitfalls": []},
        {"name": "deploy-web", "description": "Again.", "steps": steps, "pitfalls": []},
        {"name": "short", "description": "", "steps": ["Only."], "pitfalls": []},
        {"name": "backup", "description": "Nightly.", "steps": steps, "pitfalls": ["Full disk."]},
        {"name": "third", "description": "", "steps": steps, "pitfalls": []},
    ]

    composition = answer_composition(answer(skills=skills), config=config, method="openai/gpt-4o-mini")

    assert [(s.name, s.description) for s in composition.skills] == [
        ("deploy-web", "Use for deploy web."),
        ("backup", "Nightly."),
    ]


def test_a_shorter_recap_of_a_procedure_joins_it_and_the_fullest_steps_become_the_skill(
    subject, actor, config
):
    full = [
        "Drain the radiators on the top floor.",
        "Close the valves on every radiator.",
        "Refill the system to 1.5 bar at the boiler.",
        "Bleed each radiator from the top floor down.",
    ]
    recap = ["Drain the radiators.", "Refill to 1.5 bar.", "Bleed each radiator."]
    extraction_write(
        subject,
        actor,
        "c-a",
        "Heating service",
        {"workflows": [workflow_item("heating-flush", full)]},
        days_ago=20,
    )
    extraction_write(
        subject, actor, "c-b", "Heating again", {"workflows": [workflow_item("radiators", recap)]}, days_ago=3
    )

    composition = compose(subject, config)

    [skill] = composition.skills
    assert skill.steps == full
    assert "in 2 conversations" in skill.description
    assert "Refill the system to 1.5 bar" in composition.summary_md
