"""Background work for re-judging, on Django's tasks framework (`django.tasks`).

One task per trial, so any number of workers can share a large re-judge and a failure stays
with its trial. The queue is the database (`TASKS`: django-tasks-db); `manage.py db_worker`
runs its tasks, as many workers as a deployment starts (DESIGN §8).
"""

from __future__ import annotations

from django.tasks import task

from rewards.models import Trial
from rewards.scoring.grading import rejudge
from rewards.scoring.judge import JudgeSettings


@task
def rejudge_trial(trial_id: int) -> str:
    """Ask the judge again about one trial; returns the new verdict ('' if the trial is gone)."""
    settings = JudgeSettings.from_env()
    trial = Trial.objects.select_related("task").filter(pk=trial_id).first()
    if trial is None:
        return ""
    return rejudge(trial, settings).verdict
