from django.apps import AppConfig


class RewardsConfig(AppConfig):
    name = "rewards"
    verbose_name = "Automated results"

    def ready(self) -> None:
        # Connects the receivers that drop the cached newest jobs when a job changes.
        from rewards import cache  # noqa: F401
