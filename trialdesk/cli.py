"""`trialdesk serve JOBS_DIR`: migrate, ingest and follow a Harbor jobs folder, serve it.

    trialdesk serve JOBS_DIR [--port 8000]   the desk on http://127.0.0.1:PORT/
    trialdesk login-link [--port 8000]       a new one-time login link
    trialdesk manage COMMAND …               any manage.py command on the same data

`serve` runs three processes beside this one, and stops them with it (Ctrl-C):
- the web server: gunicorn, the server the project runs in production (Django's
  `runserver` is a development server its documentation says not to serve with), bound to
  127.0.0.1 only, static files from WhiteNoise;
- `manage.py ingest --follow JOBS_DIR`: the first pass ingests what is there, later ones add
  trials as they run and finish;
- `manage.py grading_worker`: one task worker, for grading and re-judging from the app.

A local staff user (named after the account running it) is made on first use, without a
password: the printed link logs it in once (`review.login_links`), and every page still
needs that login.
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SETTINGS = "trialdesk.settings"
HOST = "127.0.0.1"
SERVER_START_TIMEOUT = 60.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trialdesk", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="ingest, follow and serve a Harbor jobs folder")
    serve.add_argument("jobs_dir", metavar="JOBS_DIR", help="a Harbor jobs folder (or job folder)")
    serve.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    link = commands.add_parser("login-link", help="print a new one-time login link")
    link.add_argument("--port", type=int, default=8000, help="the port `serve` listens on")
    manage = commands.add_parser("manage", help="run a manage.py command on the local data")
    manage.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)

    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
    if options.command == "manage":
        from django.core.management import execute_from_command_line

        execute_from_command_line(["trialdesk manage", *options.args])
        return 0
    if options.command == "login-link":
        _setup()
        print(_login_link(options.port))
        return 0
    return _serve(Path(options.jobs_dir), options.port)


def _setup() -> None:
    import django

    django.setup()


def _serve(jobs_dir: Path, port: int) -> int:
    if not jobs_dir.is_dir():
        print(f"trialdesk: {jobs_dir} is not a folder", file=sys.stderr)
        return 2
    if not _port_free(port):
        print(f"trialdesk: port {port} is in use; choose another with --port", file=sys.stderr)
        return 2
    _setup()
    from django.core.management import call_command
    from django.db import connections

    from trialdesk.settings import DATA_DIR

    print(f"Trialdesk data: {DATA_DIR}", flush=True)
    call_command("migrate", interactive=False, verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    link = _login_link(port)
    connections.close_all()  # the children open their own

    python = sys.executable
    django = [python, "-m", "django"]
    children = {
        "server": _start(
            [
                python,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"{HOST}:{port}",
                "--workers",
                "2",
                "--graceful-timeout",
                "5",
                # The app is loaded before the port opens: the link printed once it answers
                # works at once.
                "--preload",
                # Its control socket sits at one path in the home folder: a second
                # `trialdesk serve` (another port) would take it over.
                "--no-control-socket",
            ]
        ),
        "follower": _start([*django, "ingest", "--follow", "--no-progress", str(jobs_dir)]),
        "worker": _start([*django, "grading_worker", "--no-reload"]),
    }
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    try:
        if not _wait_for_server(port, children["server"]):
            print("trialdesk: the web server did not start", file=sys.stderr)
            return 1
        print(
            f"Trialdesk is serving {jobs_dir.resolve()} on http://{HOST}:{port}/\n"
            f"Log in with this one-time link (valid 15 minutes): {link}\n"
            "Press Ctrl-C to stop.",
            flush=True,
        )
        while not stopping:
            if children["server"].poll() is not None:
                print("trialdesk: the web server stopped", file=sys.stderr)
                return 1
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        _stop_all(children.values())
    return 0


def _start(argv: list[str]) -> subprocess.Popen[bytes]:
    # Our own interpreter and modules, an argv list without a shell.
    return subprocess.Popen(argv, env={**os.environ, "DJANGO_SETTINGS_MODULE": SETTINGS})  # noqa: S603


def _stop_all(children: Iterable[subprocess.Popen[bytes]]) -> None:
    processes = list(children)
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + 15
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _wait_for_server(port: int, server: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            return False
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def _login_link(port: int) -> str:
    from django.urls import reverse

    from review import login_links

    user = _local_user()
    return f"http://{HOST}:{port}{reverse('login-link', args=[login_links.make_token(user)])}"


def _local_user() -> User:
    """The staff user of this machine's account, made on first use, with no password."""
    from django.contrib.auth.models import User

    try:
        name = re.sub(r"[^\w.@+-]", "", getpass.getuser())[:150] or "local"
    except (KeyError, OSError):  # no name for this uid (some containers)
        name = "local"
    user, created = User.objects.get_or_create(username=name, defaults={"is_staff": True})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    elif not (user.is_staff and user.is_active):
        user.is_staff = user.is_active = True
        user.save(update_fields=["is_staff", "is_active"])
    return user
