"""`Server-Timing` for POST /api/v1/context, when `MEMORYWEB_SERVER_TIMING` is on (off by
default; `bench context` turns it on in the server it starts): the request's time split into

- `auth`: DRF's `initial()` — content negotiation, the API key (lookup and hash), the App's
  pause, the rate limit;
- `lookup`: validating the body and finding the subject and conversation (the pause check);
- `build`: `context_build` up to its writes (`Context.latency_ms`);
- `event`: the build's writes — the RetrievalEvent, recalls, deliveries, in one transaction —
  and the context cache's entry;
- `serialise`: `Context.as_dict()` and the JSON rendering.

What a client measures beyond their sum is the transport: the ASGI server, Django's handler
and middleware, the worker-thread hop, the socket. Only durations go out, never content.
"""

import time

from django.conf import settings


class ServerTimingMixin:
    """Collects named durations in `self.timings` (ms) and sends them as `Server-Timing`."""

    timings: dict[str, float]

    def initial(self, request, *args, **kwargs):
        self.timings = {}
        started = time.perf_counter()
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        self.timings["auth"] = (time.perf_counter() - started) * 1000

    def timing_add(self, name: str, since: float) -> float:
        """Adds the time since `since` (a perf_counter() value) to `name`; returns now."""
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + (now - since) * 1000
        return now

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        if (
            settings.MEMORYWEB_SERVER_TIMING
            and getattr(self, "timings", None)
            and response.status_code == 200
        ):
            started = time.perf_counter()
            response.render()  # here rather than in Django's handler, so it is counted
            self.timing_add("serialise", started)
            response["Server-Timing"] = ", ".join(f"{name};dur={ms:.3f}" for name, ms in self.timings.items())
        return response


def server_timing_parse(header: str) -> dict[str, float]:
    """'auth;dur=0.4, build;dur=3.1' → {"auth": 0.4, "build": 3.1}; what has no dur is left out."""
    timings = {}
    for metric in header.split(","):
        name, _, params = metric.strip().partition(";")
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "dur" and name:
                try:
                    timings[name] = float(value)
                except ValueError:
                    pass
    return timings
