"""What an agent changed: a git working tree against its seeded baseline (seed 003).

"The platform captures the cumulative git diff of the workspace versus the seeded baseline":
tracked, untracked and deleted files and renames, as the working tree stands now. The user's
repository is left exactly as it was: the tree is staged into a temporary index
(`GIT_INDEX_FILE`) whose new objects go to a temporary object directory (the repository's own
objects are borrowed read-only as an alternate), and git is always called with an argv list.

Git stores a symlink as its target text and never follows it, so reading the changes never
leaves the workspace; what is read from git is bounded (`MAX_DIFF_BYTES`).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rewards.diffs import FileLines, parse_line_diff

# The line diffs every heuristic scorer reads, and the patch the judge reads, are bounded:
# past these sizes the rest is not read (and the result says so).
MAX_DIFF_BYTES = 32 * 1024 * 1024
MAX_PATCH_BYTES = 2 * 1024 * 1024
GIT_TIMEOUT_S = 300

# Repository settings that would make git run a program while we read (a file-system
# monitor, hooks) are switched off for our calls; `--no-ext-diff --no-textconv` on every diff.
_SAFE_CONFIG = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.quotePath=false",
    "-c",
    "diff.renames=true",
)

STATUS_NAMES = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "T": "type_changed",
    "C": "copied",
}


class WorkspaceError(Exception):
    """The workspace or its baseline cannot be read; the message is short and safe to show."""


@dataclass(frozen=True)
class ChangedFile:
    path: str  # where the file is now (for a deletion: where it was)
    status: str  # one of STATUS_NAMES' values
    old_path: str = ""  # a rename's former path

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this change touches: a rename changes both its old and new path."""
        return (self.old_path, self.path) if self.old_path else (self.path,)


@dataclass(frozen=True)
class Changes:
    root: Path
    baseline: str  # the baseline's commit id
    files: list[ChangedFile]
    lines: dict[str, FileLines]  # by ChangedFile.path
    patch: str  # the cumulative diff (for the judge and the Diff tab), bounded
    patch_truncated: bool = False
    lines_truncated: bool = False

    @property
    def changed_paths(self) -> list[str]:
        return [p for f in self.files for p in f.paths]


