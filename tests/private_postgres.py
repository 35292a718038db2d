"""A PostgreSQL server of a test's own: `initdb` into a temporary folder, on a free loopback port.

For tests that stop and restart the database under the application (no other test, and not
the suite's own database, is touched). PostgreSQL refuses to run as root: when the suite
does, every server command runs as the `postgres` user (`runuser`), in a folder it owns.

`python -m tests.private_postgres seed N` (run by the tests in a process on that database)
makes one trial and N reviewers with API tokens, and prints them as JSON.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

BINARIES = [Path("/usr/lib/postgresql/15/bin"), Path("/usr/lib/postgresql/16/bin")]


def binaries() -> Path | None:
    """The folder of initdb and pg_ctl, if this machine has them."""
    for folder in BINARIES:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PrivatePostgres:
    """One PostgreSQL server in a temporary folder; `url` names its database `trialdesk`."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="trialdesk-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/trialdesk"

    def _run(self, *command: str, timeout: float = 120) -> None:
        done = subprocess.run(
            [*self.as_user, *command],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self.folder,
        )
        assert done.returncode == 0, f"{command[0]}: {done.stdout}{done.stderr}{self.log()}"

    def start(self) -> None:
        initdb = str(self.bin / "initdb")
        # --no-sync: a throwaway cluster need not wait for the disk.
        self._run(
            initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"
        )
        self._run(*self._pg_ctl("start"))
        self._run(
            str(self.bin / "psql") if (self.bin / "psql").exists() else "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-c",
            "CREATE DATABASE trialdesk",
        )

    def restart(self) -> None:
        """A fast restart: open sessions are ended, their transactions rolled back."""
        self._run(*self._pg_ctl("restart", "-m", "fast"))

    def _pg_ctl(self, *action: str) -> list[str]:
        # fsync off: the server process restarts, never the machine, so nothing written to
        # the operating system is lost either way; on, every commit of the load waits for
        # the disk.
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        return [
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            *action,
        ]

    def log(self) -> str:
        try:
            return (self.folder / "server.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.data.exists():
            subprocess.run(
                [*self.as_user, *self._pg_ctl("stop", "-m", "immediate")],
                capture_output=True,
                timeout=60,
                check=False,
                cwd=self.folder,
            )
        shutil.rmtree(self.folder, ignore_errors=True)


def seed(reviewers: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()

    from review import tokens
    from tests import review_factories as f

    trial = f.make_trial(reward=0.9, pass_threshold=0.5)
    users = [f.make_user(f"reviewer-{n}", "reviewer") for n in range(reviewers)]
    print(
        json.dumps({"trial": trial.pk, "tokens": [tokens.create_token(user)[1] for user in users]})
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["seed"]:
        seed(int(sys.argv[2]))
