"""The wheel and `trialdesk serve`, as a Harbor user gets them (`pipx install .`).

The wheel is built from a copy of the sources (a build writes into its source folder),
offline (`--no-index`, `--no-build-isolation`: setuptools comes from the dev requirements),
and installed into a fresh virtualenv outside the checkout. Its dependencies are the
project's pinned ones, already installed in this virtualenv: the fresh one sees them through
a `.pth` file (no index, no network, a few seconds), while the project's own modules,
templates and static files come from the wheel alone, as the test checks.

`trialdesk serve` then runs from a folder of its own, with a data folder of its own, on a
free loopback port: the one-time login link it prints logs in once, and the explorer lists
the fixture jobs' trials.
"""

from __future__ import annotations

import http.cookiejar
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ingest_helpers import PASSING, SINGLE, TIMEOUT, lay_out

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parent.parent
# What a wheel is built from; the rest of the checkout (tests, benchmarks, the virtualenv,
# local data) is left behind.
SOURCES = ("config", "rewards", "review", "demo", "trialdesk", "templates", "static")
SOURCE_FILES = ("pyproject.toml", "setup.py", "README.md")
TIMEOUT_S = 120
# The machine may be busy (the follower's first pass, the worker starting, other tests).
REQUEST_TIMEOUT_S = 30


def _run(*argv: str | Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        env=_clean_env(),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without this test run's settings, database or path."""
    drop = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "SQLITE_PATH", "PYTHONPATH", "CACHE_URL")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv outside the checkout with the wheel installed; its `bin/`."""
    root = tmp_path_factory.mktemp("packaging")
    source = root / "src"
    source.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        shutil.copytree(PROJECT / name, source / name, ignore=skip)
    for name in SOURCE_FILES:
        shutil.copy(PROJECT / name, source / name)
    dist = root / "dist"
    pip = (sys.executable, "-m", "pip")
    _run(*pip, "wheel", source, "--no-deps", "--no-index", "--no-build-isolation", "-w", dist,
         cwd=root)  # fmt: skip
    (wheel,) = dist.glob("trialdesk-*.whl")

    venv = root / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root)
    python = venv / "bin" / "python"
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                   cwd=root).strip()  # fmt: skip
    # The pinned dependencies, from this virtualenv (after the fresh one's own packages).
    (Path(purelib) / "trialdesk-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(*pip, "--python", python, "install", "--no-deps", "--no-index", wheel, cwd=root)
    return venv / "bin"


def test_the_wheel_holds_the_apps_their_migrations_templates_and_static_files(
    installed: Path, tmp_path: Path
) -> None:
    found = _run(
        installed / "python",
        "-c",
        "import config, rewards, review, trialdesk, pathlib;"
        "t = pathlib.Path(trialdesk.__file__).parent;"
        "print(rewards.__file__, review.__file__, config.__file__);"
        "print(sorted(p.name for p in (t / 'templates' / 'review').glob('*.html')));"
        "print(sorted(p.name for p in (t / 'static').rglob('*.*')));"
        "print(len(list(pathlib.Path(review.__file__).parent.glob('migrations/0*.py'))))",
        cwd=tmp_path,
    ).splitlines()
    venv = str(installed.parent)
    assert all(path.startswith(venv) for path in found[0].split())
    assert "explorer.html" in found[1]
    assert "trial.html" in found[1]
    assert found[2] == "['app.css', 'app.js', 'steps.js']"
    shipped = len(list((PROJECT / "review" / "migrations").glob("0*.py")))
    assert int(found[3]) == shipped
    assert (installed / "trialdesk").exists()


class Served:
    """`trialdesk serve` running; its output read line by line as it comes."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str, seconds: float) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                assert self.process.poll() is None, "".join(self.seen)
                continue
            self.seen.append(line)
            if match := re.search(pattern, line):
                return match
        raise AssertionError(f"no {pattern!r} within {seconds}s: {''.join(self.seen)}")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


@pytest.fixture
def served(installed: Path, tmp_path: Path) -> Iterator[tuple[Served, int]]:
    jobs = lay_out(tmp_path / "jobs").root
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(TRIALDESK_DATA_DIR=str(tmp_path / "data"), HOME=str(home))
    run = Served(
        [str(installed / "trialdesk"), "serve", str(jobs), "--port", str(port)], tmp_path, env
    )
    try:
        yield run, port
    finally:
        if run.process.poll() is None:
            run.stop()


def _csrf(html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match is not None, html
    return match.group(1)


def test_trialdesk_serve_logs_in_once_by_its_link_and_lists_the_jobs_trials(
    served: tuple[Served, int],
) -> None:
    run, port = served
    link = run.wait_for(r"one-time link[^:]*: (http://127\.0\.0\.1:\d+/\S+)", TIMEOUT_S).group(1)
    base = f"http://127.0.0.1:{port}"
    assert link.startswith(base)

    # Every page needs a login.
    anonymous = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as refused:
        anonymous.open(f"{base}/", timeout=REQUEST_TIMEOUT_S)
    assert refused.value.code == 302
    assert "/accounts/login/" in refused.value.headers["Location"]

    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = browser.open(link, timeout=REQUEST_TIMEOUT_S).read().decode()
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": _csrf(page)}).encode()
    # An http:// URL the server printed (checked above), not a file: or custom scheme.
    request = urllib.request.Request(link, data=form, headers={"Referer": link})  # noqa: S310
    explorer = browser.open(request, timeout=REQUEST_TIMEOUT_S)
    assert explorer.geturl() == f"{base}/"

    # The follower's first pass may still be running: the trials appear as it stores them.
    wanted = {SINGLE, TIMEOUT, PASSING}
    deadline = time.monotonic() + TIMEOUT_S
    html = ""
    while time.monotonic() < deadline:
        html = browser.open(f"{base}/", timeout=REQUEST_TIMEOUT_S).read().decode()
        if all(f'title="{name}"' in html for name in wanted):
            break
        time.sleep(0.5)
    assert all(f'title="{name}"' in html for name in wanted), html
    # Static files are served with DEBUG off (WhiteNoise, hashed names).
    css = re.search(r'href="(/static/css/app\.[0-9a-f]+\.css)"', html)
    assert css is not None
    assert browser.open(base + css.group(1), timeout=REQUEST_TIMEOUT_S).status == 200

    # The link is spent: a second use is refused, and logs nobody in.
    fresh = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    with pytest.raises(urllib.error.HTTPError) as spent:
        fresh.open(link, timeout=REQUEST_TIMEOUT_S)
    assert spent.value.code == 400

    assert run.stop() == 0


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None
