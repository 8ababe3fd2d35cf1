from django.http import HttpRequest, HttpResponseRedirect, JsonResponse
from django.templatetags.static import static
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from leaderboard.core.health import run_checks


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


@require_GET
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Browsers ask for /favicon.ico whatever a page links: answer with the site's icon, not a 404.

    Resolved per request (not when the URLs load), so the hashed name of the production static storage
    is looked up only once collectstatic has run.
    """
    return HttpResponseRedirect(static("web/favicon.svg"))
