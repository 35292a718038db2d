from django.apps import AppConfig


class RewardsConfig(AppConfig):
    name = "rewards"
    verbose_name = "Automated results"

    def ready(self) -> None:
        # Connects the receivers that drop the cached newest jobs when a job changes, and
        # registers the deployment checks.
        from rewards import cache, checks  # noqa: F401
