from review.views.explorer import explorer
from review.views.jobs import job_detail, job_list
from review.views.trial import (
    annotate,
    scorer_row,
    step_comment,
    trial_detail,
    trial_file,
    trial_steps,
)

__all__ = [
    "annotate",
    "explorer",
    "job_detail",
    "job_list",
    "scorer_row",
    "step_comment",
    "trial_detail",
    "trial_file",
    "trial_steps",
]
