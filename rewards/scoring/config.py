"""Scorer specs (seed 003, "The scorer catalog"): one pydantic model per type.

A scenario's scorers are a list of `{"name", "type", "required"?, <type fields>}`. The
catalogue of type names and the required-by-default rule are `rewards.rules.SCORER_TYPES` and
`rewards.rules.default_required`; only the per-type configuration lives here. A bad spec is
refused before anything runs, with the scorer and the field named.
"""

from __future__ import annotations

import posixpath
import subprocess
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from rewards import rules

NonEmptyStr = Annotated[str, Field(min_length=1)]
GlobList = Annotated[list[NonEmptyStr], Field(min_length=1)]


def _relative_path(value: str) -> str:
    """Seed 003, file_exists: "relative path, no parent traversal"."""
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        raise ValueError("must be a relative path")
    parts = value.replace("\\", "/").split("/")
    if ".." in parts:
        raise ValueError("must not climb out with '..'")
    normal = posixpath.normpath(value.replace("\\", "/"))
    if normal in {"", "."}:
        raise ValueError("must name a file inside the workspace")
    return normal


RelativePath = Annotated[str, Field(min_length=1, max_length=1024), AfterValidator(_relative_path)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=255)]
    required: bool | None = None

    def is_required(self) -> bool:
        type_: str = getattr(self, "type")  # noqa: B009 (every subclass declares it)
        return rules.default_required(type_) if self.required is None else self.required

    def settings(self) -> dict[str, Any]:
        """The type's own fields, as stored in a result's `config`."""
        return self.model_dump(mode="json", exclude={"name", "type", "required"})


# Commands run by the POSIX shell, as CI runners and Harbor's verifiers run theirs.
SHELL = "/bin/sh"


class CommandSpec(_Spec):
    type: Literal["command"]
    command: Annotated[str, Field(min_length=1, max_length=10_000)]
    timeout_s: Annotated[int, Field(ge=1, le=3600)] = 900

    @field_validator("command")
    @classmethod
    def _parses(cls, value: str) -> str:
        # The command is a shell command (seed 003: "Shell command exits non-zero"), written
        # by staff: `sh -n` reads it without running anything, so a scenario with a syntax
        # error is refused when it is saved, not when a trial is graded.
        if not value.strip():
            raise ValueError("names no command")
        checked = subprocess.run(  # noqa: S603 (sh -n only parses; nothing is executed)
            [SHELL, "-n", "-c", value],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=10,
            check=False,
        )
        if checked.returncode != 0:
            reason = checked.stderr.strip().splitlines()
            raise ValueError(f"is not a valid shell command ({reason[-1] if reason else 'sh -n'})")
        return value

    def argv(self) -> list[str]:
        return [SHELL, "-c", self.command]


class AllowedPathsSpec(_Spec):
    type: Literal["allowed_paths"]
    patterns: GlobList


class ForbidPathsSpec(_Spec):
    type: Literal["forbid_paths"]
    patterns: GlobList


class MaxFilesChangedSpec(_Spec):
    type: Literal["max_files_changed"]
    limit: Annotated[int, Field(ge=0)]


class ForbidSecretsSpec(_Spec):
    type: Literal["forbid_secrets"]


class FileExistsSpec(_Spec):
    type: Literal["file_exists"]
    path: RelativePath


class _ExactPaths(_Spec):
    paths: Annotated[list[RelativePath], Field(min_length=1)]


class TestsUnmodifiedSpec(_ExactPaths):
    type: Literal["tests_unmodified"]


class BaselineUnmodifiedSpec(_ExactPaths):
    type: Literal["baseline_unmodified"]


class NoNewSkipsSpec(_Spec):
    type: Literal["no_new_skips"]
    test_globset: list[NonEmptyStr] | None = None


class AssertionsNotWeakenedSpec(_Spec):
    type: Literal["assertions_not_weakened"]
    test_globset: list[NonEmptyStr] | None = None


class LlmJudgeSpec(_Spec):
    type: Literal["llm_judge"]
    rubric: NonEmptyStr


ScorerSpec = Annotated[
    CommandSpec
    | AllowedPathsSpec
    | ForbidPathsSpec
    | MaxFilesChangedSpec
    | ForbidSecretsSpec
    | FileExistsSpec
    | TestsUnmodifiedSpec
    | BaselineUnmodifiedSpec
    | NoNewSkipsSpec
    | AssertionsNotWeakenedSpec
    | LlmJudgeSpec,
    Field(discriminator="type"),
]
_SPEC: TypeAdapter[ScorerSpec] = TypeAdapter(ScorerSpec)
# Each type's own configuration fields, in declaration order (the scenario editor's columns).
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    get_args(model.model_fields["type"].annotation)[0]: tuple(
        name for name in model.model_fields if name not in {"name", "type", "required"}
    )
    for model in get_args(get_args(ScorerSpec)[0])
}


class ScenarioError(ValueError):
    """Scorer specs that cannot run; `problems` holds one line per bad scorer field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _field_message(error: Any) -> str:
    loc = [str(part) for part in error["loc"]]
    # The discriminated union puts the type's tag first: drop it, the scorer is named already.
    if loc and loc[0] in rules.SCORER_TYPES:
        loc = loc[1:]
    where = ".".join(loc) or "(scorer)"
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "is not a field of this scorer type"
    elif error["type"] == "missing":
        message = "is required"
    return f"field {where!r}: {message}"


def parse_scorers(data: Any) -> list[ScorerSpec]:
    """Validate a scenario's scorer list; every problem is named, nothing is guessed."""
    if not isinstance(data, list):
        raise ScenarioError(["the scorers must be a JSON list of objects"])
    specs: list[ScorerSpec] = []
    problems: list[str] = []
    for index, item in enumerate(data, start=1):
        label = f"scorer {index}"
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]:
            label += f" ({item['name'][:80]!r})"
        if not isinstance(item, dict):
            problems.append(f"{label}: must be a JSON object")
            continue
        kind = item.get("type")
        if kind not in rules.SCORER_TYPES:
            shown = repr(kind)[:80] if kind is not None else "missing"
            problems.append(
                f"{label}: field 'type': {shown} is not a scorer type "
                f"(one of {', '.join(rules.SCORER_TYPES)})"
            )
            continue
        try:
            specs.append(_SPEC.validate_python(item, strict=True))
        except ValidationError as exc:
            problems.extend(
                f"{label}: {_field_message(error)}"
                for error in exc.errors(include_url=False, include_input=False)
            )
    if problems:
        raise ScenarioError(problems)
    return specs


def dump_specs(specs: list[ScorerSpec]) -> list[dict[str, Any]]:
    """Specs as the JSON a task freezes: the given fields only, defaults left implicit."""
    return [spec.model_dump(mode="json", exclude_unset=True) for spec in specs]
