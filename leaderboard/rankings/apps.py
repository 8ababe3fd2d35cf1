from django.apps import AppConfig


class RankingsConfig(AppConfig):
    name = "leaderboard.rankings"
    label = "rankings"
