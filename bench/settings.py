"""The project's settings plus the baseline view the explorer is compared with."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
SECURE_SSL_REDIRECT = False
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
