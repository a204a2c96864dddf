"""Conversations written for the phase-1 tests, as (role, text) turns."""

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

START = datetime(2025, 3, 4, 9, 0, tzinfo=UTC)  # a Tuesday

CI_PROJECT = [
    ("user", "Hi! Can you help me set up continuous integration for my Django invoicing app?"),
    ("assistant", "Sure. Which CI service do you want?\n1. GitHub Actions\n2. GitLab CI\n3. CircleCI"),
    (
        "user",
        "Let's go with option 1, the repo lives on GitHub anyway. The whole pipeline has to finish "
        "in under 10 minutes, and we are pinned to Python 3.11.",
    ),
    ("assistant", "I'd suggest MongoDB for the audit log, it scales well."),
    (
        "user",
        "No, we can't add another database to the stack. We'll stick with PostgreSQL for the audit log.",
    ),
    ("assistant", "Makes sense. Run the tests with `pytest -n auto` to parallelise."),
    (
        "user",
        "The test job fails with this:\n```\ndjango.db.utils.OperationalError: could not connect to server: "
        "Connection refused\n```",
    ),
    (
        "assistant",
        "The tests cannot reach Postgres. Add a postgres service to the job and set DATABASE_URL to "
        "postgresql://postgres@localhost:5432/ci.",
    ),
    (
        "user",
        "That worked, the job is green now. Please always show me the full YAML file rather than fragments.",
    ),
    (
        "user",
        "Every time I cut a release I run the full test suite, bump the version in pyproject.toml, "
        "then tag the commit and push the tag.",
    ),
    (
        "user",
        "I still need to decide whether to cache the pip downloads on CI. Should I use actions/cache for that?",
    ),
]

SMALL_TALK = [
    ("user", "Hey, how was your weekend?"),
    ("assistant", "I don't have weekends, but thanks for asking! How was yours?"),
    ("user", "Pretty good, I went hiking with my sister and we had pizza after. The weather was lovely."),
    ("assistant", "That sounds lovely! Where did you hike?"),
    ("user", "Near the lake, about 12 km. Anyway, talk later!"),
]


def rows(turns, start=START, step=timedelta(minutes=3)):
    """Stand-ins for Message rows (role, text, occurred_at), oldest first."""
    return [SimpleNamespace(role=r, text=t, occurred_at=start + i * step) for i, (r, t) in enumerate(turns)]


def note(content, tags=(), occurred_at=None):
    return SimpleNamespace(content=content, tags=list(tags), occurred_at=occurred_at, created_at=START)
