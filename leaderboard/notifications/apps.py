from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "leaderboard.notifications"
    label = "notifications"

    def ready(self) -> None:
        from leaderboard.challenges import ports
        from leaderboard.notifications import services

        # Scoring (a submission scored or failed) and challenges (the reveal) sit below this app: they
        # tell it through a port (leaderboard.core.ports), once their transaction commits.
        ports.notices.register(services.NOTICES)
