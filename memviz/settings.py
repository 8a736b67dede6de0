"""Settings for memviz, read from environment variables.

The embedded default needs no server: SQLite under var/, an in-memory Channels layer and a
filesystem Celery broker. PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) switch on when set.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MEMVIZ_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _default_data_root() -> Path:
    user_root = Path.home() / ".openclaw" / "context-offload"
    return user_root if user_root.is_dir() else BASE_DIR / "demo" / "context-offload"


SECRET_KEY = os.environ.get("MEMVIZ_SECRET_KEY", "memviz-local-only-insecure-key")
DEBUG = _env_bool("MEMVIZ_DEBUG", False)
BIND_HOST = os.environ.get("MEMVIZ_HOST", "127.0.0.1")
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("MEMVIZ_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")
]
# Anonymous viewing is allowed only when the server listens on loopback.
MEMVIZ_ANONYMOUS_VIEW = _env_bool(
    "MEMVIZ_ANONYMOUS_VIEW", BIND_HOST in {"127.0.0.1", "localhost", "::1"}
)

MEMVIZ_DATA_ROOT = Path(os.environ.get("MEMVIZ_DATA_ROOT", _default_data_root())).expanduser()
# Uploaded and pushed agents live here, in the same on-disk layout as a watched data root.
MEMVIZ_UPLOAD_ROOT = Path(os.environ.get("MEMVIZ_UPLOAD_ROOT", VAR_DIR / "uploads"))
MEMVIZ_UPLOAD_MAX_BYTES = int(os.environ.get("MEMVIZ_UPLOAD_MAX_BYTES", 200 * 1024 * 1024))
MEMVIZ_UNPACKED_MAX_BYTES = int(os.environ.get("MEMVIZ_UNPACKED_MAX_BYTES", 2 * 1024**3))
MEMVIZ_REF_PAGE_BYTES = int(os.environ.get("MEMVIZ_REF_PAGE_BYTES", 64 * 1024))

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
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memviz.access.ViewAccessMiddleware",
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
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
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

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise serves from the finders; it only needs the folder
WHITENOISE_USE_FINDERS = True

DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
CSRF_COOKIE_HTTPONLY = False
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    _celery_dir = VAR_DIR / "celery"
    for _sub in ("queue", "processed", "results", "control"):
        (_celery_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_celery_dir / "queue"),
        "data_folder_out": str(_celery_dir / "queue"),
        "processed_folder": str(_celery_dir / "processed"),
        "control_folder": str(_celery_dir / "control"),
    }
    CELERY_RESULT_BACKEND = f"file://{_celery_dir / 'results'}"

CELERY_TASK_ALWAYS_EAGER = _env_bool("MEMVIZ_CELERY_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("MEMVIZ_LOG_LEVEL", "INFO")},
    # Celery logs every task's result dict at INFO; the ingest command prints its own summary.
    "loggers": {"celery": {"level": "WARNING"}},
}

# --- live: watcher, push stream (issue 5) ---------------------------------------------------
# Pushed agents are written here, one folder per agent, in the format spec's on-disk layout.
MEMVIZ_PUSH_ROOT = Path(os.environ.get("MEMVIZ_PUSH_ROOT", MEMVIZ_UPLOAD_ROOT.parent / "pushed"))
MEMVIZ_STREAM_MAX_BODY_BYTES = int(os.environ.get("MEMVIZ_STREAM_MAX_BODY_BYTES", 32 * 1024**2))
MEMVIZ_STREAM_MAX_EVENT_BYTES = int(os.environ.get("MEMVIZ_STREAM_MAX_EVENT_BYTES", 8 * 1024**2))
# Quiet time that ends a burst of file events before the watcher ingests it.
MEMVIZ_WATCH_STEP_MS = int(os.environ.get("MEMVIZ_WATCH_STEP_MS", 30))
# --- end live -------------------------------------------------------------------------------

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
