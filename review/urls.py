from django.urls import path

from review import views
from review.views import (
    adjudication,
    agreement,
    blind,
    compare,
    integrity,
    judging,
    queue,
    saved_views,
    scenarios,
    tokens,
)
from review.views.exports import export

app_name = "review"

urlpatterns = [
    path("", views.explorer, name="explorer"),
    path("trials/<int:pk>/", views.trial_detail, name="trial-detail"),
    path("trials/<int:pk>/scorers/<int:position>/", views.scorer_row, name="scorer-row"),
    path("trials/<int:pk>/files/", views.trial_file, name="trial-file"),
    path("trials/<int:pk>/annotations/", views.annotate, name="annotate"),
    path("trials/<int:pk>/rejudge/", judging.rejudge_one, name="rejudge"),
    path(
        "trials/<int:pk>/findings/<int:finding_pk>/review/",
        integrity.review_finding,
        name="review-finding",
    ),
    path("jobs/<int:pk>/integrity-scan/", integrity.scan_job_findings, name="integrity-scan"),
    path("rejudge/", judging.rejudge_filter, name="rejudge-filter"),
    path("batches/", judging.batch_list, name="batch-list"),
    path("batches/<int:pk>/", judging.batch_detail, name="batch-detail"),
    path("batches/<int:pk>/cancel/", judging.batch_cancel, name="batch-cancel"),
    path("export.csv", export, {"fmt": "csv"}, name="export-csv"),
    path("export.jsonl", export, {"fmt": "jsonl"}, name="export-jsonl"),
    path("export.parquet", export, {"fmt": "parquet"}, name="export-parquet"),
    path("export/annotations.csv", export, {"fmt": "annotations"}, name="export-annotations"),
    path("queue/", queue.queue, name="queue"),
    path("queue/claim/", queue.queue_claim, name="queue-claim"),
    path("queue/skip/", queue.queue_skip, name="queue-skip"),
    path("queue/skipped/clear/", queue.queue_unskip, name="queue-unskip"),
    path("views/", saved_views.saved_view_list, name="saved-views"),
    path("views/new/", saved_views.saved_view_create, name="saved-view-create"),
    path("views/<int:pk>/delete/", saved_views.saved_view_delete, name="saved-view-delete"),
    path("jobs/", views.job_list, name="job-list"),
    path("jobs/<int:pk>/", views.job_detail, name="job-detail"),
    path("scenarios/", scenarios.scenario_list, name="scenario-list"),
    path("scenarios/new/", scenarios.scenario_create, name="scenario-create"),
    path("scenarios/<int:pk>/", scenarios.scenario_detail, name="scenario-detail"),
    path("scenarios/<int:pk>/versions/", scenarios.scenario_save, name="scenario-save"),
    path("agreement/", agreement.agreement_page, name="agreement"),
    path("agreement.csv", agreement.agreement_csv, name="agreement-csv"),
    path("adjudication/", adjudication.adjudication_queue, name="adjudication-queue"),
    path("trials/<int:pk>/adjudicate/", adjudication.adjudicate, name="adjudicate"),
    path("trials/<int:pk>/blind/", blind.blind_review, name="blind-review"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke, name="token-revoke"),
    path("compare/", compare.compare_runs, name="compare"),
    path("compare.csv", compare.compare_csv, name="compare-csv"),
    path("compare/trials/<int:a>/<int:b>/", compare.compare_trials, name="compare-trials"),
]
