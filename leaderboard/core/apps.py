from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "leaderboard.core"
    label = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from leaderboard.core import checks  # noqa: F401  (registers the deploy checks)
