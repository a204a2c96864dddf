"""memoryweb settings: everything that differs between machines comes from the environment.

Each variable is read through a typed helper that fails loudly on a bad value, so a typo in a
deployment stops the process at start-up instead of silently falling back to a default.
The README lists every variable.
"""

import os
import secrets
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from memoryweb.ratelimit import parse_rate

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def parse_database_url(url: str) -> dict:
    """Turn `sqlite:///relative/path`, `sqlite:////abs/path` or `postgresql://…` into a DATABASES entry."""
    parts = urlsplit(url)
    options = dict(parse_qsl(parts.query))
    if parts.scheme == "sqlite":
        path = unquote(parts.path)
        if path.startswith("/") and not path.startswith("//"):
            path = path[1:]  # sqlite:///var/db.sqlite3 is relative to the project
        elif path.startswith("//"):
            path = path[1:]
        if not path:
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no SQLite file")
        name = Path(path) if Path(path).is_absolute() else BASE_DIR / path
        return sqlite_database(name)
    if parts.scheme in {"postgres", "postgresql", "pgsql"}:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")) or "postgres",
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": env_int("DATABASE_CONN_MAX_AGE", 60),
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL scheme {parts.scheme!r} is not supported (use sqlite:/// or postgresql://)"
    )


def sqlite_database(name: Path) -> dict:
    return {
        "ENGINE": "memoryweb.db.sqlite",
        "NAME": str(name),
        "OPTIONS": {
            # IMMEDIATE takes the write lock at BEGIN, so two writers queue on the timeout
            # instead of failing with "database is locked" half-way through a transaction.
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000",
            # open connections kept per process for the next request (memoryweb/db/sqlite)
            "pool_size": env_int("MEMORYWEB_SQLITE_POOL", 8),
        },
        "TEST": {"NAME": None},
    }


VAR_DIR = Path(env_str("MEMORYWEB_VAR_DIR") or BASE_DIR / "var")  # empty counts as unset
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _local_secret_key() -> str:
    """A per-install key kept under var/ so sessions survive restarts of a local install."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or _local_secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# --- HTTPS and cookies ----------------------------------------------------------------------
# MEMORYWEB_PRODUCTION=true turns on what `manage.py check --deploy` asks for (HTTPS only,
# secure cookies, HSTS); each key can still be set on its own. docs/deployment.md#https
PRODUCTION = env_bool("MEMORYWEB_PRODUCTION", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", PRODUCTION)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", PRODUCTION)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", PRODUCTION)
# The URL paths (regexes, without the leading slash) served over plain HTTP despite the redirect.
SECURE_REDIRECT_EXEMPT = env_list("SECURE_REDIRECT_EXEMPT", [])


def env_proxy_ssl_header(name: str) -> tuple[str, str] | None:
    """`X-Forwarded-Proto: https` → ("HTTP_X_FORWARDED_PROTO", "https"): the header a TLS-ending
    proxy sets (and strips from what clients send), so Django knows the request was HTTPS."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    header, sep, value = raw.partition(":")
    if not sep or not header.strip() or not value.strip():
        raise ImproperlyConfigured(
            f"{name}={raw!r}: use 'Header-Name: value', e.g. 'X-Forwarded-Proto: https'"
        )
    return "HTTP_" + header.strip().upper().replace("-", "_"), value.strip()


SECURE_PROXY_SSL_HEADER = env_proxy_ssl_header("SECURE_PROXY_SSL_HEADER")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "channels",
    "memoryweb.apps.MemorywebConfig",
    "memory",
    "chat",
    "consolidation",
]

