"""One place that turns errors into JSON: `{"error": {"code", "message", "field", "fields"}}`."""

import math

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from memoryweb.errors import MemorywebError


def _flatten(detail, prefix=""):
    """DRF error detail → {"field.path": "message"}."""
    out = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            # str(): list items' errors are keyed by index, and index 0 must not vanish as falsy
            name = str(key) if key != "non_field_errors" else ""
            out.update(_flatten(value, f"{prefix}.{name}" if prefix and name else prefix or name))
    elif isinstance(detail, list):
        if detail and all(not isinstance(d, (dict, list)) for d in detail):
            out[prefix] = " ".join(str(d) for d in detail)
        else:
            for i, value in enumerate(detail):
                if value:
                    out.update(_flatten(value, f"{prefix}[{i}]"))
    else:
        out[prefix] = str(detail)
    return out


def _body(code, message, field=None, fields=None):
    error = {"code": code, "message": message}
    if field:
        error["field"] = field
    if fields:
        error["fields"] = fields
    return {"error": error}


def exception_handler(exc, context):
    if isinstance(exc, MemorywebError):
        fields = {exc.field: exc.message} if exc.field else None
        return Response(_body(exc.code, exc.message, exc.field, fields), status=exc.status_code)
    if isinstance(exc, exceptions.ValidationError):
        # an error about the body as a whole (not an object, say) is reported on "body"
        fields = {name or "body": message for name, message in _flatten(exc.detail).items()}
        first = next(iter(fields.items()), ("body", "invalid input"))
        message = f"{first[0]}: {first[1]}" if first[0] else first[1]
        return Response(
            _body("invalid", message, first[0] or None, fields), status=status.HTTP_400_BAD_REQUEST
        )
    if isinstance(exc, Http404):
        return Response(_body("not_found", str(exc) or "not found"), status=404)
    if isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc))
    if isinstance(exc, exceptions.APIException):
        headers = {}
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            headers["WWW-Authenticate"] = "Bearer"
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            headers["Retry-After"] = str(max(1, math.ceil(exc.wait)))
        code = exc.default_code if isinstance(exc.default_code, str) else "error"
        return Response(_body(code, str(exc.detail)), status=exc.status_code, headers=headers)
    return None


def api_not_found(request, exception=None):
    """JSON 404 for unknown /api/ paths; the HTML page everywhere else."""
    from django.http import JsonResponse
    from django.views.defaults import page_not_found

    if request.path.startswith("/api/"):
        return JsonResponse(_body("not_found", f"no endpoint {request.path}"), status=404)
    return page_not_found(request, exception)


def api_server_error(request):
    from django.http import JsonResponse
    from django.views.defaults import server_error

    if request.path.startswith("/api/"):
        return JsonResponse(_body("server_error", "internal error; it has been logged"), status=500)
    return server_error(request)
