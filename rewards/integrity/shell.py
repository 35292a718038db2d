"""Shell text an agent ran, as the simple commands it is made of.

The standard library's `shlex` resolves quoting (`te""sts` is `tests`, `'rm' -rf` is `rm`);
operators (`;`, `&&`, `|`, newlines) split commands; redirections are kept apart from the
arguments; heredoc bodies are lifted out first (they are the content a redirection writes).
Wrappers that run another command (`sh -c`, `bash -lc`, `eval`, `sudo`, `env`, `timeout`,
`xargs`…) are seen through, so `bash -lc 'rm -rf tests'` is the `rm` it runs. Shell text that
does not tokenise (an unclosed quote) is split on blanks instead: a hostile command must not
escape the detectors by being malformed.

Nothing here runs anything: this is reading text.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

# Operators shlex hands back as their own tokens (newline included: it ends a command).
_PUNCTUATION = "();<>|&\n"
_SEPARATORS = {";", "&&", "||", "|", "&", "\n", "(", ")", ";;", "|&"}
_PIPES = {"|", "|&"}
_OPERATOR_CHARS = set(_PUNCTUATION)
_WRITE_REDIRECTS = {">", ">>", ">|", "&>", "&>>", ">&"}
_READ_REDIRECTS = {"<"}
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\1")
# A command that runs the rest of its arguments as a command, and how many option words to
# pass over first (None: every word starting with "-", and for env, VAR=value words).
_PREFIX_WRAPPERS = {
    "sudo",
    "doas",
    "env",
    "nohup",
    "nice",
    "time",
    "command",
    "exec",
    "builtin",
    "stdbuf",
    "timeout",
    "ionice",
    "chroot",
    "unbuffer",
}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash", "busybox"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_DEPTH = 4  # wrappers inside wrappers, each level parsed again


@dataclass
class Command:
    """One simple command: its words, where it redirects, and what it writes there."""

    argv: list[str]
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (operator, target)
    heredoc: str = ""  # the body fed on standard input, when there was one
    cwd: str = ""  # the directory it ran in, as far as the text says ("" unknown)
    piped_from: Command | None = None  # the command whose output feeds this one
    from_xargs: bool = False  # run by xargs: its operands are what `piped_from` printed

    @property
    def name(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def text(self) -> str:
        """The command as a shell would read it, redirections included (for a finding)."""
        words = [*self.argv, *(f"{op} {target}" for op, target in self.redirects)]
        return " ".join(shlex.quote(w) if not _is_redirect(w) else w for w in words)

    @property
    def writes_to(self) -> list[str]:
        return [t for op, t in self.redirects if op in _WRITE_REDIRECTS and not t.isdigit()]

    @property
    def reads_from(self) -> list[str]:
        return [t for op, t in self.redirects if op in _READ_REDIRECTS]


def _is_redirect(word: str) -> bool:
    return bool(re.fullmatch(r"[&>|<]+ .*", word))


_NEEDS_LEXER = re.compile(r"['\"\\#]")
_PLAIN_TOKENS = re.compile(r"[();<>|&\n]+|[^\s();<>|&]+")


def _tokens(text: str) -> list[str]:
    if not _NEEDS_LEXER.search(text):
        # Nothing quoted or escaped: the words as shlex would give them, a good deal faster
        # (ingest reads every step of every trial).
        return _PLAIN_TOKENS.findall(text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        # Unbalanced quotes: read it word by word rather than not at all.
        return [w.strip("'\"") for w in re.split(r"[ \t\r]+|(?=[;\n|&])|(?<=[;\n|&])", text) if w]


def _lift_heredocs(text: str) -> tuple[str, list[str]]:
    """The text without heredoc bodies, and the bodies in order of appearance."""
    bodies: list[str] = []
    out: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        out.append(line)
        index += 1
        for match in _HEREDOC.finditer(line):
            end = match.group(2)
            body: list[str] = []
            while index < len(lines) and lines[index].strip() != end:
                body.append(lines[index])
                index += 1
            index += 1  # the closing word
            bodies.append("\n".join(body))
    return "\n".join(out), bodies


def parse(text: str, cwd: str = "", depth: int = 0) -> tuple[list[Command], str]:
    """The simple commands of `text`, and the directory the text ends in (after `cd`)."""
    body, heredocs = _lift_heredocs(text)
    commands: list[Command] = []
    current = Command(argv=[], cwd=cwd)
    previous: Command | None = None
    tokens = _tokens(body)
    index = 0

    def finish(operator: str) -> None:
        nonlocal current, previous, cwd
        if current.argv or current.redirects:
            if any(op == "<<" for op, _ in current.redirects) and heredocs:
                current.heredoc = heredocs.pop(0)
            current.redirects = [(op, t) for op, t in current.redirects if op != "<<"]
            produced, cwd = _expand(current, cwd, depth)
            commands.extend(produced)
            previous = current
        current = Command(argv=[], cwd=cwd)
        if operator in _PIPES and previous is not None:
            current.piped_from = previous
        else:
            previous = None

    while index < len(tokens):
        token = tokens[index]
        if token in _SEPARATORS or (
            token and set(token) <= _OPERATOR_CHARS and not set(token) & {"<", ">"}
        ):
            # shlex runs operators together (`;\n`, `)\n`): any run of them ends a command.
            finish("|" if token in _PIPES else token)
        elif token and set(token) <= _OPERATOR_CHARS:
            target = tokens[index + 1] if index + 1 < len(tokens) else ""
            if token.startswith("<<"):
                current.redirects.append(("<<", target))
            else:
                # `2>&1` arrives as `2`, `>&`, `1`: the `2` stays an argument (`echo 2 >x`
                # reads the same), harmless to every detector.
                current.redirects.append((token, target))
            index += 1
        else:
            current.argv.append(token)
        index += 1
    finish("")
    return commands, cwd


def _expand(command: Command, cwd: str, depth: int) -> tuple[list[Command], str]:
    """The command itself, or what a wrapper runs; `cd` moves the working directory."""
    argv = command.argv
    while argv and _ASSIGNMENT.match(argv[0]):
        argv = argv[1:]
    if not argv:
        return ([command] if command.redirects else []), cwd
    name = argv[0].rsplit("/", 1)[-1]
    if name in {"cd", "pushd"}:
        target = next((a for a in argv[1:] if not a.startswith("-")), "")
        return [], join(cwd, target) if target and target != "~" else ""
    if depth >= MAX_DEPTH:
        return [replace_argv(command, argv)], cwd
    if name in _PREFIX_WRAPPERS:
        rest = _after_options(argv[1:], timeout=name == "timeout")
        return _expand(replace_argv(command, rest), cwd, depth)
    if name in _SHELLS or name == "su":
        script = _dash_c(argv[1:])
        if script is not None:
            inner, cwd_after = parse(script, cwd, depth + 1)
            return _inherit(inner, command), cwd_after
    if name == "eval":
        inner, cwd_after = parse(" ".join(argv[1:]), cwd, depth + 1)
        return _inherit(inner, command), cwd_after
    if name == "xargs":
        rest = _after_options(argv[1:], xargs=True)
        run = replace_argv(command, rest)
        run.from_xargs = True
        return [run], cwd
    return [replace_argv(command, argv)], cwd


def _inherit(inner: list[Command], outer: Command) -> list[Command]:
    """Commands run by a wrapper: the wrapper's own redirections apply to them too."""
    for command in inner:
        command.redirects.extend(outer.redirects)
        if outer.heredoc and not command.heredoc:
            command.heredoc = outer.heredoc
    return inner


