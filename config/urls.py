from django.contrib import admin
from django.urls import include, path

from rewards import views as rewards_views

urlpatterns = [
    path("healthz", rewards_views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("", include("review.urls")),
]
