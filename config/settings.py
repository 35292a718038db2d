"""Trialdesk settings: one module, driven by the environment.

Every production setting is read from an environment variable; the README lists them.
The defaults are for local use (`make run`): an embedded SQLite file under var/.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool, environ: Mapping[str, str] = os.environ) -> bool:
    value = environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", False)
# The fallback key is for local use only; `check --deploy` flags it (security.W009) so a
# production deployment without SECRET_KEY is caught before it serves anything.
SECRET_KEY = os.environ.get("SECRET_KEY") or "django-insecure-local-only-trialdesk-key"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    # django-ninja: its bundled Swagger UI (static files, no CDN) for /api/docs.
    "ninja",
    # The task queue: a table in the same database, run by `manage.py db_worker`.
    "django_tasks_db",
    "rewards",
    "review",
    # Demo data and users for `make run` (outside the domain: it only uses public paths).
    "demo",
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
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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
                "django.template.context_processors.csp",
            ],
        },
    },
]


# --- Database -------------------------------------------------------------------------
# DATABASE_URL selects the database: PostgreSQL (psycopg 3 with its connection pool), or a
# SQLite file (`sqlite:///…`, the same as SQLITE_PATH); without it an embedded SQLite file
# under var/ keeps local set-up to zero steps.
def sqlite_database(name: str) -> dict[str, Any]:
    """SQLite as Trialdesk runs it, whether chosen by SQLITE_PATH or by
    DATABASE_URL=sqlite:///…: one set of options, so neither way loses writes to
    "database is locked" under concurrent reviewers."""
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": name,
        "OPTIONS": {
            # WAL lets readers (the explorer) proceed while an ingest writes; IMMEDIATE takes
            # the write lock up front so concurrent writers queue instead of failing, for up
            # to `timeout` seconds (a deferred transaction that later needs the lock fails at
            # once, whatever the timeout, when another writer holds it).
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
    }


def database_from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """The default database as the environment chooses it (DATABASE_URL, else SQLITE_PATH)."""
    url = environ.get("DATABASE_URL", "")
    if not url:
        default_path = BASE_DIR / "var" / "trialdesk.sqlite3"
        path = environ.get("SQLITE_PATH", "")
        if not path:
            default_path.parent.mkdir(exist_ok=True)
        return sqlite_database(path or str(default_path))
    # Health checks: a connection is tried before a request uses it (psycopg's pool runs
    # `ConnectionPool.check_connection` as it hands one out). After a database restart every
    # idle pooled connection is dead; unchecked, each would fail one request with a 500.
    parsed = dj_database_url.parse(url, conn_max_age=0, conn_health_checks=True)
    if parsed["ENGINE"] == "django.db.backends.sqlite3":
        return sqlite_database(str(parsed["NAME"]))
    if parsed["ENGINE"] == "django.db.backends.postgresql":
        options = parsed.setdefault("OPTIONS", {})
        if env_bool("DATABASE_POOL", True, environ):
            options["pool"] = {
                "min_size": int(environ.get("DATABASE_POOL_MIN", "1")),
                "max_size": int(environ.get("DATABASE_POOL_MAX", "10")),
            }
        if env_bool("DATABASE_PREPARE", True, environ):
            # Parameters bound by the server, and a query run a second time on a connection
            # prepared there: its plan is kept, which is most of a small query's time (a
            # page's row query: 0.8 ms planned each time, 0.27 ms prepared). Django leaves
            # both off for transaction-pooling proxies (PgBouncer); set DATABASE_PREPARE=0
            # behind one.
            options.update(server_side_binding=True, prepare_threshold=2)
    return dict(parsed)


DATABASES = {"default": database_from_environment(os.environ)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Background work ------------------------------------------------------------------
# Grading and judging run on task workers (`manage.py db_worker`), never inside a request
# (DESIGN §8). The queue is a table of the same database, so SQLite and PostgreSQL both work
# with no other service; run any number of workers on any machine that reaches the database.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


# --- Cache -------------------------------------------------------------------------------
# What is kept between requests (rewards/cache.py names every key) is shared by every
# process through CACHE_URL: redis:// (rediss://, unix://) selects Django's Redis backend,
# the production setting; without it each process keeps its own in memory (`make run`).
def cache_from_url(url: str, key_prefix: str = "trialdesk") -> dict[str, Any]:
    scheme = urlsplit(url).scheme
    if not url or scheme == "locmem":
        return {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "KEY_PREFIX": key_prefix,
            # Django's default of 300 entries is fewer than two agreement pages keep.
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    if scheme in {"redis", "rediss", "unix"}:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": key_prefix,
        }
    # The scheme only: the rest of the URL may hold a password.
    raise ImproperlyConfigured(
        "CACHE_URL must be a redis://, rediss://, unix:// or locmem:// URL; "
        f"its scheme is {scheme!r}"
    )


CACHES = {
    "default": cache_from_url(
        os.environ.get("CACHE_URL", ""), os.environ.get("CACHE_KEY_PREFIX", "trialdesk")
    )
}

# --- Auth and sessions -----------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Django's own backend; a user's role groups are read once per request (review.roles).
AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"
# Sessions live in the database so any number of app servers can share them, read through
# the cache (write-through): with a cache shared by every process (Redis in production), a
# request reads its session without a query and a logout ends it everywhere.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# --- Security ----------------------------------------------------------------------------
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
# HTTPS-only defaults are for deployments; `make run` speaks plain HTTP (and the test suite's
# settings, tests/settings.py, turn them off too).
HTTPS_ONLY = not DEBUG
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS_ONLY)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS_ONLY)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS_ONLY)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000" if HTTPS_ONLY else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS_ONLY)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS_ONLY)
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# /healthz answers load balancers over plain HTTP inside the private network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# --- Internationalisation ---------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files ------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# The API's ingest takes up to 1000 bundles a request; Django's default cap (2.5 MB) would
# stop at a few hundred typical ones.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", str(64 << 20)))

# --- Trialdesk -------------------------------------------------------------------------
# Limits that keep hostile artifacts from exhausting the importer (DESIGN §9).
TRIALDESK_MAX_ARTIFACT_BYTES = int(os.environ.get("TRIALDESK_MAX_ARTIFACT_BYTES", str(8 << 20)))
TRIALDESK_MAX_JSON_DEPTH = int(os.environ.get("TRIALDESK_MAX_JSON_DEPTH", "64"))
# The share of queue hand-outs that offer a gold trial first (review.claims), 0 to 1.
TRIALDESK_GOLD_RATE = min(1.0, max(0.0, float(os.environ.get("TRIALDESK_GOLD_RATE", "0.1"))))
# The staff upload page: the largest file it takes (a .jsonl bundle or a zipped job folder),
# and the most a zip may unpack to (a zip bomb is refused before anything is written).
TRIALDESK_UPLOAD_MAX_BYTES = int(os.environ.get("TRIALDESK_UPLOAD_MAX_BYTES", str(64 << 20)))
TRIALDESK_UPLOAD_MAX_UNPACKED_BYTES = int(
    os.environ.get("TRIALDESK_UPLOAD_MAX_UNPACKED_BYTES", str(512 << 20))
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