MIDDLEWARE = [
    # first: redacts the query string and form fields before anything reads them, and writes
    # each request's access line (memory/boundary.py)
    "memory.boundary.RedactionMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "memoryweb.urls"
WSGI_APPLICATION = "memoryweb.wsgi.application"
ASGI_APPLICATION = "memoryweb.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "libraries": {"dashboard": "memory.dashboard.tags"},
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL")
DATABASES = {
    "default": parse_database_url(DATABASE_URL)
    if DATABASE_URL
    else sqlite_database(VAR_DIR / "memoryweb.sqlite3")
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# GET /api/v1/live answers 503 when the database has not answered its query within this many s.
LIVENESS_TIMEOUT = env_int("MEMORYWEB_LIVENESS_TIMEOUT", 5)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "login"

# --- REST API -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["memory.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["memory.api.auth.HasAppKey"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON, with every string redacted as it is parsed (memory/boundary.py)
    "DEFAULT_PARSER_CLASSES": ["memory.boundary.RedactingJSONParser"],
    "EXCEPTION_HANDLER": "memory.api.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["memory.api.throttling.ApiKeyRateThrottle"],
    "DEFAULT_SCHEMA_CLASS": "memory.api.schema.ApiSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "memoryweb API",
    "DESCRIPTION": "Long-term memory sidecar for chat apps and agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # a PATCH body is read by the same serializer as in the schema, required fields included
    "COMPONENT_SPLIT_PATCH": False,
    # the role of a posted message (user, assistant, system), apart from an evidence unit's (no
    # system); the consent categories an assistant mode's privacy ceiling names
    # (memory/modes/schema.json): while the seeded categories are all there are, the consent
    # endpoints' enum is this one too; one name for the heuristic-or-model choice a few outputs
    # share (a context item's judge, …)
    "ENUM_NAME_OVERRIDES": {
        "MessageRoleEnum": "memory.models.Role",
        "CategoryEnum": "memory.api.modes.CATEGORIES",
        "HeuristicOrLlmEnum": ["heuristic", "llm"],
        # two `kind` fields: memory documents' and beliefs' (issue 13); the documents keep the name
        "KindEnum": "memory.models.DocumentKind",
        "BeliefKindEnum": ["fact", "note"],
        # the interaction contract's dimensions (memory/person/contract DIMENSIONS)
        "ContractDepthEnum": ["brief", "balanced", "detailed"],
        "ContractDirectnessEnum": ["diplomatic", "balanced", "blunt"],
        "ContractPushbackEnum": ["avoid", "moderate", "welcome"],
        "ContractPaceEnum": ["slow", "steady", "fast"],
        # the `type` of an OpenAI tool and tool call (memory/api/tools.py)
        "ToolTypeEnum": ["function"],
        "ToolFormatEnum": ["openai", "anthropic"],
        # an item's kind and an evidence unit's status, in the context and in the export (issue 14)
        "ItemKindEnum": "memory.models.ItemKind",
        "EvidenceStatusEnum": "memory.models.EvidenceStatus",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memory.api.schema.path_rules",
    ],
}

# --- Celery -------------------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    from memoryweb.broker import folder_options

    CELERY_BROKER_TRANSPORT = "memoryweb.broker:AtomicFilesystemTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        **folder_options(BROKER_DIR),
        # an idle worker looks for new messages this often (s); an ack wakes it at once
        "polling_interval": 0.1,
        # taken first, in this order, whenever they hold messages
        "queue_order": ["reflect", "background", "celery"],
        # a claim whose owner file is gone goes back to the queue after this long (s); a live
        # worker's claims never time out
        "visibility_timeout": 3600,
        # how often (s) a worker looks for claims of dead workers (also when it starts)
        "recover_interval": 30,
    }
# Two queues, taken in priority order by the worker (which consumes every queue below): a
# reflection never waits behind a backlog of background work. "celery", the queue before
# there were two, is still consumed, last, for messages queued before an upgrade.
CELERY_TASK_QUEUES: dict[str, dict] = {"reflect": {}, "background": {}, "celery": {}}
CELERY_TASK_DEFAULT_QUEUE = "background"
CELERY_TASK_ROUTES = {"chat.turn_reflect": {"queue": "reflect"}}
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The worker logs through LOGGING's console handler (the redacting formatter) instead of replacing
# the root handlers with its own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE

# --- Channels -----------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- cache: API rate limits and login lockouts (memoryweb/ratelimit.py) ------------------
# Counted where every process sees the same numbers: Redis when REDIS_URL is set, else files
# under var/cache/ (the processes of one machine).
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "memoryweb",
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }


def env_rate(name: str, default: str) -> str:
    raw = os.environ.get(name) or default
    try:
        parse_rate(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}: {exc}") from None
    return raw


# Requests per API key (an ApiKey's own `rate_limit` overrides it); "off" lifts the limit.
MEMORYWEB_API_RATE_LIMIT = env_rate("MEMORYWEB_API_RATE_LIMIT", "600/minute")
# POST /api/v1/context answers with a `Server-Timing` header (memory/api/timing.py): off by
# default; `bench context` turns it on in the server it starts, for its per-request breakdown.
MEMORYWEB_SERVER_TIMING = env_bool("MEMORYWEB_SERVER_TIMING", False)
# A rotated key keeps working this long beside its successor, then answers 401.
MEMORYWEB_API_KEY_OVERLAP = env_int("MEMORYWEB_API_KEY_OVERLAP", 86_400)
# Sign-in lockout (dashboard and admin): this many failures for one username, or from one IP
# address, within the window lock it out for the cool-down. A successful sign-in resets both.
MEMORYWEB_LOGIN_FAILURES = env_int("MEMORYWEB_LOGIN_FAILURES", 5)
MEMORYWEB_LOGIN_IP_FAILURES = env_int("MEMORYWEB_LOGIN_IP_FAILURES", 20)
MEMORYWEB_LOGIN_WINDOW = env_int("MEMORYWEB_LOGIN_WINDOW", 900)
MEMORYWEB_LOGIN_COOLDOWN = env_int("MEMORYWEB_LOGIN_COOLDOWN", 900)

