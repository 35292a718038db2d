from django.apps import AppConfig


class DemoConfig(AppConfig):
    """Demo data and demo users for `make run`: outside the domain, using its public paths."""

    name = "demo"
    default_auto_field = "django.db.models.BigAutoField"
