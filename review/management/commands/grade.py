"""`manage.py grade`: grade a trial directory, or stored trials (a job, an explorer filter).

    manage.py grade TRIAL_DIR [--workspace W --baseline REV]   # a contract trial directory
    manage.py grade --job nightly-42 [--wait]                  # the stored trials of a job
    manage.py grade --filter "judge_verdict=none"              # an explorer filter's trials
    manage.py grade --trial 17 --workspace W --baseline REV    # one stored trial, with scorers

Seed 003, "How a coding run is graded": the task's frozen scorers run against the workspace,
the judge scores the run with the scorer results as evidence, and the results land on the
trial. Without `--workspace` the trial is a ledger run: judged only (a Harbor trial is judged
from its instruction, trajectory, verifier tests and output, and reward).

A trial directory is graded here and now, then ingested. Stored trials are judged as a grading
batch by the task workers, exactly as `manage.py rejudge` (which this calls) and "Grade these"
in the explorer do: the command enqueues and returns at once, or with `--wait` shows a
progress bar until the batch is judged. Scorers need the workspace on this machine, so they
run here first (one stored trial, `--trial`). The judge is configured by environment
(`rewards.scoring.judge`); `--no-judge` skips it. A judge failure is stored as an UNPARSEABLE
verdict and never fails the command. The filter is the explorer's, so this command lives with
the review app.
"""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from rewards.ingest.report import printable
from rewards.management.commands.score import summary_line
from rewards.models import Trial
from rewards.scoring import judge
from rewards.scoring.grading import GradeError, grade_trial_dir, score_stored
from rewards.scoring.judge import JudgeNotConfigured, JudgeSettings
from rewards.scoring.workspace import WorkspaceError


