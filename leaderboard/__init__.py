"""The leaderboard service: challenges with hidden test sets, scored honestly."""

from leaderboard.config.celery import app as celery_app

__all__ = ["celery_app"]
