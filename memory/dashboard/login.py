"""Sign-in with a lockout, for the dashboard and the admin.

After MEMORYWEB_LOGIN_FAILURES failed sign-ins for one username (or MEMORYWEB_LOGIN_IP_FAILURES
from one IP address) within MEMORYWEB_LOGIN_WINDOW seconds, sign-ins for that username (or
from that address) are refused for MEMORYWEB_LOGIN_COOLDOWN seconds without the password being
checked, so guessing cannot go on; the page answers 429 with the form's error. A successful
sign-in clears the username's and the address's failures. The counts live in the shared cache
(memoryweb/ratelimit.py), so every web process sees them.
"""

import math

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest

from memoryweb.ratelimit import lockout_remaining, strike_add, strikes_clear


def _client_ip(request: HttpRequest | None) -> str:
    return (request.META.get("REMOTE_ADDR") or "") if request is not None else ""


def _names(username: str, ip: str) -> list[tuple[str, int]]:
    """The lockout names a sign-in counts against, each with its failure limit."""
    names = [(f"login-user:{username.strip().lower()}", settings.MEMORYWEB_LOGIN_FAILURES)]
    if ip:
        names.append((f"login-ip:{ip}", settings.MEMORYWEB_LOGIN_IP_FAILURES))
    return names


def login_lockout(username: str, ip: str) -> int:
    """Seconds until sign-ins for `username` from `ip` are accepted again; 0: now."""
    return max(lockout_remaining(name) for name, _ in _names(username, ip))


def login_failed(username: str, ip: str) -> int:
    """Count a failed sign-in; the seconds of lockout it started (0 for none)."""
    return max(
        strike_add(
            name,
            limit=limit,
            window=settings.MEMORYWEB_LOGIN_WINDOW,
            cooldown=settings.MEMORYWEB_LOGIN_COOLDOWN,
        )
        for name, limit in _names(username, ip)
    )


def login_succeeded(username: str, ip: str) -> None:
    for name, _ in _names(username, ip):
        strikes_clear(name)


def _locked_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return f"Too many failed sign-ins. Try again in {minutes} minute{'s' if minutes != 1 else ''}."


class LockoutMixin:
    """For an AuthenticationForm: refuse while locked out, count failures, clear on success."""

    locked_for = 0  # seconds; the view answers 429 when set

    def clean(self):
        username = self.data.get("username", "")  # type: ignore[attr-defined]
        ip = _client_ip(self.request)  # type: ignore[attr-defined]
        self.locked_for = login_lockout(username, ip)
        if self.locked_for:
            raise forms.ValidationError(_locked_message(self.locked_for), code="locked_out")
        try:
            cleaned = super().clean()  # type: ignore[misc]
        except forms.ValidationError as exc:
            if exc.code == "invalid_login":
                self.locked_for = login_failed(username, ip)
                if self.locked_for:
                    raise forms.ValidationError(_locked_message(self.locked_for), code="locked_out") from exc
            raise
        if self.get_user() is not None:  # type: ignore[attr-defined]
            login_succeeded(username, ip)
        return cleaned


class LockoutAuthenticationForm(LockoutMixin, AuthenticationForm):
    pass


class LockoutAdminAuthenticationForm(LockoutMixin, AdminAuthenticationForm):
    pass


class LoginView(auth_views.LoginView):
    """The dashboard's sign-in page (templates/registration/login.html), with the lockout."""

    form_class = LockoutAuthenticationForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.locked_for:
            response.status_code = 429
            response["Retry-After"] = str(form.locked_for)
        return response
