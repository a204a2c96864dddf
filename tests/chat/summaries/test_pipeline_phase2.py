"""Phase 2 through the pipeline (chat/summaries/pipeline.py): extractions become versioned
documents, under the subject's lease, all of a scope or none of it."""

from datetime import timedelta

import pytest
from django.db import connection

from chat.summaries.blocks import failure_item, workflow_item
from chat.summaries.pipeline import (
    scope_consolidate,
    scopes_stale,
    subjects_due,
    summaries_key,
    summaries_run,
)
from memory.documents import MEMORY_MD, SUMMARY_MD, document_get, documents_current, skill_path
from memory.leases import lease_acquire
from memory.models import (
    DocumentKind,
    JobRun,
    JobStatus,
    MemoryDocument,
    MemoryDocumentVersion,
    SessionExtraction,
)
from memory.services import app_config_set
from memoryweb.errors import FeatureDisabled
from tests.chat.summaries.phase2_rows import backend_on, extraction_write

pytestmark = pytest.mark.postgres

RELEASE = ["Run the full test suite.", "Bump the version.", "Tag the release and push the tag."]
DEPLOY = ["Build the image.", "Push it to the registry.", "Roll the deployment."]


@pytest.fixture
def config(app, actor):
    return backend_on(app, actor)


@pytest.fixture
def sessions(subject, actor, config):
    extraction_write(
        subject,
        actor,
        "c1",
        "Release prep",
        {
            "decisions": ["Releases are cut on Tuesdays."],
            "workflows": [workflow_item("release-checklist", RELEASE)],
        },
        days_ago=5,
    )
    extraction_write(
        subject,
        actor,
        "c2",
        "Release day",
        {
            "constraints": ["Never push to main without a green CI run."],
            "workflows": [workflow_item("release-checklist", RELEASE)],
        },
        days_ago=1,
    )


def versions(subject, scope, path):
    document = document_get(subject=subject, scope=scope, path=path, include_pruned=True)
    return list(document.versions.order_by("number").values_list("number", "method")) if document else []


def test_a_run_writes_memory_the_summary_and_skills_as_versions(subject, actor, sessions):
    run = summaries_run(subject=subject, actor=actor)

    assert run.status == JobStatus.DONE
    assert run.stats["extracted"] == 0 and run.stats["current"] == 2
    assert run.stats["scopes"] == 1 and run.stats["skills"] == 1
    assert versions(subject, "", MEMORY_MD) == [(1, "heuristic")]
    assert versions(subject, "", SUMMARY_MD) == [(1, "heuristic")]
    skill = document_get(subject=subject, scope="", path=skill_path("release-checklist"))
    assert skill.kind == DocumentKind.SKILL and skill.name == "release-checklist"
    assert skill.current.content.startswith("---\nname: release-checklist\n")
    assert "1. Run the full test suite." in skill.current.content
    memory = document_get(subject=subject, scope="", path=MEMORY_MD).current
    assert "Never push to main without a green CI run." in memory.content
    assert memory.run_id == run.pk


def test_a_second_run_with_nothing_new_adds_no_version(subject, actor, sessions):
    summaries_run(subject=subject, actor=actor)
    before = MemoryDocumentVersion.objects.count()

    run = summaries_run(subject=subject, actor=actor)

    assert run.status == JobStatus.DONE
    assert run.stats["versions"] == 0
    assert MemoryDocumentVersion.objects.count() == before


def test_an_extraction_that_leaves_the_summary_unchanged_does_not_keep_the_scope_stale(
    subject, actor, sessions
):
    summaries_run(subject=subject, actor=actor)
    extraction_write(
        subject, actor, "c3", "Tooling", {"tools": ["ruff for linting and formatting."]}, days_ago=0
    )

    second = summaries_run(subject=subject, actor=actor)
    third = summaries_run(subject=subject, actor=actor)

    assert second.stats["scopes"] == 1 and second.stats["versions"] == 1  # MEMORY.md only
    assert versions(subject, "", SUMMARY_MD) == [(1, "heuristic")]
    assert scopes_stale(subject=subject) == []
    assert subject not in subjects_due()
    assert third.stats["scopes"] == 0


