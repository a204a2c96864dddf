"""`manage.py bootstrap_demo` (run by `make run`): the demo app and key, the `demo` dashboard
login that owns the demo subject, the `admin` superuser, and a seeded demo memory."""

import io
import stat

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from memory.config import get_config
from memory.models import (
    ApiKey,
    App,
    AuditEvent,
    JobRun,
    Lesson,
    Message,
    Note,
    NoteLink,
    PendingMemory,
    ProfileFact,
    Subject,
)
from memory.services import Actor, api_key_create, app_create, note_store, subject_get_or_create
from memoryweb.demo import DEMO_SUBJECT
from tests.factories import AppFactory

User = get_user_model()


@pytest.fixture
def var(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def bootstrap() -> str:
    out = io.StringIO()
    call_command("bootstrap_demo", stdout=out)
    return out.getvalue()


def password_in(path) -> str:
    lines = dict(line.split(": ", 1) for line in path.read_text().splitlines())
    return lines["password"]


def test_it_creates_the_demo_app_with_a_working_key_saved_under_var(db, var):
    output = bootstrap()

    raw_key = (var / "demo-api-key.txt").read_text().strip()
    key = ApiKey.objects.get(app__name="demo", revoked_at=None)
    assert key.key_hash == ApiKey.hash_secret(raw_key)
    assert raw_key in output
    assert stat.S_IMODE((var / "demo-api-key.txt").stat().st_mode) == 0o600


def test_it_creates_a_dashboard_login_that_owns_the_demo_subject(db, var):
    output = bootstrap()

    password = password_in(var / "demo-login.txt")
    demo = User.objects.get(username="demo")
    assert demo.check_password(password) and not demo.is_staff and not demo.is_superuser
    assert f"demo / {password}" in output
    assert stat.S_IMODE((var / "demo-login.txt").stat().st_mode) == 0o600
    subject = Subject.objects.get(app__name="demo", external_id=DEMO_SUBJECT)
    assert subject.owner == demo and subject.display_name == "Alice Moreau"
    assert Client().login(username="demo", password=password)


def test_it_creates_an_admin_superuser_who_can_open_the_admin(db, var):
    output = bootstrap()

    password = password_in(var / "admin-login.txt")
    admin = User.objects.get(username="admin")
    assert admin.is_staff and admin.is_superuser and admin.check_password(password)
    assert f"admin / {password}" in output
    browser = Client()
    assert browser.login(username="admin", password=password)
    assert browser.get("/admin/memory/subject/").status_code == 200


def test_the_demo_subject_is_seeded_through_the_real_pipeline(db, var):
    output = bootstrap()

    subject = Subject.objects.get(app__name="demo", external_id=DEMO_SUBJECT)
    assert Message.objects.filter(conversation__subject=subject).count() > 10
    facts = dict(ProfileFact.objects.filter(subject=subject, valid_to=None).values_list("key", "value"))
    assert facts["preferred_name"] == "Ali" and facts["location"] == "Lisbon"
    assert all(f.origin == "reflection" for f in ProfileFact.objects.filter(subject=subject))
    assert Note.objects.filter(subject=subject, origin="reflection").count() >= 5
    # the sensitive message waits for the person's decision instead of being stored
    pending = PendingMemory.objects.exclude(kind="evidence").get(subject=subject)
    assert PendingMemory.objects.get(subject=subject, kind="evidence").category.slug == "health"  # the turn
    assert (pending.status, pending.category.slug, pending.payload["key"]) == (
        "pending",
        "health",
        "allergies",
    )
    assert "allergies" not in facts
    assert NoteLink.objects.filter(src__subject=subject).exists()
    run = JobRun.objects.get(subject=subject, kind="consolidate")
    assert run.status == "done"
    lesson = Lesson.objects.get(subject=subject)
    assert lesson.consolidated_notes.count() >= 3
    assert AuditEvent.objects.filter(actor_id="bootstrap_demo", action="message.added").exists()
    assert "seeded" in output


def test_running_it_again_changes_nothing_and_shows_no_secret(db, var):
    first = bootstrap()
    key = (var / "demo-api-key.txt").read_text().strip()
    demo_password = password_in(var / "demo-login.txt")
    admin_password = password_in(var / "admin-login.txt")
    counts = (Message.objects.count(), Note.objects.count(), ApiKey.objects.count(), User.objects.count())

    second = bootstrap()

    assert key in first and demo_password in first and admin_password in first
    assert key not in second and demo_password not in second and admin_password not in second
    assert (
        Message.objects.count(),
        Note.objects.count(),
        ApiKey.objects.count(),
        User.objects.count(),
    ) == counts
    assert (var / "demo-api-key.txt").read_text().strip() == key
    assert User.objects.get(username="demo").check_password(demo_password)
    assert User.objects.get(username="admin").check_password(admin_password)
    assert "already holds memory" in second


def test_a_demo_subject_that_already_holds_memory_is_not_seeded(db, var):
    actor = Actor.system("test")
    app = app_create(name="demo", actor=actor)
    subject = subject_get_or_create(app=app, external_id=DEMO_SUBJECT)
    note_store(subject=subject, content="Alice wrote this herself", actor=actor, config=get_config(app))

    bootstrap()

    assert list(Note.objects.filter(subject=subject).values_list("content", flat=True)) == [
        "Alice wrote this herself"
    ]
    assert not Message.objects.exists()
    subject.refresh_from_db()
    assert subject.owner.username == "demo"


def test_only_unowned_subjects_of_the_demo_app_are_given_to_the_demo_login(db, var):
    actor = Actor.system("test")
    app = app_create(name="demo", actor=actor)
    someone = User.objects.create_user(username="someone")
    bob = subject_get_or_create(app=app, external_id="bob")
    carol = Subject.objects.create(app=app, external_id="carol", owner=someone)
    elsewhere = Subject.objects.create(app=AppFactory(), external_id="dave")

    bootstrap()

    for subject in (bob, carol, elsewhere):
        subject.refresh_from_db()
    assert bob.owner.username == "demo"
    assert carol.owner == someone
    assert elsewhere.owner is None
    assert AuditEvent.objects.filter(
        action="subject.updated", subject=bob, actor_id="bootstrap_demo"
    ).exists()


def test_an_existing_admin_login_keeps_its_own_password(db, var):
    User.objects.create_superuser(username="admin", email="", password="chosen-by-a-person")

    output = bootstrap()

    assert User.objects.get(username="admin").check_password("chosen-by-a-person")
    assert not (var / "admin-login.txt").exists()
    assert "admin' exists already; its password was not changed" in output


def test_a_key_file_that_no_longer_matches_gets_a_new_key(db, var):
    actor = Actor.system("test")
    app = app_create(name="demo", actor=actor)
    key, raw_key = api_key_create(app=app, actor=actor)
    (var / "demo-api-key.txt").write_text(raw_key + "\n")
    key.revoked_at = key.created_at
    key.save()

    output = bootstrap()

    new_key = (var / "demo-api-key.txt").read_text().strip()
    assert new_key != raw_key and new_key in output
    assert ApiKey.objects.get(app=app, revoked_at=None).key_hash == ApiKey.hash_secret(new_key)
    assert App.objects.filter(name="demo").count() == 1
