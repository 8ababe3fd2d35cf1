"""gunicorn settings for the web process (docker-compose.yml and the load test use them)."""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_class = "gthread"
timeout = 60
graceful_timeout = 30
keepalive = 5
accesslog = "-"
errorlog = "-"
# Request lines only (no bodies): uploads and their content never reach the log.
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(L)ss'