def test_a_skill_no_longer_produced_is_pruned_with_its_history_kept(subject, actor, sessions):
    summaries_run(subject=subject, actor=actor)
    for extraction in SessionExtraction.objects.filter(subject=subject):
        extraction.raw_memory = "### Decisions\n- Releases are cut on Tuesdays."
        extraction.save(update_fields=["raw_memory"])

    written = scope_consolidate(subject=subject, scope="", config=backend_on(subject.app, actor), actor=actor)

    assert written["pruned"] == 1
    skill = MemoryDocument.objects.get(subject=subject, path=skill_path("release-checklist"))
    assert skill.pruned_at is not None
    assert skill.versions.count() == 1
    assert skill not in documents_current(subject=subject)
    assert [d.path for d in documents_current(subject=subject)] == [MEMORY_MD, SUMMARY_MD]


def test_a_secret_in_an_extraction_never_reaches_a_document(subject, actor, sessions):
    key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    extraction = SessionExtraction.objects.get(conversation__external_id="c2")
    # a row written before a redaction rule existed: the document write redacts again
    extraction.raw_memory += f"\n### Tools\n- The staging OpenAI key is {key} for now."
    extraction.save(update_fields=["raw_memory"])

    summaries_run(subject=subject, actor=actor)

    contents = list(MemoryDocumentVersion.objects.values_list("content", flat=True))
    assert contents and not any(key in c for c in contents)
    assert any("[REDACTED:openai_key]" in c for c in contents)


def test_a_project_scope_gets_its_own_documents_besides_the_subject_wide_ones(subject, actor, config):
    extraction_write(
        subject,
        actor,
        "b1",
        "Billing deploy",
        {
            "decisions": ["Billing runs on Postgres 16."],
            "workflows": [workflow_item("deploy-billing", DEPLOY)],
        },
        days_ago=2,
        scope="billing-api",
    )
    extraction_write(
        subject,
        actor,
        "w1",
        "Website copy",
        {"decisions": ["The website keeps the serif headings."]},
        days_ago=1,
        working_dir="/home/alice/site",
    )

    run = summaries_run(subject=subject, actor=actor)

    assert run.stats["scopes"] == 3
    by_scope = {}
    for document in documents_current(subject=subject):
        by_scope.setdefault(document.scope, []).append(document.path)
    assert by_scope == {
        "": [MEMORY_MD, skill_path("deploy-billing"), SUMMARY_MD],
        "/home/alice/site": [MEMORY_MD, SUMMARY_MD],
        "billing-api": [MEMORY_MD, skill_path("deploy-billing"), SUMMARY_MD],
    }
    billing = document_get(subject=subject, scope="billing-api", path=MEMORY_MD).current.content
    assert "Billing runs on Postgres 16." in billing and "serif" not in billing
    whole = document_get(subject=subject, scope="", path=MEMORY_MD).current.content
    assert "Billing runs on Postgres 16." in whole and "serif headings" in whole


def test_a_second_run_gets_none_while_another_holds_the_lease(subject, actor, sessions):
    holder = lease_acquire(
        summaries_key(subject), "worker-elsewhere", timedelta(minutes=10), kind="summaries"
    )

    run = summaries_run(subject=subject, actor=actor)

    assert run is None
    assert not MemoryDocument.objects.filter(subject=subject).exists()
    assert list(JobRun.objects.values_list("pk", "status")) == [(holder.pk, JobStatus.RUNNING)]


def _fail_skill_writes():
    """A storage failure for skill versions only (they start with front matter), so a run dies
    after MEMORY.md and the summary were written inside its transaction."""
    table = MemoryDocumentVersion._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION fail_skill() RETURNS trigger AS $$ BEGIN "
                "IF NEW.content LIKE '---%' THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$ "
                "LANGUAGE plpgsql"
            )
            cursor.execute(
                f"CREATE TRIGGER fail_skill BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION fail_skill()"
            )
        else:
            cursor.execute(
                f"CREATE TRIGGER fail_skill BEFORE INSERT ON {table} WHEN NEW.content LIKE '---%' "
                "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
            )