# --- memoryweb ----------------------------------------------------------------------------
# The MEMORY tree: seed defaults live in memory/config.py; MEMORYWEB_CONFIG names a JSON file
# with overrides, and MEMORY__SECTION__KEY variables override single keys (see README).
MEMORYWEB_CONFIG = env_str("MEMORYWEB_CONFIG")
# a folder of custom assistant-mode manifests, NAME.json each (memory/modes/, docs/modes.md)
MEMORYWEB_MODES_DIR = env_str("MEMORYWEB_MODES_DIR")
# Vector search (memory/search/vectors): "auto" uses sqlite-vec or pgvector where loaded,
# "numpy" forces brute force; the per-process cache of subjects' vectors is bounded in MB.
MEMORYWEB_VECTOR_SEARCH = env_str("MEMORYWEB_VECTOR_SEARCH", "auto").strip().lower()
if MEMORYWEB_VECTOR_SEARCH not in ("auto", "numpy"):
    raise ImproperlyConfigured(f"MEMORYWEB_VECTOR_SEARCH={MEMORYWEB_VECTOR_SEARCH!r}: use auto or numpy")
MEMORYWEB_VECTOR_CACHE_MB = env_int("MEMORYWEB_VECTOR_CACHE_MB", 512)
# Background work (memoryweb/outbox.py, memory/leases.py): each worker's outbox dispatcher
# retries undelivered tasks every OUTBOX_POLL seconds; a running job or reflection heartbeats
# every HEARTBEAT seconds, and one whose heartbeat is older than HEARTBEAT_STALE seconds counts
# as dead (flush does not wait on it; the sweeper marks it abandoned and redoes it); a queued
# run no worker has taken after REDISPATCH seconds has its task sent again.
MEMORYWEB_OUTBOX_POLL_SECONDS = env_int("MEMORYWEB_OUTBOX_POLL_SECONDS", 5)
MEMORYWEB_HEARTBEAT_SECONDS = env_int("MEMORYWEB_HEARTBEAT_SECONDS", 15)
MEMORYWEB_HEARTBEAT_STALE_SECONDS = env_int("MEMORYWEB_HEARTBEAT_STALE_SECONDS", 60)
MEMORYWEB_REDISPATCH_SECONDS = env_int("MEMORYWEB_REDISPATCH_SECONDS", 600)
# a conversation whose last message no reply closed is reflected after this many quiet minutes
MEMORYWEB_IDLE_TURN_MINUTES = env_int("MEMORYWEB_IDLE_TURN_MINUTES", 10)
for _name in ("OUTBOX_POLL", "HEARTBEAT", "HEARTBEAT_STALE", "REDISPATCH"):
    if globals()[f"MEMORYWEB_{_name}_SECONDS"] < 1:
        raise ImproperlyConfigured(f"MEMORYWEB_{_name}_SECONDS must be at least 1")
if MEMORYWEB_HEARTBEAT_STALE_SECONDS <= MEMORYWEB_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("MEMORYWEB_HEARTBEAT_STALE_SECONDS must exceed MEMORYWEB_HEARTBEAT_SECONDS")

# Every line goes through RedactingFormatter, so no log line holds a secret a request brought
# in. The access line of each request is memoryweb.access's (memory/boundary.py, written with
# the redacted query string); Django's own handlers are replaced by the one console handler,
# and the dev servers' access loggers only report failures (runall turns daphne's raw access
# log off).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "class": "memory.redaction.RedactingFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s: %(message)s",
        }
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.server": {"handlers": [], "level": "WARNING", "propagate": True},
        "django.channels.server": {"handlers": [], "level": "WARNING", "propagate": True},
        "django.db.backends": {"level": "INFO"},
        # the SDKs log request bodies (prompts hold personal data) at DEBUG
        "anthropic": {"level": "INFO"},
        "openai": {"level": "INFO"},
        "httpx2": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}
