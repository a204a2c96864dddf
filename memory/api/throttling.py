"""Rate limits per API key: a fixed window counted in the shared cache (memoryweb/ratelimit.py).

The limit is the key's own `rate_limit` when set, else `MEMORYWEB_API_RATE_LIMIT`. Over it, DRF
raises Throttled, which the API's exception handler answers with 429, `Retry-After` and the
error envelope. Requests without a key are not counted here (they get 401 first).
"""

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from memory.models import ApiKey
from memoryweb.ratelimit import Rate, parse_rate, window_hit


def api_key_rate(key: ApiKey) -> Rate | None:
    """The rate `key` is held to; None when it has no limit."""
    return parse_rate(key.rate_limit or settings.MEMORYWEB_API_RATE_LIMIT)


class ApiKeyRateThrottle(BaseThrottle):
    retry_after: int | None = None

    def allow_request(self, request, view):
        key = request.auth
        if not isinstance(key, ApiKey):
            return True
        rate = api_key_rate(key)
        if rate is None:
            return True
        hit = window_hit(f"api-key:{key.prefix}", rate)
        self.retry_after = hit.retry_after
        return hit.allowed

    def wait(self):
        return self.retry_after
