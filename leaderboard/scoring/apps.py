from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "leaderboard.scoring"
    label = "scoring"
