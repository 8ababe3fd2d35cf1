from django.apps import AppConfig


class RankingsConfig(AppConfig):
    name = "leaderboard.rankings"
    label = "rankings"

    def ready(self) -> None:
        from leaderboard.challenges import ports
        from leaderboard.rankings import signals  # noqa: F401  (connects the reads-version receivers)
        from leaderboard.rankings.services import boards_rebuild_dispatch

        # Scored, selected and re-scored entries rebuild their boards (leaderboard.core.ports: scoring and
        # submissions sit below rankings and cannot import it).
        ports.boards_rebuild.register(boards_rebuild_dispatch)
