"""API keys: `Authorization: Bearer mw_<prefix>_<secret>`, scoped to their App; and the operators'
admin keys, `Bearer mwa_<prefix>_<secret>`, which reach /api/v1/admin/ only."""

import hmac

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import authentication, exceptions, permissions

from memory.models import AdminKey, ApiKey


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
        parts = raw_key.split("_")
        if parts[0] == "mwa":
            raise exceptions.AuthenticationFailed(
                "an admin key reaches /api/v1/admin/ only: send an app's API key here"
            )
        if len(parts) != 3 or parts[0] != "mw":
            raise exceptions.AuthenticationFailed("invalid API key")
        key = ApiKey.objects.select_related("app").filter(prefix=parts[1], revoked_at=None).first()
        if key is None or not hmac.compare_digest(key.key_hash, ApiKey.hash_secret(raw_key)):
            raise exceptions.AuthenticationFailed("invalid API key")
        now = timezone.now()
        if not key.usable_at(now):
            # only the holder of the secret learns this: the hash matched
            raise exceptions.AuthenticationFailed(
                f"this API key was rotated and expired at {key.expires_at:%Y-%m-%dT%H:%M:%SZ}; use its successor"
            )
        if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
            # at most one write a minute per key: the hot path stays a read
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
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
        parts = raw_key.split("_")
        if parts[0] == "mw":
            raise exceptions.AuthenticationFailed(
                "an app's API key cannot reach /api/v1/admin/: send an admin key (mwa_…)"
            )
        if len(parts) != 3 or parts[0] != "mwa":
            raise exceptions.AuthenticationFailed("invalid admin key")
        key = AdminKey.objects.filter(prefix=parts[1], revoked_at=None).first()
        if key is None or not hmac.compare_digest(key.key_hash, AdminKey.hash_secret(raw_key)):
            raise exceptions.AuthenticationFailed("invalid admin key")
        now = timezone.now()
        if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
            AdminKey.objects.filter(pk=key.pk).update(last_used_at=now)
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