def read_changes(
    workspace: str | os.PathLike[str],
    baseline: str,
    *,
    max_diff_bytes: int = MAX_DIFF_BYTES,
    max_patch_bytes: int = MAX_PATCH_BYTES,
) -> Changes:
    root = Path(workspace)
    if not root.is_dir():
        raise WorkspaceError(f"{workspace}: not a directory")
    root = root.resolve()
    top = _git(root, ["rev-parse", "--show-toplevel"]).strip()
    if not top or Path(top).resolve() != root:
        raise WorkspaceError(f"{workspace}: not the top of a git working tree")
    if baseline.startswith("-"):
        raise WorkspaceError(f"baseline {baseline!r} is not a revision")
    commit = _git(root, ["rev-parse", "--verify", "--quiet", f"{baseline}^{{commit}}"]).strip()
    if not commit:
        raise WorkspaceError(f"baseline {baseline!r} is not a commit of this repository")
    # Filter drivers named by .gitattributes run a program of the repository's choosing on
    # `git add`: each is switched off (an empty command means "no filter"), so the files are
    # read as they are on disk.
    drivers = _filter_drivers(root)
    neutral = tuple(
        arg
        for name in drivers
        for setting in ("clean=", "smudge=", "process=", "required=false")
        for arg in ("-c", f"filter.{name}.{setting}")
    )
    objects = Path(_git(root, ["rev-parse", "--git-path", "objects"]).strip())
    if not objects.is_absolute():
        objects = root / objects

    with tempfile.TemporaryDirectory(prefix="trialdesk-index-") as tmp:
        scratch = Path(tmp) / "objects"
        scratch.mkdir()
        env = {
            "GIT_INDEX_FILE": str(Path(tmp) / "index"),
            "GIT_OBJECT_DIRECTORY": str(scratch),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects.resolve()),
        }
        _git(root, ["read-tree", commit], env=env)
        _git(root, [*neutral, "add", "--update", "--", "."], env=env)
        # Files the baseline did not have are listed with the baseline's ignore rules alone:
        # the agent's own .gitignore, info/exclude or core.excludesFile would let it hide a
        # file it added (a workflow, a key) from every scorer.
        ignored = Path(tmp) / "baseline-ignore"
        ignored.write_text(baseline_ignore_rules(root, commit), "utf-8", "surrogateescape")
        listing = ["ls-files", "--others", "-z", f"--exclude-from={ignored}"]
        if new := _git(root, listing, env=env):
            adding = ["add", "--force", "--pathspec-from-file=-", "--pathspec-file-nul"]
            literal = {**env, "GIT_LITERAL_PATHSPECS": "1"}
            _git(root, [*neutral, *adding], env=literal, stdin=new)
        diff = [*neutral, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", "-M"]
        status = _git(root, [*diff, "--name-status", "-z", commit], env=env)
        line_diff, lines_truncated = _git_bounded(
            root, [*diff, "--unified=0", commit], max_diff_bytes, env=env
        )
        patch, patch_truncated = _git_bounded(root, [*diff, commit], max_patch_bytes, env=env)

    return Changes(
        root=root,
        baseline=commit,
        files=_parse_name_status(status),
        lines=parse_line_diff(line_diff),
        patch=patch,
        patch_truncated=patch_truncated,
        lines_truncated=lines_truncated,
    )


def baseline_ignore_rules(root: Path, commit: str) -> str:
    """The ignore rules of the baseline's .gitignore files, as patterns from the top.

    A pattern in `dir/.gitignore` with a slash before its end is relative to `dir/`; one
    without matches at any depth below `dir/` (gitignore(5)).
    """
    names = _git(root, ["ls-tree", "-r", "-z", "--name-only", commit]).split("\0")
    rules: list[str] = []
    for name in names:
        if name == ".gitignore" or name.endswith("/.gitignore"):
            folder = name.removesuffix(".gitignore")
            text = _git(root, ["cat-file", "blob", f"{commit}:{name}"])
            rules.extend(_from_top(folder, line) for line in text.splitlines())
    return "".join(f"{rule}\n" for rule in rules)


def _from_top(folder: str, line: str) -> str:
    if not folder or not line.strip() or line.startswith("#"):
        return line
    negated = "!" if line.startswith("!") else ""
    pattern = line.removeprefix(negated)
    if "/" in pattern.rstrip().rstrip("/"):
        return f"{negated}{folder}{pattern.lstrip('/')}"
    return f"{negated}{folder}**/{pattern}"


def _filter_drivers(root: Path) -> list[str]:
    listed = _git(root, ["config", "--name-only", "--get-regexp", r"^filter\."], ok_codes=(0, 1))
    names = set()
    for line in listed.splitlines():
        # filter.<driver>.<key>; a driver's name may itself hold dots.
        head, _, _key = line.partition(".")[2].rpartition(".")
        if head:
            names.add(head)
    return sorted(names)


def _environment(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    env.update(extra or {})
    return env


def _verb(args: list[str]) -> str:
    """The git command's name, for messages (past any `-c name=value`)."""
    rest = iter(args)
    for arg in rest:
        if arg == "-c":
            next(rest, None)
        else:
            return arg
    return "git"


def _command(root: Path, args: list[str]) -> list[str]:
    return ["git", "-c", f"safe.directory={root}", *_SAFE_CONFIG, "-C", str(root), *args]


def _git(
    root: Path,
    args: list[str],
    env: dict[str, str] | None = None,
    ok_codes: tuple[int, ...] = (0,),
    stdin: str | None = None,
) -> str:
    try:
        done = subprocess.run(  # noqa: S603 (an argv list, no shell)
            _command(root, args),
            input=None if stdin is None else stdin.encode("utf-8", "surrogateescape"),
            capture_output=True,
            env=_environment(env),
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise WorkspaceError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise WorkspaceError(f"git {_verb(args)} took longer than {GIT_TIMEOUT_S}s") from None
    if done.returncode not in ok_codes and args[:2] != ["rev-parse", "--verify"]:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WorkspaceError(
            f"git {_verb(args)} failed: {reason[-1][:200] if reason else 'no reason'}"
        )
    return done.stdout.decode("utf-8", "surrogateescape")


def _git_bounded(
    root: Path, args: list[str], limit: int, env: dict[str, str] | None = None
) -> tuple[str, bool]:
    """git's output up to `limit` bytes, and whether there was more (git is then stopped)."""
    with tempfile.TemporaryFile() as out:
        try:
            process = subprocess.Popen(  # noqa: S603 (an argv list, no shell)
                _command(root, args),
                stdout=subprocess.PIPE,
                stderr=out,
                env=_environment(env),
            )
        except FileNotFoundError:
            raise WorkspaceError("git is not installed") from None
        assert process.stdout is not None
        data = process.stdout.read(limit + 1)
        truncated = len(data) > limit
        if truncated:
            process.kill()
        process.stdout.close()
        try:
            code = process.wait(timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            raise WorkspaceError(f"git {_verb(args)} took longer than {GIT_TIMEOUT_S}s") from None
        if code != 0 and not truncated:
            out.seek(0)
            reason = out.read(2000).decode("utf-8", "replace").strip().splitlines()
            raise WorkspaceError(
                f"git {_verb(args)} failed: {reason[-1][:200] if reason else 'no reason'}"
            )
    text = data[:limit].decode("utf-8", "replace")
    return text, truncated


def _parse_name_status(raw: str) -> list[ChangedFile]:
    fields = raw.split("\x00")
    files: list[ChangedFile] = []
    index = 0
    while index < len(fields) and fields[index]:
        code = fields[index]
        letter = code[:1]
        status = STATUS_NAMES.get(letter, "modified")
        if letter in {"R", "C"}:
            old, new = fields[index + 1], fields[index + 2]
            files.append(ChangedFile(new, status, old_path=old if letter == "R" else ""))
            index += 3
        else:
            files.append(ChangedFile(fields[index + 1], status))
            index += 2
    return files
