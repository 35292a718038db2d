from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from review import api
from review.views import login_link
from rewards import views as rewards_views

urlpatterns = [
    path("healthz", rewards_views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", api.urls()),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/link/<str:token>/", login_link.login_link, name="login-link"),
    path("", include("review.urls")),
]
