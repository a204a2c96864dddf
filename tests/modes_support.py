"""Custom assistant-mode manifests for tests (the `modes_dir` fixture is in tests/memory/conftest.py)."""

import json


def mode_manifest(name: str = "ops_review", **changes) -> dict:
    """A valid custom manifest (every required field), with `changes` on top."""
    manifest = {
        "name": name,
        "title": "Ops review",
        "description": "Incident reviews: the project's own runbooks, no personal life.",
        "scopes": ["same", "other"],
        "preferredKinds": ["procedure", "lesson"],
        "privacyCeiling": {"allow": ["health", "relationships"]},
        "sections": {"profile": 100, "procedures": 0, "recalled": 500},
        "retrieval": {"k": 2, "minApplicability": 0.25},
        "applicability": {
            "personalization": 0.1,
            "evidenceFirst": 0.9,
            "uncertaintyTolerance": 0.5,
            "emotionalSensitivity": 0.5,
            "association": 0.5,
        },
        "renders": {"contract": False, "state": True, "topics": False, "transcript": True},
    }
    manifest.update(changes)
    return manifest


def write_manifest(folder, document, *, file_name: str | None = None):
    name = file_name or f"{document['name']}.json"
    (folder / name).write_text(json.dumps(document))
    return folder / name
