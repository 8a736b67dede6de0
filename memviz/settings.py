"""Settings for memviz, read from environment variables.

The embedded default needs no server: SQLite under var/, an in-memory Channels layer and a
filesystem Celery broker. PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) switch on when set.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url

from memviz.local_state import (
    anonymous_view_allowed,
    cookie_names,
    demo_copy,
    private_folder,
    private_sqlite,
    secret_key,
)
from memviz.test_workers import separate_worker_state

BASE_DIR = Path(__file__).resolve().parent.parent
separate_worker_state(BASE_DIR)
# 0700: the index, the secret key, uploads and pushed memory are the running user's alone.
VAR_DIR = private_folder(Path(os.environ.get("MEMVIZ_VAR_DIR", BASE_DIR / "var")))


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _default_data_root() -> Path:
    """The agent's own folder when this user has one, else memviz's copy of the bundled demo."""
    user_root = Path.home() / ".openclaw" / "context-offload"
    if user_root.is_dir():
        return user_root
    return demo_copy(BASE_DIR / "demo" / "context-offload", VAR_DIR)


def _env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# One folder for everything the processes of a deployment share (docs/deploy.md): uploads,
# pushed agents, the intent journal, the generated secret key. Several machines mount the same
# folder at the same path; on one machine it is var/.
SHARED_DIR = private_folder(Path(os.environ.get("MEMVIZ_SHARED_DIR", VAR_DIR)))
# No built-in key: MEMVIZ_SECRET_KEY, or a random one made at first start in the shared folder
# (0600), so every process that shares the folder signs and reads the same cookies.
SECRET_KEY = os.environ.get("MEMVIZ_SECRET_KEY") or secret_key(SHARED_DIR)
# Several machines on one PostgreSQL need one key: set, or generated in a folder they share.
MEMVIZ_KEY_MAY_DIFFER = not (
    os.environ.get("MEMVIZ_SECRET_KEY") or os.environ.get("MEMVIZ_SHARED_DIR")
) and os.environ.get("DATABASE_URL", "").startswith(("postgres:", "postgresql:"))
DEBUG = _env_bool("MEMVIZ_DEBUG", False)
# Where the server listens; `manage.py run --host` overrides it (and anonymous viewing with it).
BIND_HOST = os.environ.get("MEMVIZ_HOST", "127.0.0.1")
# --- deployment behind a TLS-terminating reverse proxy (README "Security") -------------------
# Origins the browser shows, e.g. https://memviz.example.org: CSRF and websocket origins.
CSRF_TRUSTED_ORIGINS = _env_list("MEMVIZ_TRUSTED_ORIGINS")
MEMVIZ_BEHIND_TLS_PROXY = _env_bool("MEMVIZ_BEHIND_TLS_PROXY", False)
ALLOWED_HOSTS = _env_list("MEMVIZ_ALLOWED_HOSTS", "127.0.0.1,localhost") + [
    urlsplit(origin).hostname or "" for origin in CSRF_TRUSTED_ORIGINS
]
if MEMVIZ_BEHIND_TLS_PROXY:
    # The proxy sets X-Forwarded-Proto (and X-Forwarded-For, used by login throttling); it
    # must overwrite any the client sent.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # __Host- names: only a secure page of this host may set them (`manage.py run` keeps them)
    SESSION_COOKIE_NAME, CSRF_COOKIE_NAME = cookie_names(0, tls=True)
    SECURE_HSTS_SECONDS = int(os.environ.get("MEMVIZ_HSTS_SECONDS", 365 * 24 * 3600))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("MEMVIZ_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = _env_bool("MEMVIZ_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # Preloading is a commitment for the whole domain; it stays the operator's choice.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]


# Published through a proxy: not loopback-only, whatever address memviz itself listens on.
MEMVIZ_PUBLISHED = MEMVIZ_BEHIND_TLS_PROXY or bool(CSRF_TRUSTED_ORIGINS)
MEMVIZ_ANONYMOUS_VIEW_WANTED = _env_bool("MEMVIZ_ANONYMOUS_VIEW", True)
# Anonymous reading only when memviz listens on loopback; `manage.py run --host` recomputes it.
MEMVIZ_ANONYMOUS_VIEW = anonymous_view_allowed(
    BIND_HOST, published=MEMVIZ_PUBLISHED, wanted=MEMVIZ_ANONYMOUS_VIEW_WANTED
)

MEMVIZ_DATA_ROOT = (
    Path(os.environ["MEMVIZ_DATA_ROOT"]).expanduser()
    if os.environ.get("MEMVIZ_DATA_ROOT")
    else _default_data_root()
)
# Uploaded and pushed agents live here, in the same on-disk layout as a watched data root.
MEMVIZ_UPLOAD_ROOT = Path(os.environ.get("MEMVIZ_UPLOAD_ROOT", SHARED_DIR / "uploads"))
MEMVIZ_UPLOAD_MAX_BYTES = int(os.environ.get("MEMVIZ_UPLOAD_MAX_BYTES", 200 * 1024 * 1024))
MEMVIZ_UNPACKED_MAX_BYTES = int(os.environ.get("MEMVIZ_UNPACKED_MAX_BYTES", 2 * 1024**3))
# Members an uploaded archive may hold: counted before anything is unpacked (intake/archive.py).
MEMVIZ_UPLOAD_MAX_FILES = int(os.environ.get("MEMVIZ_UPLOAD_MAX_FILES", 100_000))
# Intent records of multi-file changes in flight (canvases.write_path); outside every data root.
MEMVIZ_JOURNAL_DIR = Path(os.environ.get("MEMVIZ_JOURNAL_DIR", SHARED_DIR / "intents"))
MEMVIZ_REF_PAGE_BYTES = int(os.environ.get("MEMVIZ_REF_PAGE_BYTES", 64 * 1024))
# Canvases larger than this get a summary and a raw download instead of their pages (a 51 MB
# canvas made a 206 MB JSON answer). Whole-file reads of memory folders stop at
# MEMVIZ_FILE_MAX_BYTES (64 MB; read by agentfs/paths.py from the environment).
MEMVIZ_CANVAS_MAX_BYTES = int(os.environ.get("MEMVIZ_CANVAS_MAX_BYTES", 2 * 1024 * 1024))

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "channels",
    "memviz",
    "canvases",
    "sessions.apps.AgentSessionsConfig",
    "intake",
    "debugging",
    "reviews",
    "browse",
]

MIDDLEWARE = [
    "memviz.security_headers.SecurityHeadersMiddleware",
    "memviz.odd_requests.OddRequestMiddleware",  # before anything reads the path or parameters
    "memviz.outage.OutageMiddleware",  # a database or Redis outage → 503 (with handler500)
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "sessions.access.ViewAccessMiddleware",
]

ROOT_URLCONF = "memviz.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "builtins": ["template_partials.templatetags.partials"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memviz.context_processors.live",
            ],
        },
    }
]
WSGI_APPLICATION = "memviz.wsgi.application"
ASGI_APPLICATION = "memviz.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'memviz.sqlite3'}", conn_max_age=0
    )
}
# A page must not pay for a new database connection: that was ~3 ms a request on SQLite (open,
# PRAGMAs, schema parse) and ~6 ms on PostgreSQL (a new server backend). SQLite keeps each
# thread's connection; PostgreSQL takes them from psycopg's pool (Django's own `pool` option,
# the way its docs give for ASGI servers), at most MEMVIZ_DB_POOL_MAX per process.
# An outage must answer 503 within ~2 s, not hang (memviz/outage.py): a new connection gives up
# after MEMVIZ_DB_CONNECT_TIMEOUT, a request waits for a pooled one at most MEMVIZ_DB_POOL_WAIT,
# and a pooled connection is checked before use (CONN_HEALTH_CHECKS, below: a restarted server
# left it dead).
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options.setdefault("connect_timeout", int(os.environ.get("MEMVIZ_DB_CONNECT_TIMEOUT", 2)))
    _options["pool"] = {
        "min_size": 1,
        "max_size": int(os.environ.get("MEMVIZ_DB_POOL_MAX", 8)),
        "timeout": float(os.environ.get("MEMVIZ_DB_POOL_WAIT", 2)),
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("MEMVIZ_DB_CONN_MAX_AGE", 300))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # 0600 (with -wal and -shm) before SQLite creates it 0644, wherever DATABASE_URL puts it
    private_sqlite(str(DATABASES["default"]["NAME"]))
    # WAL lets the watcher and Celery worker write while pages read.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    # A file, not memory, so a real Celery worker process in the tests can share it.
    # Named per process so two test runs on one machine never share it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-memviz-{os.getpid()}.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Every password check (the login page, the admin) goes through the throttle first.
AUTHENTICATION_BACKENDS = ["memviz.throttle.ThrottledModelBackend"]
MEMVIZ_LOGIN_MAX_FAILURES = int(os.environ.get("MEMVIZ_LOGIN_MAX_FAILURES", 10))
MEMVIZ_LOGIN_COOLOFF_SECONDS = int(os.environ.get("MEMVIZ_LOGIN_COOLOFF_SECONDS", 15 * 60))
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True


DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
CSRF_COOKIE_HTTPONLY = False
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py 8 reads with a 5 s socket timeout by default, the same 5 s that
            # channels_redis blocks in BZPOPMIN waiting for a message: an idle websocket then
            # dies with a TimeoutError (1011). Reads may take longer than that wait.
            # A connection attempt gives up after 2 s: a Redis outage closes a new websocket
            # at once (the page says "reconnecting" and retries) instead of holding it open.
            "CONFIG": {
                "hosts": [
                    {"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 2}
                ]
            },
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # Redis down: queueing a job fails in ~2 s (a 503, memviz/outage.py) instead of 19 s; the
    # job row stays pending and the workers' recovery pass queues it again once Redis is back.
    CELERY_BROKER_CONNECTION_TIMEOUT = 2
    CELERY_BROKER_TRANSPORT_OPTIONS["socket_connect_timeout"] = 2
    CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 2
    CELERY_TASK_PUBLISH_RETRY_POLICY = {
        "max_retries": 1,
        "interval_start": 0,
        "interval_step": 0.5,
        "interval_max": 0.5,
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    _celery_dir = VAR_DIR / "celery"
    for _sub in ("queue", "processed", "results", "control"):
        (_celery_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://localhost/"  # the host is ignored; without one kombu warns
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_celery_dir / "queue"),
        "data_folder_out": str(_celery_dir / "queue"),
        "processed_folder": str(_celery_dir / "processed"),
        "control_folder": str(_celery_dir / "control"),
    }
    CELERY_RESULT_BACKEND = f"file://{_celery_dir / 'results'}"

CELERY_TASK_ALWAYS_EAGER = _env_bool("MEMVIZ_CELERY_EAGER", False)
# Nothing reads a task's result (the IngestJob row is the truth): without this, queueing a task
# subscribed to its result in Redis, and with Redis down that retried 20 times (19 s, then 500).
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_EAGER_PROPAGATES = True
# A task is acknowledged when it ends, so a worker that dies mid-task does not lose it: Redis
# redelivers it after the visibility timeout. The filesystem transport removes a message when it
# is received and never redelivers, so memviz also recovers jobs itself (intake/jobs.py): a
# running job whose heartbeat stops is re-queued, and failed after MEMVIZ_JOB_MAX_ATTEMPTS.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
MEMVIZ_JOB_VISIBILITY_SECONDS = int(os.environ.get("MEMVIZ_JOB_VISIBILITY_SECONDS", 3600))
MEMVIZ_JOB_HEARTBEAT_SECONDS = float(os.environ.get("MEMVIZ_JOB_HEARTBEAT_SECONDS", 2))
MEMVIZ_JOB_STALE_SECONDS = float(os.environ.get("MEMVIZ_JOB_STALE_SECONDS", 30))
MEMVIZ_JOB_MAX_ATTEMPTS = int(os.environ.get("MEMVIZ_JOB_MAX_ATTEMPTS", 3))
# A running job whose progress has not moved this long is failed (with a retry button) rather
# than left hanging; its longest silent step is ~30 s at 1M rows (refs scan, VACUUM).
MEMVIZ_JOB_STALL_SECONDS = float(os.environ.get("MEMVIZ_JOB_STALL_SECONDS", 300))
if REDIS_URL:
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = MEMVIZ_JOB_VISIBILITY_SECONDS

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "filters": {"quiet_outages": {"()": "memviz.outage.QuietOutages"}},
    "root": {"handlers": ["console"], "level": os.environ.get("MEMVIZ_LOG_LEVEL", "INFO")},
    # Celery logs every task's result dict at INFO; the ingest command prints its own summary.
    # A 404 or a refused request is the visitor's business, not an error of the server's.
    # daphne's start-up lines are INFO: `manage.py run` prints the one line with the URL itself.
    "loggers": {
        "celery": {"level": "WARNING"},
        "django.request": {"level": "ERROR", "filters": ["quiet_outages"]},
        "daphne": {"level": "WARNING"},
        # The pool logs each failed reconnection during an outage; memviz/outage.py says it once.
        "psycopg.pool": {"level": "ERROR"},
    },
}

# --- live: watcher, push stream (issue 5) ---------------------------------------------------
# Pushed agents are written here, one folder per agent, in the format spec's on-disk layout.
MEMVIZ_PUSH_ROOT = Path(os.environ.get("MEMVIZ_PUSH_ROOT", MEMVIZ_UPLOAD_ROOT.parent / "pushed"))
MEMVIZ_STREAM_MAX_BODY_BYTES = int(os.environ.get("MEMVIZ_STREAM_MAX_BODY_BYTES", 32 * 1024**2))
MEMVIZ_STREAM_MAX_EVENT_BYTES = int(os.environ.get("MEMVIZ_STREAM_MAX_EVENT_BYTES", 8 * 1024**2))
# Quiet time that ends a burst of file events before the watcher ingests it.
MEMVIZ_WATCH_STEP_MS = int(os.environ.get("MEMVIZ_WATCH_STEP_MS", 30))
# How much lower than the pages the watcher's thread runs (Linux `nice` steps, 0-19): people
# reading pages come first, indexing follows in the CPU they leave. See docs/live.md.
MEMVIZ_WATCH_NICE = int(os.environ.get("MEMVIZ_WATCH_NICE", 10))
# --- end live -------------------------------------------------------------------------------

# --- static files (issue 12): hashed names, brotli/gzip copies, long cache lifetimes ----------
# `manage.py collectstatic` (a step of `make setup`) writes every file of static/ under a
# content-hashed name with .br and .gz copies into STATIC_ROOT; WhiteNoise serves them
# (under daphne too) with `Cache-Control: max-age=315360000, public, immutable`, and picks the
# compressed copy the browser accepts. With MEMVIZ_DEBUG the templates name the source files and
# WhiteNoise serves them from static/ as they are edited.
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "memviz.static_storage.StaticStorage"},
}
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # the hashed copies, for servers that serve through the finders (pytest-django's live_server)
    "memviz.static_finders.CollectedFilesFinder",
]
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
# --- end static files -----------------------------------------------------------------------

# --- i18n (issue 13): English and Simplified Chinese, from the browser or the header switch ----
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# After sessions (it stores an explicit choice there), before CommonMiddleware (docs' order).
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.common.CommonMiddleware"),
    "django.middleware.locale.LocaleMiddleware",
)
# --- end i18n ----------------------------------------------------------------------------------

# --- scale: search, kept counts, incremental ingest (issue 11) ---------------------------------
# Also index the text of refs for search (first MEMVIZ_INDEX_REF_TEXT_BYTES of each); costs
# index size and ingest time, see docs/performance.md. Applies to refs indexed from then on.
MEMVIZ_INDEX_REF_TEXT = _env_bool("MEMVIZ_INDEX_REF_TEXT", False)
MEMVIZ_INDEX_REF_TEXT_BYTES = int(os.environ.get("MEMVIZ_INDEX_REF_TEXT_BYTES", 64 * 1024))
# The live path checks only what changed; every this many seconds it re-reads a file's prefix
# and re-lists a refs folder once, to catch what no event announced.
MEMVIZ_FULL_CHECK_SECONDS = float(os.environ.get("MEMVIZ_FULL_CHECK_SECONDS", 600))
# Longest time the watcher groups file events before ingesting them. An agent writes a new
# ref file per tool call, so a busy one never leaves MEMVIZ_WATCH_STEP_MS of quiet; this bounds
# how long such a burst waits (watchfiles' own default is 1,600 ms).
MEMVIZ_WATCH_DEBOUNCE_MS = int(os.environ.get("MEMVIZ_WATCH_DEBOUNCE_MS", 200))
# A search stops looking after this long and offers to look further ("more").
MEMVIZ_SEARCH_BUDGET_MS = float(os.environ.get("MEMVIZ_SEARCH_BUDGET_MS", 25))
# --- end scale --------------------------------------------------------------------------------
