from django.contrib import admin
from django.urls import include, path

from leaderboard.core.views import favicon, healthz
from leaderboard.web.views.account import throttled_posts

# The admin's log-in form counts against the same per-address rate as the site's (429 with Retry-After).
admin.site.login = throttled_posts(admin.site.login)  # type: ignore[method-assign,assignment]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico whatever the page says; answer with the site's icon, not a 404.
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("api/", include("leaderboard.api.urls")),
    path("", include("leaderboard.web.urls")),
]

# A database outage answers 503 with Retry-After, in the API's JSON shape under /api/ (core/views.py).
handler500 = "leaderboard.core.views.server_error"
