"""Settings for `trialdesk serve`: the project's settings, on one machine, for one person.

Everything lives in the user's data folder (`data_dir`: $TRIALDESK_DATA_DIR, else
$XDG_DATA_HOME/trialdesk, else ~/.local/share/trialdesk): the SQLite database, the secret
key (generated on first use, readable by the user alone), the collected static files and
the cache. Nothing is read from a checkout: the templates and static files are the ones
installed with the package (or the checkout's, when run from one).

It serves plain HTTP on the loopback interface only, so the HTTPS-only cookies and
redirects of a deployment are off; DEBUG stays off (`check --deploy` is for deployments).
"""

import os
import secrets
from pathlib import Path


def data_dir() -> Path:
    explicit = os.environ.get("TRIALDESK_DATA_DIR", "")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME", "") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "trialdesk"


def _secret_key(folder: Path) -> str:
    """The key kept in the data folder, made once (sessions and login links are signed
    with it, so it must outlive a restart)."""
    path = folder / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    key = secrets.token_urlsafe(50)
    # O_EXCL: two processes starting at once keep the first key written.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key


DATA_DIR = data_dir()
DATA_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
# The project's settings choose their SQLite file from the environment (and would make a
# folder for their default one beside the installed code): point them at the data folder.
os.environ["SQLITE_PATH"] = str(DATA_DIR / "trialdesk.sqlite3")
os.environ.pop("DATABASE_URL", None)

from config.settings import *  # noqa: E402, F403
from config.settings import BASE_DIR, STORAGES, sqlite_database  # noqa: E402

SECRET_KEY = _secret_key(DATA_DIR)
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASES = {"default": sqlite_database(str(DATA_DIR / "trialdesk.sqlite3"))}

# The server, the follower and the task worker are three processes: what one of them keeps
# (or drops) in the cache, the others must see, so the cache is a folder they share.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(DATA_DIR / "cache"),
        "KEY_PREFIX": "trialdesk",
        "OPTIONS": {"MAX_ENTRIES": 10_000},
    }
}

# Templates and static files: those installed in this package, else the checkout's.
_HERE = Path(__file__).resolve().parent
_ASSETS = _HERE if (_HERE / "templates").is_dir() else BASE_DIR
TEMPLATES[0]["DIRS"] = [_ASSETS / "templates"]  # noqa: F405
STATICFILES_DIRS = [_ASSETS / "static"]
STATIC_ROOT = DATA_DIR / "static"
STORAGES = {
    **STORAGES,
    # Hashed names (a new version's files are new URLs), served by WhiteNoise.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Plain HTTP on 127.0.0.1: no HTTPS-only cookies, redirects or HSTS.
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_SSL_REDIRECT = False
SECURE_HSTS_SECONDS = 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = False
SECURE_HSTS_PRELOAD = False
