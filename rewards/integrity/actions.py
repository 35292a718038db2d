"""What an agent's step did to files: writes, deletions, reads, as far as its text says.

A step's tool calls are read from the stored ATIF step (`rewards.reports` reads the steps):
shell calls (`command`, `cmd`, `keystrokes`…) through `shell.parse`, editor and file tools by
their path and content arguments, inline Python (`python -c`, a Python tool's `code`) through
`ast`, so `shutil.rmtree("tests")` and `open("/logs/verifier/reward.txt", "w")` are the
deletion and the write they are. Each action keeps the text it came from, for the finding.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewards.integrity import shell
from rewards.reports import as_text

WRITE, DELETE, READ, USE = "write", "delete", "read", "use"
MAX_TEXT = 300  # characters of a command kept as a finding's matched text


@dataclass(frozen=True)
class Action:
    kind: str  # WRITE (create, modify, append), DELETE (or moved away), READ, USE (named)
    path: str  # normalised, as seen from the directory the step ran in
    text: str  # the command or call it came from
    content: str = ""  # what a write puts there, when the text says


@dataclass
class Session:
    """What carries from one step to the next: the shell's working directory; and what
    shell text must hold (quotes and backslashes aside) to be worth reading at all."""

    cwd: str = ""
    # Searched in the lowercased text: a case-sensitive pattern of lowercase words runs
    # three times as fast as the same words matched ignoring case.
    relevant: re.Pattern[str] | None = None
    _looked_at: str | None = None  # the working directory last searched, and what it gave
    _cwd_relevant: bool = False

    def worth_reading(self, text: str) -> bool:
        # Most commands name nothing a detector looks for: a regex over the text decides in
        # microseconds what tokenising would take a tenth of a millisecond to (ingest reads
        # every step of every trial).
        relevant = self.relevant
        if relevant is None:
            return True
        cwd = self.cwd
        if cwd != self._looked_at:  # it changes only when a command moves it
            self._looked_at, self._cwd_relevant = cwd, bool(relevant.search(cwd.lower()))
        if self._cwd_relevant:
            return True
        return bool(relevant.search(_UNQUOTE.sub("", text).lower()))


_UNQUOTE = re.compile(r"['\"\\]")


def clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


# --- tool calls -----------------------------------------------------------------------------
_SHELL_KEYS = ("command", "cmd", "keystrokes", "script", "shell_command", "bash_command")
_PATH_KEYS = (
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "target_file",
    "notebook_path",
    "source",
    "src",
)
_DEST_KEYS = ("destination", "dest", "new_path", "target", "to")
_CONTENT_KEYS = (
    "content",
    "contents",
    "file_text",
    "new_string",
    "new_str",
    "text",
    "insert_text",
    "new_source",
    "edits",
    "patch",
    "diff",
)
_EDITOR_READS = {"view", "read", "open", "cat"}
_EDITOR_WRITES = {"create", "str_replace", "insert", "undo_edit", "write", "edit", "append"}
_EDITOR_VERBS = _EDITOR_READS | _EDITOR_WRITES
_TOOL_WRITES = re.compile(r"write|edit|create|replace|append|insert|patch|save|update|modify")
_TOOL_DELETES = re.compile(r"delete|remove|unlink|\brm\b")
_TOOL_MOVES = re.compile(r"move|rename")
_TOOL_READS = re.compile(r"read|view|open|cat|get|load|list|ls|glob|grep|search|find")
_PYTHON_TOOLS = re.compile(r"python|ipython|jupyter|execute_code|run_code|notebook")
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$|^\+\+\+ (?:b/)?(.+)$", re.M)


def step_actions(step: Mapping[str, Any], session: Session) -> list[Action]:
    """The actions of one ATIF step's tool calls."""
    calls = step.get("tool_calls")
    out: list[Action] = []
    for call in calls if isinstance(calls, list) else []:
        # `type(…) is dict` first: parsed JSON's objects, told apart without the ABC check.
        if type(call) is dict or isinstance(call, Mapping):
            name = as_text(call.get("function_name") or call.get("name") or "").lower()
            arguments = call.get("arguments")
            if isinstance(arguments, str):
                arguments = _json_or_text(arguments)
            out.extend(tool_actions(name, arguments, session))
    return out


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def tool_actions(name: str, arguments: Any, session: Session) -> list[Action]:
    if isinstance(arguments, str):
        # A bare string argument: a shell tool's command line, or a patch.
        if _PATCH_FILE.search(arguments):
            return _patch_actions(arguments, session)
        if _PYTHON_TOOLS.search(name):
            return python_actions(arguments, session.cwd, clip(arguments))
        return shell_actions(arguments, session)
    if isinstance(arguments, list) and all(isinstance(a, str) for a in arguments):
        return shell_actions(shlex_join(arguments), session)
    if not (type(arguments) is dict or isinstance(arguments, Mapping)):
        return []
    verb = arguments.get("command")
    # A shell tool's `command` may be a list of words: only a string names an editor verb.
    if (
        isinstance(verb, str)
        and verb in _EDITOR_VERBS
        and (path := _first_str(arguments, _PATH_KEYS))
    ):
        where, text = shell.join(session.cwd, path), _call_text(name, arguments)
        if verb in _EDITOR_READS:
            return [Action(READ, where, text)]
        return [Action(WRITE, where, text, _content(arguments))]
    # Shell calls first: most tool calls are one.
    for key in _SHELL_KEYS:
        value = arguments.get(key)
        if value is None:
            continue
        if isinstance(value, str) and value.strip():
            return shell_actions(value, session)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return shell_actions(shlex_join(value), session)
    path = _first_str(arguments, _PATH_KEYS)
    code = arguments.get("code")
    if isinstance(code, str) and _PYTHON_TOOLS.search(name):
        return python_actions(code, session.cwd, clip(code))
    patch = next(
        (
            v
            for k in ("input", "patch", "diff")
            if isinstance(v := arguments.get(k), str) and _PATCH_FILE.search(v)
        ),
        None,
    )
    if patch is not None and not path:
        return _patch_actions(patch, session)
    if not path:
        return []
    text = _call_text(name, arguments)
    where = shell.join(session.cwd, path)
    content = _content(arguments)
    if _TOOL_MOVES.search(name):
        dest = _first_str(arguments, _DEST_KEYS)
        moved = [Action(DELETE, where, text)]
        return moved + ([Action(WRITE, shell.join(session.cwd, dest), text)] if dest else [])
    if _TOOL_DELETES.search(name):
        return [Action(DELETE, where, text)]
    if _TOOL_WRITES.search(name) or content:
        return [Action(WRITE, where, text, content)]
    if _TOOL_READS.search(name):
        return [Action(READ, where, text)]
    return [Action(USE, where, text)]