def replace_argv(command: Command, argv: list[str]) -> Command:
    return Command(
        argv=argv,
        redirects=command.redirects,
        heredoc=command.heredoc,
        cwd=command.cwd,
        piped_from=command.piped_from,
    )


def _after_options(words: list[str], *, timeout: bool = False, xargs: bool = False) -> list[str]:
    """The words after a wrapper's options (and `VAR=value` words, and timeout's duration)."""
    index = 0
    with_value = {"-u", "-g", "-n", "-C", "-s", "-k", "-I", "-d", "-P", "-L", "-E", "--signal"}
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if word.startswith("-") or _ASSIGNMENT.match(word):
            index += 2 if word in with_value else 1
            continue
        break
    rest = words[index:]
    if timeout and rest:
        rest = rest[1:]  # the duration
    if xargs and not rest:
        return ["echo"]
    return rest


def _dash_c(words: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` (options combined or not: `-lc`, `-e -c`), else None."""
    for index, word in enumerate(words):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return words[index + 1] if index + 1 < len(words) else None
        if not word.startswith("-"):
            return None
    return None


def join(cwd: str, path: str) -> str:
    """`path` as seen from `cwd`, normalised (`./tests/../tests/x` is `tests/x`)."""
    if not path:
        return path
    if path.startswith("~"):
        path = "/root" + path[1:]
    whole = path if path.startswith("/") or not cwd else f"{cwd.rstrip('/')}/{path}"
    parts: list[str] = []
    for part in whole.split("/"):
        if part in {"", "."}:
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not whole.startswith("/"):
                parts.append(part)
            continue
        parts.append(part)
    normal = "/".join(parts)
    return f"/{normal}" if whole.startswith("/") else normal
