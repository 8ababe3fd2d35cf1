import logging
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.views import defaults
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from leaderboard.core.health import run_checks
from leaderboard.core.middleware import anonymous_reads

logger = logging.getLogger(__name__)

#: The database is unreachable (down, restarting, out of connections): a temporary state, not a bug.
DATABASE_UNAVAILABLE = "The service's database is unreachable for a moment; please try again shortly."
#: Seconds a client should wait before retrying (a PostgreSQL restart takes a few seconds).
RETRY_AFTER_SECONDS = 10


@anonymous_reads("exempt")  # load balancers ask often, from one address
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and the broker answer, 503 (with which one failed) otherwise."""
    checks = run_checks()
    healthy = all(c.ok for c in checks)
    body = {
        "status": "ok" if healthy else "unavailable",
        "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in checks},
    }
    return JsonResponse(body, status=200 if healthy else 503)


@anonymous_reads("exempt")  # a redirect; browsers ask whatever a page links
@require_GET
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Browsers ask for /favicon.ico whatever a page links: answer with the site's icon, not a 404.

    Resolved per request (not when the URLs load), so the hashed name of the production static storage
    is looked up only once collectstatic has run.
    """
    return HttpResponseRedirect(static("web/favicon.svg"))


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: a database outage is a 503 with Retry-After (the API's JSON error shape, or a plain
    page for the site) wherever it surfaced (a view, a middleware, DRF); anything else stays Django's 500.

    Django calls this inside its ``except`` block, so ``sys.exc_info()`` is the uncaught exception. The
    page is drawn without the request's context (no session or user: they would need the database).
    """
    exc = sys.exc_info()[1]
    if not isinstance(exc, OperationalError | InterfaceError):
        return defaults.server_error(request)
    logger.warning(
        "database unreachable: %s %s answered 503 (%s)", request.method, request.path, type(exc).__name__
    )
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS), "Cache-Control": "no-store"}
    if request.path.startswith("/api/"):
        body = {"message": DATABASE_UNAVAILABLE, "extra": {"retry_after": RETRY_AFTER_SECONDS}}
        return JsonResponse(body, status=503, headers=headers)
    html = render_to_string(
        "core/503.html", {"message": DATABASE_UNAVAILABLE, "retry_after": RETRY_AFTER_SECONDS}
    )
    return HttpResponse(html, status=503, headers=headers)
