"""A real embedded stack for the tests that start one: its environment, a free port, and a
var dir whose SQLite database is migrated already (`migrated_var_dir`, from conftest.py)."""

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stack_env(var_dir: Path) -> dict[str, str]:
    """The environment of a real embedded stack on its own var dir: SQLite, filesystem broker."""
    env = dict(os.environ)
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "REDIS_URL"):
        env.pop(name, None)
    env["MEMORYWEB_VAR_DIR"] = str(var_dir)
    env["DJANGO_SETTINGS_MODULE"] = "memoryweb.settings"
    return env


@pytest.fixture(scope="session")
def _migrated_template(tmp_path_factory) -> Path:
    var_dir = tmp_path_factory.mktemp("migrated") / "var"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=settings.BASE_DIR,
        env=stack_env(var_dir),
        check=True,
        timeout=300,
    )
    return var_dir


@pytest.fixture
def migrated_var_dir(_migrated_template, tmp_path) -> Path:
    """A var dir of its own whose SQLite database is migrated already (a copy of one)."""
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    for name in ("memoryweb.sqlite3", "secret_key"):
        shutil.copy(_migrated_template / name, var_dir / name)
    return var_dir
