from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "leaderboard.accounts"
    label = "accounts"

    def ready(self) -> None:
        from leaderboard.accounts import signals  # noqa: F401  (drops cached users and tokens)
