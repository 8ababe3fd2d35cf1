from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "leaderboard.challenges"
    label = "challenges"
