from django.apps import AppConfig


class RankingsConfig(AppConfig):
    name = "leaderboard.rankings"
    label = "rankings"

    def ready(self) -> None:
        from leaderboard.rankings import signals  # noqa: F401  (connects the reads-version receivers)
