"""Production settings: with MEMORYWEB_PRODUCTION and the variables docs/deployment.md lists,
`manage.py check --deploy` has nothing to warn about; each key can still be set on its own."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path, code_or_args, **env_vars):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "memoryweb.settings",
        "MEMORYWEB_VAR_DIR": str(tmp_path),
        **env_vars,
    }
    argv = [sys.executable, *code_or_args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


PRODUCTION = {
    "MEMORYWEB_PRODUCTION": "true",
    "ALLOWED_HOSTS": "memory.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://memory.example.com",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto: https",
}


def test_check_deploy_is_clean_with_the_production_settings(tmp_path):
    result = _run(
        tmp_path,
        [str(ROOT / "manage.py"), "check", "--deploy", "--fail-level", "WARNING"],
        SECRET_KEY=secrets.token_urlsafe(50),
        **PRODUCTION,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "security.W" not in output and "WARNINGS" not in output


def test_without_the_switch_check_deploy_names_what_is_missing(tmp_path):
    result = _run(
        tmp_path, [str(ROOT / "manage.py"), "check", "--deploy"], SECRET_KEY=secrets.token_urlsafe(50)
    )
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


SHOW = (
    "import django; django.setup(); from django.conf import settings as s; "
    "print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
    "s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD, s.SECURE_PROXY_SSL_HEADER)"
)


def test_the_switch_sets_the_https_keys_and_each_can_be_overridden(tmp_path):
    on = _run(tmp_path, ["-c", SHOW], **PRODUCTION)
    overridden = _run(
        tmp_path,
        ["-c", SHOW],
        MEMORYWEB_PRODUCTION="true",
        SECURE_HSTS_SECONDS="3600",
        SECURE_HSTS_PRELOAD="false",
    )
    off = _run(tmp_path, ["-c", SHOW])

    assert on.stdout.split() == [
        "True",
        "True",
        "True",
        "31536000",
        "True",
        "True",
        "('HTTP_X_FORWARDED_PROTO',",
        "'https')",
    ]
    assert overridden.stdout.split()[3:6] == ["3600", "True", "False"]
    assert off.stdout.split() == ["False", "False", "False", "0", "False", "False", "None"]


def test_a_malformed_proxy_header_stops_start_up(tmp_path):
    result = _run(tmp_path, ["-c", SHOW], SECURE_PROXY_SSL_HEADER="https")
    assert result.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER='https'" in result.stderr and "X-Forwarded-Proto: https" in result.stderr
