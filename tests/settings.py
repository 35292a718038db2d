"""Settings for the test suite: the project's settings with the choices only tests make.

pytest-django loads this module (pyproject.toml); nothing in config/ needs to know it is
under test.
"""

import os
from pathlib import Path

from config.settings import *  # noqa: F403
from config.settings import CACHES, DATABASES, STORAGES

# Fixtures create many users: a fast hash keeps the suite quick. Never for real passwords.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test client and the live server speak plain HTTP, and nothing has run collectstatic.
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_SSL_REDIRECT = False
SECURE_HSTS_SECONDS = 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = False
SECURE_HSTS_PRELOAD = False
STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# A test database on SQLite is a file, not memory: a worker process a test starts
# (tests/task_worker.py) must read the same database.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    _path = Path(DATABASES["default"]["NAME"])
    DATABASES["default"]["TEST"] = {"NAME": str(_path.with_name(f"test_{_path.name}"))}
# Each test process keys its own entries (pytest-xdist's worker, and its process id: two runs
# may share one Redis), so that neither sees nor clears the other's (tests/conftest.py). A
# server a test starts (tests/live_gunicorn.py) is given the test's prefix: its workers share
# their entries with each other, and the test's clean-up removes them.
CACHES = {
    "default": {
        **CACHES["default"],
        "KEY_PREFIX": os.environ.get("TRIALDESK_TEST_CACHE_PREFIX")
        or (
            f"{CACHES['default']['KEY_PREFIX']}-test-"
            f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}"
        ),
    }
}

# The queue hands out a gold trial first at random (review.claims); the suite asks for it
# explicitly (TRIALDESK_GOLD_RATE=1.0 where a test is about gold trials), so that every other
# queue test, and its query count, is the same on every run.
TRIALDESK_GOLD_RATE = 0.0
