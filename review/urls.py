from django.urls import path

from review import views

app_name = "review"

urlpatterns = [
    path("", views.explorer, name="explorer"),
    path("trials/<int:pk>/", views.trial_detail, name="trial-detail"),
    path("trials/<int:pk>/scorers/<int:position>/", views.scorer_row, name="scorer-row"),
    path("trials/<int:pk>/annotations/", views.annotate, name="annotate"),
    path("jobs/", views.job_list, name="job-list"),
    path("jobs/<int:pk>/", views.job_detail, name="job-detail"),
]
