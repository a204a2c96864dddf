"""API keys: `Authorization: Bearer mw_<prefix>_<secret>`, scoped to their App; and the operators'
admin keys, `Bearer mwa_<prefix>_<secret>`, which reach /api/v1/admin/ only."""

import hmac

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import authentication, exceptions, permissions

from memory.models import AdminKey, ApiKey, key_secret_hash


def bearer_key(raw_key: str, *, queryset, kind: str, noun: str, refused: dict[str, str]):
    """The live key row of `queryset` that `raw_key` (`<kind>_<prefix>_<secret>`) names, its
    secret's hash compared in constant time; AuthenticationFailed otherwise — with the message
    of `refused` for a key of another kind, so a key sent to the wrong routes says where it goes."""
    parts = raw_key.split("_")
    if parts[0] in refused:
        raise exceptions.AuthenticationFailed(refused[parts[0]])
    if len(parts) != 3 or parts[0] != kind:
        raise exceptions.AuthenticationFailed(f"invalid {noun}")
    key = queryset.filter(prefix=parts[1], revoked_at=None).first()
    if key is None or not hmac.compare_digest(key.key_hash, key_secret_hash(raw_key)):
        raise exceptions.AuthenticationFailed(f"invalid {noun}")
    return key


def key_touch(key: ApiKey | AdminKey, now) -> None:
    """Note when the key was last used, at most one write a minute per key: the hot path stays a read."""
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        type(key).objects.filter(pk=key.pk).update(last_used_at=now)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode(errors="replace")
        if not header:
            return None
        scheme, _, raw_key = header.partition(" ")
        if scheme.lower() != "bearer" or not raw_key.strip():
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <api key>'")
        return self.authenticate_key(raw_key.strip())

    def authenticate_key(self, raw_key):
        key = bearer_key(
            raw_key,
            queryset=ApiKey.objects.select_related("app"),
            kind="mw",
            noun="API key",
            refused={"mwa": "an admin key reaches /api/v1/admin/ only: send an app's API key here"},
        )
        now = timezone.now()
        if not key.usable_at(now):
            # only the holder of the secret learns this: the hash matched
            raise exceptions.AuthenticationFailed(
                f"this API key was rotated and expired at {key.expires_at:%Y-%m-%dT%H:%M:%SZ}; use its successor"
            )
        key_touch(key, now)
        return (None, key)

    def authenticate_header(self, request):
        return self.keyword


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """Describes the API key in the OpenAPI schema, so the docs page can send it."""

    target_class = ApiKeyAuthentication
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(header_name="Authorization", token_prefix="Bearer")


class HasAppKey(permissions.BasePermission):
    message = "this app is paused"

    def has_permission(self, request, view):
        key = request.auth
        if not isinstance(key, ApiKey):
            raise exceptions.NotAuthenticated("missing API key: send 'Authorization: Bearer <api key>'")
        if key.app.paused:
            raise exceptions.PermissionDenied("this app is paused")
        return True


class AdminKeyAuthentication(ApiKeyAuthentication):
    """`Authorization: Bearer mwa_<prefix>_<secret>`: an operator's key (memory.models.AdminKey),
    apart from the apps' keys: an app key is refused here, as this key is on an app's routes."""

    def authenticate_key(self, raw_key):
        key = bearer_key(
            raw_key,
            queryset=AdminKey.objects.all(),
            kind="mwa",
            noun="admin key",
            refused={"mw": "an app's API key cannot reach /api/v1/admin/: send an admin key (mwa_…)"},
        )
        key_touch(key, timezone.now())
        return (None, key)


class AdminKeyScheme(OpenApiAuthenticationExtension):
    target_class = AdminKeyAuthentication
    name = "AdminKey"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(header_name="Authorization", token_prefix="Bearer")


class IsAdminKey(permissions.BasePermission):
    def has_permission(self, request, view):
        if not isinstance(request.auth, AdminKey):
            raise exceptions.NotAuthenticated("missing admin key: send 'Authorization: Bearer <admin key>'")
        return True
