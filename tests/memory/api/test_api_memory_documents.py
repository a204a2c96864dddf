"""memory:// over REST: read one document, list them, read a document's history with diffs."""

import pytest

from memory.documents import MEMORY_MD, SUMMARY_MD, skill_path
from memory.models import MemoryDocument
from memory.services.documents import document_prune, document_write
from tests.factories import SubjectFactory

API = "/api/v1/subjects/alice/memory"


@pytest.fixture
def documents(subject, actor):
    document_write(subject=subject, path=MEMORY_MD, content="# Memory\n- deploys: make release", actor=actor)
    document_write(
        subject=subject,
        path=MEMORY_MD,
        content="# Memory\n- deploys: the pipeline",
        method="heuristic",
        actor=actor,
    )
    document_write(subject=subject, path=SUMMARY_MD, content="Deploys go through the pipeline.", actor=actor)
    document_write(
        subject=subject,
        path=skill_path("release-checklist"),
        name="release-checklist",
        description="when shipping the billing api",
        content="# Release checklist",
        actor=actor,
    )
    document_write(
        subject=subject, scope="billing-api", path=SUMMARY_MD, content="Billing summary.", actor=actor
    )
    return MemoryDocument.objects.get(subject=subject, scope="", path=MEMORY_MD)


def test_a_memory_url_reads_the_documents_current_version(client, documents):
    response = client.get(API, {"url": "memory://root/MEMORY.md"})

    assert response.status_code == 200
    data = response.json()
    assert data["content"] == "# Memory\n- deploys: the pipeline"
    assert data["version"] == 2 and data["method"] == "heuristic"
    assert {k: data[k] for k in ("url", "kind", "scope", "path")} == {
        "url": "memory://root/MEMORY.md",
        "kind": "memory",
        "scope": "",
        "path": "MEMORY.md",
    }
    assert data["tokens"] == 8  # 32 characters
    assert set(data) == {
        "url",
        "kind",
        "scope",
        "path",
        "name",
        "description",
        "auto_refresh",
        "version",
        "content",
        "method",
        "tokens",
        "created_at",
        "updated_at",
    }


def test_memory_root_is_the_summary_and_a_scope_url_its_projects(client, documents):
    root = client.get(API, {"url": "memory://root"}).json()
    billing = client.get(API, {"url": "memory://scope/billing-api"}).json()

    assert root["kind"] == "summary" and root["content"] == "Deploys go through the pipeline."
    assert billing["scope"] == "billing-api" and billing["content"] == "Billing summary."


def test_the_list_holds_every_live_document_without_its_content(client, documents, subject, actor):
    skill = MemoryDocument.objects.get(subject=subject, path=skill_path("release-checklist"))
    document_write(
        subject=subject, path=skill_path("old-habit"), name="old-habit", content="# Old", actor=actor
    )
    document_prune(document=MemoryDocument.objects.get(path=skill_path("old-habit")), actor=actor)

    response = client.get(f"{API}/documents")

    assert response.status_code == 200
    listed = response.json()["documents"]
    assert [d["url"] for d in listed] == [
        "memory://root/MEMORY.md",
        skill.url,
        "memory://root",
        "memory://scope/billing-api",
    ]
    assert all("content" not in d for d in listed)
    assert listed[1]["description"] == "when shipping the billing api"


def test_the_list_filters_by_kind_and_scope(client, documents):
    summaries = client.get(f"{API}/documents", {"kind": "summary"}).json()["documents"]
    billing = client.get(f"{API}/documents", {"scope": "billing-api"}).json()["documents"]
    whole = client.get(f"{API}/documents", {"scope": ""}).json()["documents"]

    assert [d["url"] for d in summaries] == ["memory://root", "memory://scope/billing-api"]
    assert [d["url"] for d in billing] == ["memory://scope/billing-api"]
    assert len(whole) == 3


def test_the_history_lists_every_version_with_its_diff(client, documents):
    response = client.get(f"{API}/history", {"url": "memory://root/MEMORY.md"})

    assert response.status_code == 200
    data = response.json()
    assert data["url"] == "memory://root/MEMORY.md"
    first, second = data["versions"]
    assert [first["number"], second["number"]] == [1, 2]
    assert "+- deploys: make release" in first["diff"] and "(empty)" in first["diff"]
    assert "-- deploys: make release" in second["diff"] and "+- deploys: the pipeline" in second["diff"]
    assert second["method"] == "heuristic" and len(second["digest"]) == 64
    assert first["tokens"] == 8


@pytest.mark.parametrize(
    "url",
    [
        "memory://root/skills/release-checklist",  # malformed: no SKILL.md
        "memory://elsewhere/MEMORY.md",
        "https://example.com/MEMORY.md",
        "memory://root/skills/never-written/SKILL.md",
        "memory://scope/garden/MEMORY.md",
    ],
)
@pytest.mark.parametrize("endpoint", ["", "/history"])
def test_an_address_that_names_no_live_document_is_404(client, documents, url, endpoint):
    response = client.get(f"{API}{endpoint}", {"url": url})

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("endpoint", ["", "/history"])
def test_a_pruned_document_is_404(client, documents, subject, actor, endpoint):
    skill = MemoryDocument.objects.get(subject=subject, path=skill_path("release-checklist"))
    document_prune(document=skill, actor=actor)

    response = client.get(f"{API}{endpoint}", {"url": skill.url})

    assert response.status_code == 404


def test_each_subject_reads_only_its_own_documents(client, documents, app, actor):
    bob = SubjectFactory(app=app, external_id="bob")
    document_write(subject=bob, path="MEMORY.md", content="Bob's memory", actor=actor)

    response = client.get(API, {"url": "memory://root/MEMORY.md"})
    bobs = client.get("/api/v1/subjects/bob/memory", {"url": "memory://root/MEMORY.md"})

    assert "Bob" not in response.json()["content"]
    assert bobs.json()["content"] == "Bob's memory"


@pytest.mark.parametrize("endpoint", ["", "/documents", "/history"])
def test_another_apps_subject_is_404(other_client, documents, endpoint):
    params = {} if endpoint == "/documents" else {"url": "memory://root/MEMORY.md"}

    response = other_client.get(f"{API}{endpoint}", params)

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "endpoint,params,field",
    [
        ("", {}, "url"),
        ("", {"url": "memory://root", "version": "2"}, "version"),
        ("/history", {}, "url"),
        ("/history", {"url": "x" * 1001}, "url"),
        ("/documents", {"kind": "diary"}, "kind"),
        ("/documents", {"scope": "x" * 201}, "scope"),
        ("/documents", {"limit": "3"}, "limit"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(client, documents, endpoint, params, field):
    response = client.get(f"{API}{endpoint}", params)

    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