class Command(BaseCommand):
    help = (
        "Grade a trial directory (run its task's frozen scorers, ask the judge, ingest), or "
        "stored trials (--job, --filter, --trial) as a grading batch."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trial_dir", metavar="TRIAL_DIR", nargs="?")
        stored = parser.add_mutually_exclusive_group()
        stored.add_argument(
            "--filter",
            metavar="QUERY",
            help="the stored trials of an explorer filter, as its query string "
            '("agent=claude-code&judge_verdict=FAIL")',
        )
        stored.add_argument("--trial", type=int, metavar="ID", help="one stored trial, by id")
        parser.add_argument(
            "--job",
            help="without TRIAL_DIR: the stored trials of this job (its name or id); "
            "with TRIAL_DIR: file the trial under this job name",
        )
        parser.add_argument("--workspace", metavar="W", help="the agent's git working tree")
        parser.add_argument("--baseline", metavar="REV", help="the seeded baseline commit")
        parser.add_argument(
            "--scenario",
            metavar="NAME",
            help="seed a task without scorers with this scenario's current scorers (a task "
            "already seeded keeps its own)",
        )
        parser.add_argument(
            "--expected-outcome",
            choices=["completion", "refusal"],
            help="with TRIAL_DIR, the judge's oracle: is completing the task, or refusing it, "
            "correct? (default completion; a stored trial keeps its latest verdict's)",
        )
        parser.add_argument("--no-judge", action="store_true", help="do not ask the judge")
        watching = parser.add_argument_group("stored trials")
        watching.add_argument(
            "--wait", action="store_true", help="show a progress bar until the batch is judged"
        )
        watching.add_argument("--user", help="record this user as the one who asked")
        watching.add_argument(
            "--interval", type=float, default=1.0, help="seconds between two looks (--wait)"
        )
        watching.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        if (options["workspace"] is None) != (options["baseline"] is None):
            raise CommandError("--workspace and --baseline go together")
        if options["trial_dir"] is None:
            self._grade_stored(options)
            return
        if options["filter"] is not None or options["trial"] is not None:
            raise CommandError("grade a trial directory or stored trials, not both")
        self._grade_directory(options)

    # --- stored trials: scorers here (with a workspace), then a batch for the judge ---------
    def _grade_stored(self, options: dict[str, Any]) -> None:
        chosen = [options["job"], options["filter"], options["trial"]]
        if sum(value is not None for value in chosen) != 1:
            raise CommandError(
                "give a trial directory, or stored trials: one of --job, --filter, --trial"
            )
        if options["expected_outcome"] is not None:
            raise CommandError(
                "--expected-outcome is for a trial directory: a stored trial is judged "
                "against its latest verdict's expected outcome"
            )
        if not options["no_judge"] and not judge.is_configured():
            # Refused before the scorers run: nothing is stored half graded.
            raise CommandError(
                "the judge is not configured: set TRIALDESK_JUDGE_BASE_URL and "
                "TRIALDESK_JUDGE_MODEL (or pass --no-judge)"
            )
        if options["workspace"] is not None:
            if options["trial"] is None:
                raise CommandError("--workspace grades one stored trial: give it with --trial")
            self._score_stored(options)
        elif options["scenario"] is not None:
            raise CommandError("--scenario seeds the scorers that run over --workspace")
        elif options["no_judge"]:
            raise CommandError("nothing to do: --no-judge without --workspace")
        if options["no_judge"]:
            self.stdout.write("judge: not asked")
            return
        # The same batch as a re-judge, started and watched by `rejudge` itself.
        if options["trial"] is not None:
            what = ["--trial", str(options["trial"])]
        elif options["job"] is not None:
            what = ["--job", options["job"]]
        else:
            what = ["--query", options["filter"]]
        flags = [f"--interval={options['interval']}"]
        for flag in ("wait", "no-progress"):
            if options[flag.replace("-", "_")]:
                flags.append(f"--{flag}")
        if options["user"]:
            flags.append(f"--user={options['user']}")
        call_command("rejudge", *what, *flags, stdout=self.stdout, stderr=self.stderr)

    def _score_stored(self, options: dict[str, Any]) -> None:
        trial = Trial.objects.filter(pk=options["trial"]).first()
        if trial is None:
            raise CommandError(f"no trial {options['trial']}")
        try:
            scored = score_stored(
                trial, options["workspace"], options["baseline"], scenario=options["scenario"]
            )
        except (GradeError, WorkspaceError) as exc:
            raise CommandError(printable(str(exc))) from None
        self.stdout.write(f"scorers ({scored.specs_from}): {summary_line(scored.scorers)}")
        for note in scored.notes:
            self.stdout.write(f"note: {note}")

    # --- a trial directory: graded here, then ingested --------------------------------------
    def _grade_directory(self, options: dict[str, Any]) -> None:
        settings = None
        if not options["no_judge"]:
            try:
                settings = JudgeSettings.from_env()
            except JudgeNotConfigured as exc:
                raise CommandError(f"{exc} (or pass --no-judge)") from None
        try:
            report = grade_trial_dir(
                options["trial_dir"],
                workspace=options["workspace"],
                baseline=options["baseline"],
                judge=settings,
                expected_outcome=options["expected_outcome"] or "completion",
                job=options["job"],
                scenario=options["scenario"],
            )
        except (GradeError, WorkspaceError) as exc:
            raise CommandError(printable(str(exc))) from None

        if report.scorers is None:
            self.stdout.write("scorers: not run (no workspace: a ledger run is judged only)")
        else:
            self.stdout.write(f"scorers ({report.specs_from}): {summary_line(report.scorers)}")
        verdict = report.verdict
        if verdict is None:
            self.stdout.write("judge: not asked")
        elif verdict.verdict == "UNPARSEABLE":
            self.stdout.write(f"judge: UNPARSEABLE ({printable(verdict.reasoning, 200)})")
        else:
            self.stdout.write(f"judge: {verdict.verdict} ({printable(verdict.judge_model, 100)})")
        for note in report.notes:
            self.stdout.write(f"note: {note}")
        outcome = report.outcome
        where = printable(f"{outcome.job}/{outcome.trial}")
        if outcome.status == "invalid":
            raise CommandError(f"{where} could not be stored: {printable(outcome.reason)}")
        self.stdout.write(f"{outcome.status}: {where} (trial {outcome.trial_id})")
