"""Django settings: the one place that reads the environment.

With nothing set, the *embedded default* runs everything on one machine with no servers: SQLite under
``var/`` and Celery tasks executed in-process. With ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` set,
the same code runs on PostgreSQL, Redis and separate ``celery worker`` processes.

Every variable is documented once, in README.md ("Configuration").
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

ENVIRONMENT = env.str("LEADERBOARD_ENV", default="development")
if ENVIRONMENT not in {"development", "production"}:
    raise ImproperlyConfigured(f"LEADERBOARD_ENV must be 'development' or 'production', not {ENVIRONMENT!r}.")
PRODUCTION = ENVIRONMENT == "production"


def _required_in_production(name: str, development_default: str) -> str:
    """Production-only values have no default: the service refuses to start without them."""
    value = env.str(name, default="")
    if value:
        return value
    if PRODUCTION:
        raise ImproperlyConfigured(
            f"{name} must be set when LEADERBOARD_ENV=production (see README.md, 'Configuration')."
        )
    return development_default


SECRET_KEY = _required_in_production(
    "DJANGO_SECRET_KEY", "development-only-insecure-key-never-use-in-production"
)
# Debug pages print local variables, which may hold hidden labels: off unless asked for explicitly.
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = _required_in_production("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver,[::1]").split(
    ","
)
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])


def _separate_test_processes(worker: str) -> None:
    """Under pytest-xdist (``make test`` spreads the suite over processes ``gw0``, ``gw1``, ...) each test
    process is a deployment of its own: its own data directory (``<LEADERBOARD_DATA_DIR or var>/xdist-gwN``)
    and its own Redis database (``REDIS_URL``'s database + 1 + N), so the throttle counters, the shared
    board state, the Celery queues and kombu's unacknowledged messages of one never meet another's. The
    values are written back to the environment, marked done, so the Celery workers a test starts (which
    inherit it) use the same ones and do not move again."""
    base = os.environ.get("LEADERBOARD_DATA_DIR") or str(BASE_DIR / "var")
    os.environ["LEADERBOARD_DATA_DIR"] = str(Path(base) / f"xdist-{worker}")
    url = os.environ.get("REDIS_URL", "")
    if url:
        parts = urlsplit(url)
        db = int(parts.path.strip("/") or 0) + 1 + int(worker.removeprefix("gw"))
        os.environ["REDIS_URL"] = parts._replace(path=f"/{db}").geturl()
    os.environ["LEADERBOARD_TEST_PROCESS"] = worker


_TEST_PROCESS = os.environ.get("PYTEST_XDIST_WORKER", "")
if _TEST_PROCESS and os.environ.get("LEADERBOARD_TEST_PROCESS") != _TEST_PROCESS:
    _separate_test_processes(_TEST_PROCESS)

# This host's own files (the embedded default's SQLite database, cached resample weights, static files),
# outside any web root. Nothing a worker reads lives here: uploads are database rows (STORAGES below).
DATA_DIR = Path(env.str("LEADERBOARD_DATA_DIR", default=str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "leaderboard.core",
    "leaderboard.accounts",
    "leaderboard.challenges",
    "leaderboard.submissions",
    "leaderboard.scoring",
    "leaderboard.rankings",
    "leaderboard.notifications",
    "leaderboard.api",
    "leaderboard.web",
    "leaderboard.demo",
]
AUTH_USER_MODEL = "accounts.User"

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # every anonymous read that renders is throttled (issue 21, item 10)
    "leaderboard.core.middleware.AnonymousReadThrottleMiddleware",
]

ROOT_URLCONF = "leaderboard.config.urls"
WSGI_APPLICATION = "leaderboard.config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "leaderboard.notifications.context_processors.notices",
            ],
        },
    },
]

# Database: SQLite in the embedded default, PostgreSQL (psycopg 3) with DATABASE_URL.
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'db.sqlite3'}"),
}
DATABASES["default"].setdefault("ATOMIC_REQUESTS", False)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (web, in-process tasks) share one file: wait for locks instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("timeout", 30)
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Where uploaded prediction files live (hidden labels are rows of challenges.TaskTruth). Never served by URL.
#   database (default): rows of the database (leaderboard/core/storage.py), so a Celery worker on any host
#       that reaches the database reads them, and an upload commits with its submission row;
#   s3: an S3-compatible bucket through django-storages (pip install 'honest-leaderboard[s3]');
#   filesystem: files under DATA_DIR/uploads, readable only on this host (one machine only; see
#       docs/deploy.md, "Several hosts", and `manage.py check --deploy`).
STORAGE = env.str("LEADERBOARD_STORAGE", default="database")
#: Files written under DATA_DIR/uploads before uploads moved to the database (read by the data migration
#: submissions.0005_storage_blobs, which copies them into the configured storage).
MEDIA_ROOT = DATA_DIR / "uploads"


def _uploads_storage(kind: str) -> dict[str, object]:
    if kind == "database":
        return {"BACKEND": "leaderboard.core.storage.DatabaseStorage"}
    if kind == "filesystem":
        return {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(MEDIA_ROOT), "base_url": None},
        }
    if kind == "s3":
        import importlib.util

        if importlib.util.find_spec("storages") is None or importlib.util.find_spec("boto3") is None:
            raise ImproperlyConfigured(
                "LEADERBOARD_STORAGE=s3 needs django-storages and boto3: pip install 'honest-leaderboard[s3]'."
            )
        bucket = env.str("AWS_STORAGE_BUCKET_NAME", default="")
        if not bucket:
            raise ImproperlyConfigured("LEADERBOARD_STORAGE=s3 needs AWS_STORAGE_BUCKET_NAME.")
        options: dict[str, object] = {
            "bucket_name": bucket,
            "location": env.str("AWS_LOCATION", default="uploads"),
            # Private objects, never overwritten (a name taken gets a suffix), never given a public URL.
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": False,
        }
        # Unset values fall back to boto3's own chain (instance role, ~/.aws, AWS_* in the environment).
        for option, variable in (
            ("endpoint_url", "AWS_S3_ENDPOINT_URL"),  # MinIO, Ceph, R2, ...: the service's URL
            ("region_name", "AWS_S3_REGION_NAME"),
            ("access_key", "AWS_ACCESS_KEY_ID"),
            ("secret_key", "AWS_SECRET_ACCESS_KEY"),
        ):
            value = env.str(variable, default="")
            if value:
                options[option] = value
        return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}
    raise ImproperlyConfigured(f"LEADERBOARD_STORAGE must be 'database', 's3' or 'filesystem', not {kind!r}.")


STORAGES = {
    "default": _uploads_storage(STORAGE),
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
#: Set to 1 when Celery workers (or several web servers) run on other hosts than this one:
#: `manage.py check --deploy` then refuses settings that keep anything a worker reads on one host.
MULTI_HOST = env.bool("LEADERBOARD_MULTI_HOST", default=False)
WHITENOISE_USE_FINDERS = not PRODUCTION

# Upload limits: files above this size are refused before they are read whole.
UPLOAD_MAX_BYTES = env.int("LEADERBOARD_UPLOAD_MAX_BYTES", default=50 * 1024 * 1024)
# Detection results (a COCO-val-sized file is ~50 MB of JSON) and segmentation archives of label maps.
# The rule per task kind is ``TaskKind.upload_max_bytes`` (``leaderboard/scoring/kinds/``).
VISION_UPLOAD_MAX_BYTES = env.int("LEADERBOARD_VISION_UPLOAD_MAX_BYTES", default=256 * 1024 * 1024)
#: The most items a task's labels file may list (a Parquet file is refused from its metadata, a CSV file while
#: it is read), so checking an upload stays in bounded memory (docs/benchmarks.md, "Reading files").
TASK_MAX_ITEMS = env.int("LEADERBOARD_TASK_MAX_ITEMS", default=1_000_000)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Cached resample-weight matrices (uint8 .npy files), rebuilt bit-identically when absent.
RESAMPLE_CACHE_DIR = Path(env.str("LEADERBOARD_RESAMPLE_CACHE", default=str(DATA_DIR / "resamples")))

# --- Celery ---------------------------------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL  # the embedded default: tasks run in-process
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"  # a host named, so kombu does not warn "No hostname"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True  # a task is acknowledged after it ran, so a dead worker's task comes back
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # a worker holds one task at a time: nothing waits behind a long one
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=600)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=660)
CELERY_TASK_DEFAULT_QUEUE = env.str("LEADERBOARD_QUEUE", default="leaderboard")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # A task not acknowledged within this time is redelivered (must exceed the hard time limit).
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + 300,
    # The web process must not hang when Redis is down: fail fast, the outbox sweeper sends later.
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
    "socket_connect_timeout": 2,
    # A hung Redis (accepting connections, never answering) held each upload for this long in publish;
    # measured with a SIGSTOPped Redis in tests/reliability/test_broker_down.py (docs/reliability.md).
    "socket_timeout": 2,
}
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# The sweepers' period; a running submission's lease (renewed by its worker every third of it); a board
# left behind by its scores for this long is rebuilt again; the first retry of a failed rebuild waits this
# long (then twice, four times as long). Short values in the fault tests (docs/reliability.md).
SWEEP_SECONDS = env.float("LEADERBOARD_SWEEP_SECONDS", default=10.0)
LEASE_SECONDS = env.float("LEADERBOARD_LEASE_SECONDS", default=60.0)
# Fan-out of a large scoring over workers by fixed resample chunks (leaderboard.scoring.fanout,
# docs/architecture.md): a tabular task fans out when items x resamples x runs reaches FANOUT_MIN_COST, a
# detection task when its resamples reach FANOUT_DETECTION_MIN_RESAMPLES (a COCO-val entry takes about
# 0.1 s per resample in one worker, so B = 10,000 would pass the 600 s limit). A chunk task computes
# FANOUT_CHUNKS chunks of 256 resamples; one started FANOUT_MAX_ATTEMPTS times (or re-sent that often)
# without finishing fails the submission, uncharged. A prepared state above FANOUT_STATE_MAX_BYTES is
# scored in one worker instead (it is a database row).
FANOUT_MIN_COST = env.int("LEADERBOARD_FANOUT_MIN_COST", default=2_000_000_000)
FANOUT_DETECTION_MIN_RESAMPLES = env.int("LEADERBOARD_FANOUT_DETECTION_MIN_RESAMPLES", default=2000)
FANOUT_CHUNKS = env.int("LEADERBOARD_FANOUT_CHUNKS", default=4)
FANOUT_MAX_ATTEMPTS = env.int("LEADERBOARD_FANOUT_MAX_ATTEMPTS", default=5)
FANOUT_STATE_MAX_BYTES = env.int("LEADERBOARD_FANOUT_STATE_MAX_BYTES", default=512 * 1024 * 1024)
# The embedded default runs tasks in-process: nothing to spread the chunks over, so no fan-out there
# unless asked (the in-process tests ask).
FANOUT_IN_PROCESS = env.bool("LEADERBOARD_FANOUT_IN_PROCESS", default=False)
# The incremental board (leaderboard.rankings.board_cache): each worker process keeps the last boards it
# built (at most BOARD_CACHE_BOARDS; about 110 MB each at K = 1,000, B = 10,000; 0 turns it off), so a
# rebuild that adds one entry to its previous board reuses that board's work (the same numbers).
BOARD_CACHE_BOARDS = env.int("LEADERBOARD_BOARD_CACHE_BOARDS", default=4)
# ... and shares its state (leaderboard.rankings.board_state: Redis with REDIS_URL, else DATA_DIR), so the
# next rebuild of the board on any worker process or host takes the update path; records larger than
# BOARD_STATE_MAX_BYTES are not shared (25 MB at K = 1,000 and 204 MB at K = 5,000, B = 10,000, measured:
# about 2 B K + 4 K^2 bytes, so the default 256 MiB is passed near K = 6,000).
BOARD_STATE_SHARED = env.bool("LEADERBOARD_BOARD_STATE_SHARED", default=True)
# ... and keeps the scores' binary columns it read for the last rebuild of each of those boards, so the next
# rebuild reads only the new entry's from the database (240 KB per entry at N = B = 10,000): at most this
# many bytes per process, least recently used board first out; a board larger than it is not kept (0: off).
BOARD_SCORE_DATA_MAX_BYTES = env.int("LEADERBOARD_BOARD_SCORE_DATA_MAX_BYTES", default=2 * 1024 * 1024 * 1024)
BOARD_STATE_MAX_BYTES = env.int("LEADERBOARD_BOARD_STATE_MAX_BYTES", default=256 * 1024 * 1024)
BOARD_STATE_SECONDS = env.int("LEADERBOARD_BOARD_STATE_SECONDS", default=7 * 24 * 3600)
# A re-score sends one Celery task per block of this many submissions (leaderboard.scoring.rescore).
RESCORE_BLOCK = env.int("LEADERBOARD_RESCORE_BLOCK", default=16)
REBUILD_STALE_SECONDS = env.float("LEADERBOARD_REBUILD_STALE_SECONDS", default=60.0)
REBUILD_RETRY_SECONDS = env.float("LEADERBOARD_REBUILD_RETRY_SECONDS", default=5.0)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "heartbeat": {"task": "leaderboard.core.tasks.worker_heartbeat", "schedule": 60.0},
    # The sweepers: re-send submissions whose worker's lease expired or whose message never reached (or
    # was lost by) the broker, and rebuilds of boards left behind. A sweep waiting in a busy queue past
    # the next one is dropped (expires), so sweeps never pile up.
    "sweep-stuck-submissions": {
        "task": "leaderboard.scoring.tasks.sweep_stuck_submissions",
        "schedule": SWEEP_SECONDS,
        "options": {"expires": SWEEP_SECONDS},
    },
    "sweep-stale-boards": {
        "task": "leaderboard.rankings.tasks.sweep_stale_boards",
        "schedule": SWEEP_SECONDS,
        "options": {"expires": SWEEP_SECONDS},
    },
}

# --- Django REST Framework ----------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "leaderboard.accounts.auth_cache.CachedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "leaderboard.api.exception_handlers.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    # Throttles key on the client address. 0 trusts no X-Forwarded-For (a client could forge it); behind
    # one TLS proxy that sets the header, set LEADERBOARD_NUM_PROXIES=1.
    "NUM_PROXIES": env.int("LEADERBOARD_NUM_PROXIES", default=0),
    "DEFAULT_THROTTLE_RATES": {
        "token": env.str("LEADERBOARD_THROTTLE_TOKEN", default="20/min"),
        "submit": env.str("LEADERBOARD_THROTTLE_SUBMIT", default="60/min"),
        "login": env.str("LEADERBOARD_THROTTLE_LOGIN", default="20/min"),
        # New accounts per client address and over the whole service (docs/reliability.md, "Label extraction").
        "signup": env.str("LEADERBOARD_THROTTLE_SIGNUP", default="5/hour"),
        "signup_global": env.str("LEADERBOARD_THROTTLE_SIGNUP_GLOBAL", default="60/hour"),
        "anon_read": env.str("LEADERBOARD_THROTTLE_ANON_READ", default="60/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Honest Leaderboard API",
    "DESCRIPTION": "Challenges with hidden test sets, scored with confidence intervals and paired tests.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # no deep links: Swagger UI draws each operation's path as a link inside the button that opens it
    # (axe nested-interactive, walk N5)
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "REDOC_DIST": "SIDECAR",
    # request bodies get their own components, so a file field is ``format: binary`` (a file part of the
    # multipart body) rather than the URL an answer carries (issue 21, item 11)
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "leaderboard.api.schema.add_error_responses",
    ],
}

# --- Cache (throttling counters) ------------------------------------------------------------------
CACHES = {
    "default": (
        {
            # Django's Redis backend, one client object per pool (leaderboard/core/redis_cache.py)
            "BACKEND": "leaderboard.core.redis_cache.SharedClientRedisCache",
            "LOCATION": REDIS_URL,
            # Fail fast when Redis hangs: the throttle's counter read then lets an upload through (see
            # leaderboard/core/throttles.py) after 1 s instead of 5 s (docs/reliability.md, "Faults").
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    ),
    # Drawn boards (the page's board block, the API's JSON), keyed by snapshot: snapshots never change, so
    # each web process keeps its own copy. No network round trip for ~1.5 MB per read, and board reads
    # keep working when Redis is down (docs/reliability.md, "Load").
    "boards": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "boards",
        "TIMEOUT": 3600,
        "OPTIONS": {"MAX_ENTRIES": 32},
    },
    # Whole answers of anonymous board reads, per challenge reads version (leaderboard/rankings/read_cache.py);
    # apart from "boards", so answers never push drawn boards out.
    "answers": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "answers",
        "TIMEOUT": 60,
        "OPTIONS": {"MAX_ENTRIES": 256},
    },
}

# --- Security ------------------------------------------------------------------------------------
# Sessions, the signed-in user and API tokens read from the shared cache when there is one (Redis), from the
# database otherwise; logout, password change and token revocation drop the cached copies at once
# (leaderboard/accounts/auth_cache.py; docs/reliability.md, "Signed-in reads").
SESSION_ENGINE = "leaderboard.accounts.auth_cache"
AUTHENTICATION_BACKENDS = ["leaderboard.accounts.auth_cache.CachedModelBackend"]
LEADERBOARD_AUTH_CACHE = env.bool("LEADERBOARD_AUTH_CACHE", default=bool(REDIS_URL))
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the site's small scripts read it for fetch() POSTs
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# --- Logging: to stderr, one line per event. Hidden labels are never logged (docs/reliability.md,
# "Hidden labels never leave the server").
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LEADERBOARD_LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# --- Email (password reset links, notices) -------------------------------------------------------------
# The console by default: a local run prints the message instead of sending it. Production sets an SMTP
# backend (EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend, EMAIL_HOST, EMAIL_PORT, ...).
# Notices (a submission scored or failed, a board revealed; leaderboard.notifications) link to the site at
# LEADERBOARD_SITE_URL, the address participants reach it by.
LEADERBOARD_SITE_URL = env.str("LEADERBOARD_SITE_URL", default="http://127.0.0.1:8000")
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Honest Leaderboard <noreply@localhost>")
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)
