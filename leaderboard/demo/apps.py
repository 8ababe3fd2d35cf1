from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo challenges: a consumer of the services at the top of the app graph (its command,
    ``manage.py demo_load``, lives here rather than in ``core``, which every app imports)."""

    name = "leaderboard.demo"
    label = "demo"
    verbose_name = "Demo"
