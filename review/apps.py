from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Human review"

    def ready(self) -> None:
        # Connects the receiver that stores a bundle's annotations when rewards writes it.
        from review import receivers  # noqa: F401
