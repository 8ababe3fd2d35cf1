"""WSGI entry point (gunicorn leaderboard.config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")

application = get_wsgi_application()