def _first_str(arguments: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _content(arguments: Mapping[str, Any]) -> str:
    return "\n".join(as_text(arguments[k]) for k in _CONTENT_KEYS if arguments.get(k))


def _call_text(name: str, arguments: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in arguments.items() if k not in _CONTENT_KEYS}
    return clip(f"{name} {json.dumps(shown, ensure_ascii=False, default=str)}")


def _patch_actions(patch: str, session: Session) -> list[Action]:
    out = []
    for match in _PATCH_FILE.finditer(patch):
        verb, name = (match.group(1), match.group(2)) if match.group(2) else ("", match.group(3))
        name = name.strip()
        if not name or name == "/dev/null":
            continue
        kind = DELETE if verb == "Delete" else WRITE
        out.append(Action(kind, shell.join(session.cwd, name), clip(match.group(0)), patch))
    return out


def shlex_join(words: list[str]) -> str:
    return shlex.join(words)


# --- shell ----------------------------------------------------------------------------------
# Commands whose operands are files they only read.
_READERS = {
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "nl",
    "wc",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "file",
    "stat",
    "ls",
    "tree",
    "bat",
    "view",
    "vim",
    "vi",
    "nano",
    "emacs",
    "code",
    "source",
    ".",
    "base64",
    "md5sum",
    "sha256sum",
    "cd",
}
# Commands whose first operand is a pattern or program, the rest files they read.
_PATTERN_READERS = {"grep", "egrep", "fgrep", "rg", "ag", "awk", "gawk", "jq"}
_DELETERS = {"rm", "rmdir", "unlink", "shred", "srm"}
_TOUCHERS = {"touch", "truncate"}
_MODE_CHANGERS = {"chmod", "chown", "chgrp", "chattr"}
_COPIERS = {"cp", "install", "rsync", "scp"}
_INTERPRETERS = re.compile(r"^(?:python[\d.]*|pypy[\d.]*)$")
_SCRIPT_E = {"perl", "node", "ruby", "php", "nodejs", "deno"}
_OPTION_VALUES = {
    "-t",
    "-m",
    "-o",
    "-g",
    "-s",
    "-S",
    "-e",
    "-f",
    "-n",
    "--target-directory",
    "--suffix",
}


def shell_actions(text: str, session: Session) -> list[Action]:
    if not session.worth_reading(text):
        return []
    commands, session.cwd = shell.parse(text, session.cwd)
    out: list[Action] = []
    for command in commands:
        out.extend(command_actions(command))
    return out


def _operands(words: list[str], with_value: frozenset[str] | set[str] = frozenset()) -> list[str]:
    out = []
    index = 0
    options_done = False
    while index < len(words):
        word = words[index]
        if not options_done and word == "--":
            options_done = True
        elif not options_done and word.startswith("-") and word != "-":
            if word in with_value:
                index += 1
        else:
            out.append(word)
        index += 1
    return out


def _option_value(words: list[str], *names: str) -> str | None:
    for index, word in enumerate(words):
        for name in names:
            if word == name and index + 1 < len(words):
                return words[index + 1]
            if name.startswith("--") and word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


def command_actions(command: shell.Command) -> list[Action]:
    """One simple command's effects on files."""
    cwd = command.cwd
    text = ""  # made when the first action needs it: most commands have none
    out: list[Action] = []

    def act(kind: str, path: str, content: str = "") -> None:
        nonlocal text
        if path:
            text = text or _command_text(command)
            out.append(Action(kind, shell.join(cwd, path), text, content))

    name = command.name
    args = command.argv[1:]
    content = command.heredoc or (" ".join(args) if name in {"echo", "printf"} else "")
    if (
        not content
        and command.piped_from is not None
        and command.piped_from.name
        in {
            "echo",
            "printf",
            "cat",
        }
    ):
        content = command.piped_from.heredoc or " ".join(command.piped_from.argv[1:])
    for target in command.writes_to:
        act(WRITE, target, content)
    for source in command.reads_from:
        act(READ, source)

    if command.from_xargs and command.piped_from is not None and name in _DELETERS | {"mv"}:
        # `find tests -name '*.py' | xargs rm`: the paths came down the pipe.
        fed = command.piped_from
        for path in _operands(fed.argv[1:]) if fed.name in {"find", "ls", "echo"} else []:
            if not path.startswith(("-", "(", "!")):
                act(DELETE, path)
    if name in _DELETERS:
        for path in _operands(args):
            act(DELETE, path)
    elif name == "mv":
        operands = _operands(args, {"-t", "-S", "--suffix", "--target-directory"})
        dest = _option_value(args, "-t", "--target-directory")
        if dest is None and len(operands) > 1:
            dest = operands.pop()
        for path in operands:
            act(DELETE, path)
        if dest:
            act(WRITE, dest)
    elif name in _COPIERS:
        operands = _operands(args, {"-t", "-m", "-o", "-g", "-S", "--target-directory"})
        dest = _option_value(args, "-t", "--target-directory")
        if dest is None and len(operands) > 1:
            dest = operands.pop()
        for path in operands:
            act(READ, path)
        if dest:
            act(WRITE, dest)
    elif name == "ln":
        operands = _operands(args, {"-t", "-S"})
        if len(operands) > 1:
            act(WRITE, operands[-1])
    elif name in _TOUCHERS:
        for path in _operands(args, {"-s", "-r", "-d", "-t"}):
            act(WRITE, path)
    elif name in _MODE_CHANGERS:
        # `chmod -x f`: a mode may look like an option; only chmod's own flags are options.
        words = [w for w in args if not re.fullmatch(r"-[RvfchHLP]+|--.*", w)]
        for path in words[1:]:
            act(WRITE, path)
    elif name == "tee":
        for path in _operands(args):
            act(WRITE, path, content)
    elif name == "dd":
        for word in args:
            if word.startswith("of="):
                act(WRITE, word[3:])
            elif word.startswith("if="):
                act(READ, word[3:])
    elif name == "sed":
        _sed(args, act)
    elif name == "find":
        _find(args, act)
    elif name == "git":
        _git(args, act)
    elif _INTERPRETERS.match(name):
        code = _option_value(args, "-c")
        if code is not None:
            out.extend(python_actions(code, cwd, clip(f"{command.argv[0]} -c {code}")))
        else:
            operands = _operands(args, {"-m", "-W", "-X"})
            if operands and "-m" not in args:
                act(USE, operands[0])
    elif name in _SCRIPT_E:
        in_place = any(w.startswith("-") and "i" in w.lstrip("-") for w in args if w != "-e")
        code = _option_value(args, "-e", "-E", "-r")
        if code is not None:
            out.extend(_script_actions(code, cwd, text))
        if in_place and name == "perl":
            for path in _operands(args, {"-e", "-E"}):
                act(WRITE, path, code or "")
    elif name in _READERS:
        for path in _operands(args, {"-n", "-c", "-t"}):
            act(READ, path)
    elif name in _PATTERN_READERS:
        operands = _operands(args, {"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-F", "-v"})
        if "-e" not in args and "-f" not in args:
            operands = operands[1:]
        for path in operands:
            act(READ, path)
    elif name not in {"echo", "printf", "true", "false", "test", "["}:
        # A command of unknown effect: what it names is used, never taken as changed.
        for word in args:
            if "/" in word and not word.startswith("-"):
                act(USE, word)
    return out


def _command_text(command: shell.Command) -> str:
    shown = command.text
    if command.piped_from is not None:
        shown = f"{command.piped_from.text} | {shown}"
    if command.cwd:
        shown = f"(in {command.cwd}) {shown}"
    return clip(shown)


def _sed(args: list[str], act: Any) -> None:
    in_place = any(w == "--in-place" or re.fullmatch(r"-[nEr]*i\S*", w) for w in args)
    scripts = [args[i + 1] for i, w in enumerate(args[:-1]) if w in {"-e", "--expression"}]
    operands = _operands(args, {"-e", "--expression", "-f", "--file", "-l"})
    if not scripts and operands:
        scripts.append(operands.pop(0))
    for path in operands:
        act(WRITE if in_place else READ, path, "\n".join(scripts) if in_place else "")


_FIND_CHANGERS = {"rm", "mv", "shred", "unlink", "truncate", "rmdir"}


def _find(args: list[str], act: Any) -> None:
    roots = []
    for word in args:
        if word.startswith(("-", "(", "!", ")")):
            break
        roots.append(word)
    changes = "-delete" in args
    for index, word in enumerate(args):
        if word in {"-exec", "-execdir", "-ok", "-okdir"} and index + 1 < len(args):
            run = args[index + 1].rsplit("/", 1)[-1]
            if run in _FIND_CHANGERS or (run == "sed" and "-i" in args[index + 1 :]):
                changes = True
    for root in roots or ["."]:
        act(DELETE if changes else READ, root)


def _git(args: list[str], act: Any) -> None:
    operands = _operands(args, {"-C", "-c"})
    if not operands:
        return
    sub, rest = operands[0], _operands(operands[1:])
    if sub == "rm":
        for path in rest:
            act(DELETE, path)
    elif sub == "mv" and len(rest) > 1:
        for path in rest[:-1]:
            act(DELETE, path)
        act(WRITE, rest[-1])


# --- inline code ----------------------------------------------------------------------------
_PY_WRITE_CALLS = {"write_text", "write_bytes", "touch", "mkdir", "symlink_to"}
_PY_DELETE_CALLS = {"remove", "unlink", "rmtree", "rmdir", "removedirs"}
_PY_MOVE_CALLS = {"rename", "replace", "move"}
_PY_COPY_CALLS = {"copy", "copy2", "copyfile", "copytree"}
_PY_READ_CALLS = {"read_text", "read_bytes", "listdir", "scandir", "walk", "iterdir", "glob"}
_PY_SHELL_CALLS = {"system", "popen", "run", "call", "check_call", "check_output", "Popen"}


def python_actions(code: str, cwd: str, text: str) -> list[Action]:
    """What inline Python does to files, read with `ast` (never run)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return _script_actions(code, cwd, text)
    out: list[Action] = []

    def act(kind: str, node: ast.AST | None) -> None:
        path = _py_path(node) if node is not None else None
        if path:
            out.append(Action(kind, shell.join(cwd, path), text, code if kind == WRITE else ""))

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        target: ast.AST | None = node.args[0] if node.args else None
        # `Path("x").write_text(…)`: the path is the receiver, not an argument.
        receiver = func.value if isinstance(func, ast.Attribute) else None
        receiver_is_path = isinstance(receiver, ast.Call | ast.BinOp) and _py_path(receiver)
        if (name == "open" and not isinstance(func, ast.Attribute)) or (
            name == "open" and receiver_is_path
        ):
            where = receiver if receiver_is_path else target
            mode = _py_mode(node, 0 if receiver_is_path else 1)
            act(WRITE if set(mode) & set("wax+") else READ, where)
        elif name in _PY_WRITE_CALLS:
            act(WRITE, receiver if receiver_is_path else target)
        elif name in _PY_DELETE_CALLS:
            act(DELETE, receiver if receiver_is_path else target)
        elif name in _PY_MOVE_CALLS:
            source = receiver if receiver_is_path else target
            dest = (
                node.args[0 if receiver_is_path else 1]
                if len(node.args) > (0 if receiver_is_path else 1)
                else None
            )
            act(DELETE, source)
            act(WRITE, dest)
        elif name in _PY_COPY_CALLS and len(node.args) > 1:
            act(READ, node.args[0])
            act(WRITE, node.args[1])
        elif name in _PY_READ_CALLS:
            act(READ, receiver if receiver_is_path else target)
        elif name in _PY_SHELL_CALLS and target is not None:
            shell_text = _py_str(target)
            if shell_text is None and isinstance(target, ast.List | ast.Tuple):
                words = [_py_str(e) for e in target.elts]
                if all(w is not None for w in words):
                    shell_text = shlex_join([w for w in words if w is not None])
            if shell_text:
                out.extend(shell_actions(shell_text, Session(cwd)))
    return out


def _py_str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
        return "".join(str(p) for p in parts) or None
    return None


def _py_path(node: ast.AST) -> str | None:
    """A path expression's value when the code spells it out: a string, `Path("a") / "b"`,
    `os.path.join("a", "b")`, `Path("a", "b")`."""
    if (text := _py_str(node)) is not None:
        return text
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _py_path(node.left), _py_path(node.right)
        return f"{left}/{right}" if left and right else None
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in {"Path", "PurePath", "PosixPath", "join"} and node.args:
            parts = [_py_path(a) for a in node.args]
            return "/".join(p for p in parts if p) if all(parts) else None
    return None


def _py_mode(call: ast.Call, position: int) -> str:
    mode: ast.AST | None = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    return (_py_str(mode) if mode is not None else None) or "r"


# Code in another language (or Python that does not parse): its quoted strings are the paths
# it names, written when the code holds a call that writes or removes files.
_QUOTED = re.compile(r"""(['"])((?:(?!\1)[^\\\n]|\\.)+)\1""")
_CHANGES_FILES = re.compile(
    r"\b(?:unlink|rmtree|rmdir|remove|rm_rf|rm|rename|writeFile\w*|write_text|write|"
    r"truncate|copyFile\w*|appendFile\w*|open\s*\([^)]*['\"][wa+])\b"
)


def _script_actions(code: str, cwd: str, text: str) -> list[Action]:
    kind = WRITE if _CHANGES_FILES.search(code) else USE
    out = []
    for match in _QUOTED.finditer(code):
        literal = match.group(2)
        if "/" in literal or (kind == WRITE and not re.search(r"\s", literal)):
            out.append(Action(kind, shell.join(cwd, literal), text, code if kind == WRITE else ""))
    return out
