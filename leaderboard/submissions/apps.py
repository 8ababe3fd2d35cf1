from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "leaderboard.submissions"
    label = "submissions"
