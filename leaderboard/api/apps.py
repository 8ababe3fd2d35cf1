from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "leaderboard.api"
    label = "api"
