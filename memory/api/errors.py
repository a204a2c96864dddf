"""One place that turns errors into JSON: `{"error": {"code", "message", "field", "fields"}}`."""

import math

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from memoryweb.errors import MemorywebError, PayloadTooLarge, error_body


def _flatten(detail, prefix=None):
    """DRF error detail → {"field.path": "message"}; an error about the body as a whole (DRF's
    non_field_errors) has the path None, so a field that is really named "" keeps its name."""
    out = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            # str(): list items' errors are keyed by index, and index 0 must not vanish as falsy
            name = None if key == "non_field_errors" else str(key)
            path = prefix if name is None else name if prefix is None else f"{prefix}.{name}"
            out.update(_flatten(value, path))
    elif isinstance(detail, list):
        if detail and all(not isinstance(d, (dict, list)) for d in detail):
            out[prefix] = " ".join(str(d) for d in detail)
        else:
            for i, value in enumerate(detail):
                if value:
                    out.update(_flatten(value, f"{prefix or ''}[{i}]"))
    else:
        out[prefix] = str(detail)
    return out


def _too_large() -> PayloadTooLarge:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return PayloadTooLarge(
        f"the request body is over {limit} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE)", field="body"
    )


def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):  # Django's, raised when DRF reads request.body
        exc = _too_large()
    if isinstance(exc, MemorywebError):
        fields = {exc.field: exc.message} if exc.field else None
        return Response(error_body(exc.code, exc.message, exc.field, fields), status=exc.status_code)
    if isinstance(exc, exceptions.ValidationError):
        # an error about the body as a whole (not an object, say) is reported on "body"
        fields = {"body" if name is None else name: message for name, message in _flatten(exc.detail).items()}
        first = next(iter(fields.items()), ("body", "invalid input"))
        label = first[0] or '""'  # a field named "" (unknown, say) is shown quoted
        message = f"{label}: {first[1]}"
        return Response(error_body("invalid", message, first[0], fields), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Http404):
        return Response(error_body("not_found", str(exc) or "not found"), status=404)
    if isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc))
    if isinstance(exc, exceptions.APIException):
        headers = {}
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            headers["WWW-Authenticate"] = "Bearer"
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            headers["Retry-After"] = str(max(1, math.ceil(exc.wait)))
        code = exc.default_code if isinstance(exc.default_code, str) else "error"
        return Response(error_body(code, str(exc.detail)), status=exc.status_code, headers=headers)
    return None


def api_not_found(request, exception=None):
    """JSON 404 for unknown /api/ paths; the HTML page everywhere else."""
    from django.http import JsonResponse
    from django.views.defaults import page_not_found

    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", f"no endpoint {request.path}"), status=404)
    return page_not_found(request, exception)


def api_bad_request(request, exception=None):
    """Django's 400 (a SuspiciousOperation outside a view, e.g. a middleware reading an oversized
    body): the JSON envelope under /api/, the HTML page everywhere else."""
    from django.http import JsonResponse
    from django.views.defaults import bad_request

    if request.path.startswith("/api/"):
        if isinstance(exception, RequestDataTooBig):
            exc = _too_large()
            return JsonResponse(error_body(exc.code, exc.message, exc.field), status=exc.status_code)
        return JsonResponse(error_body("bad_request", "bad request"), status=400)
    return bad_request(request, exception)


def api_server_error(request):
    from django.http import JsonResponse
    from django.views.defaults import server_error

    if request.path.startswith("/api/"):
        return JsonResponse(error_body("server_error", "internal error; it has been logged"), status=500)
    return server_error(request)
