"""`manage.py bootstrap_demo`: the local demo, ready to click through (run by `make run`).

Idempotent. Creates what is missing and leaves the rest alone:
- the `demo` app and an API key, saved in var/demo-api-key.txt (a new key only when that
  file is missing or no longer matches an active key);
- a dashboard login `demo` that owns the demo app's subjects, and a superuser `admin` for the
  Django admin, their passwords saved in var/demo-login.txt and var/admin-login.txt. A login
  that already exists keeps its password;
- the demo subject `alice`, seeded with a small memory (memoryweb/demo.py) while it is empty.
Every secret is printed once, when it is made.
"""

import json
import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from memory.models import ApiKey, App, Subject
from memory.services import Actor, api_key_create, app_create, subject_get_or_create
from memory.services.apps import subject_update
from memoryweb.demo import (
    DEMO_APP_CONFIG,
    DEMO_DISPLAY_NAME,
    DEMO_SUBJECT,
    demo_memory_seed,
    demo_subject_is_empty,
)

DEMO_APP = "demo"
DEMO_USER = "demo"
ADMIN_USER = "admin"


def _login_file_password(path: Path) -> str:
    for line in path.read_text().splitlines() if path.exists() else []:
        name, _, value = line.partition(":")
        if name.strip() == "password":
            return value.strip()
    return ""


class Command(BaseCommand):
    help = (
        "Create the local demo (idempotent): the demo app and an API key, a dashboard login "
        "`demo`, a superuser `admin` and a seeded demo subject; secrets are saved under var/."
    )

    def handle(self, **options):
        actor = Actor.system("bootstrap_demo")
        app = App.objects.filter(name=DEMO_APP).first() or app_create(
            name=DEMO_APP, config=DEMO_APP_CONFIG, actor=actor
        )
        self._api_key(app, actor)
        demo_user = self._login(DEMO_USER, "demo-login.txt", superuser=False)
        self._login(ADMIN_USER, "admin-login.txt", superuser=True)

        subject = subject_get_or_create(app=app, external_id=DEMO_SUBJECT)
        if not subject.display_name:
            subject_update(subject=subject, display_name=DEMO_DISPLAY_NAME, actor=actor)
        for unowned in Subject.objects.filter(app=app, owner=None).select_related("app"):
            subject_update(subject=unowned, owner=demo_user, actor=actor)

        if demo_subject_is_empty(subject):
            stats = demo_memory_seed(subject=subject, actor=actor)
            self.stdout.write(f"demo subject {subject.external_id!r} seeded: {json.dumps(stats)}")
        else:
            self.stdout.write(f"demo subject {subject.external_id!r} already holds memory: left as it is")

    def _api_key(self, app: App, actor: Actor) -> None:
        key_file = settings.VAR_DIR / "demo-api-key.txt"
        if key_file.exists():
            raw_key = key_file.read_text().strip()
            prefix = raw_key.split("_")[1] if raw_key.count("_") == 2 else ""
            key = ApiKey.objects.usable().filter(app=app, prefix=prefix).first()
            if key is not None and key.key_hash == ApiKey.hash_secret(raw_key):
                self.stdout.write(f"demo app ready; API key in {key_file}")
                return
        _, raw_key = api_key_create(app=app, name="demo", actor=actor)
        self._write_secret(key_file, raw_key + "\n")
        self.stdout.write(f"demo app ready; new API key (saved to {key_file}):\n  {raw_key}")

    def _login(self, username: str, file_name: str, *, superuser: bool):
        """The login `username`, created with a generated password when it does not exist."""
        path = settings.VAR_DIR / file_name
        what = "admin superuser" if superuser else "dashboard login"
        user = get_user_model().objects.filter(username=username).first()
        if user is not None:
            if user.check_password(_login_file_password(path)):
                self.stdout.write(f"{what} {username!r} ready; password in {path}")
            else:
                self.stdout.write(
                    f"{what} {username!r} exists already; its password was not changed "
                    f"(reset it with `manage.py changepassword {username}`)"
                )
            return user
        password = secrets.token_urlsafe(12)
        manager = get_user_model().objects
        if superuser:
            user = manager.create_superuser(username=username, email="", password=password)
        else:
            user = manager.create_user(username=username, password=password)
        self._write_secret(path, f"username: {username}\npassword: {password}\n")
        self.stdout.write(f"{what} created (saved to {path}):\n  {username} / {password}")
        return user

    @staticmethod
    def _write_secret(path: Path, text: str) -> None:
        # created 0600, so the secret is never readable by others, not even for a moment
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)  # the file may have existed with wider permissions
        with os.fdopen(fd, "w") as file:
            file.write(text)