def _heal():
    table = MemoryDocumentVersion._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"DROP TRIGGER fail_skill ON {table}"
            if connection.vendor == "postgresql"
            else "DROP TRIGGER fail_skill"
        )


def test_a_run_killed_half_way_through_phase_2_leaves_the_previous_versions_and_a_rerun_writes_cleanly(
    subject, actor, sessions
):
    summaries_run(subject=subject, actor=actor)
    extraction_write(
        subject,
        actor,
        "c3",
        "Release again",
        {
            "decisions": ["Releases are signed with the team key."],
            "workflows": [workflow_item("release-checklist", [*RELEASE, "Announce it in the channel."])],
            "failures": [failure_item("The release tag was pushed before the bump", "bump first, then tag")],
        },
        days_ago=0,
    )
    _fail_skill_writes()

    with pytest.raises(Exception, match="disk full"):
        summaries_run(subject=subject, actor=actor)

    failed = JobRun.objects.order_by("-pk").first()
    assert failed.status == JobStatus.FAILED and "disk full" in failed.error
    assert versions(subject, "", MEMORY_MD) == [(1, "heuristic")]
    assert versions(subject, "", SUMMARY_MD) == [(1, "heuristic")]
    assert (
        "signed with the team key"
        not in document_get(subject=subject, scope="", path=MEMORY_MD).current.content
    )

    _heal()
    run = summaries_run(subject=subject, actor=actor)

    assert run.status == JobStatus.DONE and run.stats["scopes"] == 1
    assert versions(subject, "", MEMORY_MD) == [(1, "heuristic"), (2, "heuristic")]
    assert (
        "signed with the team key" in document_get(subject=subject, scope="", path=MEMORY_MD).current.content
    )
    skill = document_get(subject=subject, scope="", path=skill_path("release-checklist")).current
    assert skill.number == 2 and "4. Announce it in the channel." in skill.content


def test_the_backend_off_refuses_a_run(subject, actor, app, sessions):
    app_config_set(app=app, config={"memory": {"backend": "off"}}, actor=actor)

    with pytest.raises(FeatureDisabled) as raised:
        summaries_run(subject=subject, actor=actor)

    assert raised.value.status_code == 409
    assert not MemoryDocument.objects.exists() and not JobRun.objects.exists()


# --- the model's path, at the HTTP boundary ---------------------------------------------------


def test_a_run_with_a_model_writes_its_answer_with_the_model_as_method(
    subject, actor, app, sessions, openai_wire
):
    backend_on(app, actor, llm={"summaries": "openai/gpt-4o-mini"})
    openai_wire.answer_json(
        {
            "memory_md": "# Memory\n\n- Releases are cut on Tuesdays. Token: ghp_" + "a1B2c3D4e5" * 4,
            "memory_summary": "- Releases follow the release-checklist skill.",
            "skills": [
                {
                    "name": "release-checklist",
                    "description": "Cutting a release.",
                    "steps": RELEASE,
                    "pitfalls": [],
                }
            ],
        }
    )

    run = summaries_run(subject=subject, actor=actor)

    assert run.status == JobStatus.DONE
    assert versions(subject, "", MEMORY_MD) == [(1, "openai/gpt-4o-mini")]
    memory = document_get(subject=subject, scope="", path=MEMORY_MD).current
    assert "ghp_" not in memory.content and "[REDACTED:github_token]" in memory.content
    assert memory.input_tokens > 0
    assert versions(subject, "", skill_path("release-checklist")) == [(1, "openai/gpt-4o-mini")]


def test_a_run_whose_model_answers_nonsense_writes_the_heuristic_documents(
    subject, actor, app, sessions, openai_wire
):
    backend_on(app, actor, llm={"summaries": "openai/gpt-4o-mini"})
    openai_wire.answer_text("I cannot help with that.")

    run = summaries_run(subject=subject, actor=actor)

    assert run.status == JobStatus.DONE
    assert versions(subject, "", MEMORY_MD) == [(1, "heuristic")]
    assert (
        "Releases are cut on Tuesdays."
        in document_get(subject=subject, scope="", path=MEMORY_MD).current.content
    )
