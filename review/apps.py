from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Human review"

    def ready(self) -> None:
        # Connects the receiver that stores a bundle's annotations when rewards writes it.
        # Connects the receivers that drop the cached job choices when a job changes.
        from review import (
            choices,  # noqa: F401
            receivers,  # noqa: F401
        )
