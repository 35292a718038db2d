"""The explorer's free-text search (`q`): trial, task, agent and model names containing it.

On PostgreSQL each name column has a trigram index on `UPPER(col::text)` (rewards migration
0004), the expression Django writes for `icontains`, and the query is shaped so the planner
can combine them (a BitmapOr of index scans) when few trials match:
- the tasks whose name matches are looked up first, in a query of their own, so the trials'
  condition is `task_id IN (constants)`. An OR reaching across the join to the task table
  would force a scan of every trial, and a subquery in its place would hide from the planner
  how many trials it selects (it then walks the whole table newest first);
- the trial's own columns are plain `icontains` conditions.
When most trials match, the planner walks the newest first instead, which is as fast. SQLite
scans either way.
"""

from __future__ import annotations

from django.db.models import Q

from rewards.models import Task, TrialQuerySet

# More matching tasks than this and the term is too vague for a list of ids to help.
MAX_TASK_IDS = 1000


def search(queryset: TrialQuerySet, q: str) -> TrialQuerySet:
    matches = Q(name__icontains=q) | Q(agent_name__icontains=q) | Q(model_name__icontains=q)
    tasks = Task.objects.filter(name__icontains=q).order_by().values_list("id", flat=True)
    task_ids = list(tasks[: MAX_TASK_IDS + 1])
    if len(task_ids) > MAX_TASK_IDS:
        matches |= Q(task__in=Task.objects.filter(name__icontains=q))
    elif task_ids:
        matches |= Q(task_id__in=task_ids)
    return queryset.filter(matches)
