"""The project's settings plus the baseline view the explorer is compared with."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
SECURE_SSL_REDIRECT = False
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# The bench's own cache, in this process's memory: "nothing kept" empties it before a request
# (bench/science.py), which on a shared Redis would empty every process's.
CACHES = {"default": cache_from_url("")}  # noqa: F405
