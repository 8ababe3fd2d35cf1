"""The Celery application.

The services send a task from ``transaction.on_commit(...)`` (e.g. ``submissions.services``,
``rankings.services``): a task is only sent once the transaction that created its rows has committed, so
no worker ever looks for a row that does not exist yet. Every reliability setting lives in Django
settings (``CELERY_*``).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")

app = Celery("leaderboard", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
