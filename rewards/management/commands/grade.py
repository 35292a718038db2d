"""`manage.py grade TRIAL_DIR [--workspace W --baseline REV]`: score, judge, ingest.

Seed 003, "How a coding run is graded": the task's frozen scorers run against the workspace,
the judge scores the run with the scorer results as evidence, and the results land on the
trial. Without `--workspace` the trial is a ledger run: judged only. The judge is configured
by environment (`rewards.scoring.judge`); `--no-judge` skips it. A judge failure is stored as
an UNPARSEABLE verdict and never fails the command.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from rewards.management.commands.ingest import printable
from rewards.management.commands.score import summary_line
from rewards.scoring.grading import GradeError, grade_trial_dir
from rewards.scoring.judge import JudgeNotConfigured, JudgeSettings
from rewards.scoring.workspace import WorkspaceError


class Command(BaseCommand):
    help = "Grade a trial directory: run its task's frozen scorers, ask the judge, ingest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("trial_dir", metavar="TRIAL_DIR")
        parser.add_argument("--workspace", metavar="W", help="the agent's git working tree")
        parser.add_argument("--baseline", metavar="REV", help="the seeded baseline commit")
        parser.add_argument("--job", help="file the trial under this job name")
        parser.add_argument(
            "--scenario",
            metavar="NAME",
            help="seed a new task with this scenario's current scorers (a task already "
            "seeded keeps its own)",
        )
        parser.add_argument(
            "--expected-outcome",
            choices=["completion", "refusal"],
            default="completion",
            help="the judge's oracle: is completing the task, or refusing it, correct?",
        )
        parser.add_argument("--no-judge", action="store_true", help="do not ask the judge")

    def handle(self, *args: Any, **options: Any) -> None:
        judge = None
        if not options["no_judge"]:
            try:
                judge = JudgeSettings.from_env()
            except JudgeNotConfigured as exc:
                raise CommandError(f"{exc} (or pass --no-judge)") from None
        try:
            report = grade_trial_dir(
                options["trial_dir"],
                workspace=options["workspace"],
                baseline=options["baseline"],
                judge=judge,
                expected_outcome=options["expected_outcome"],
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
