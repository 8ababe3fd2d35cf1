from django.contrib import admin
from django.urls import include, path

from leaderboard.core.views import healthz
from leaderboard.web.views.account import throttled_posts

# The admin's log-in form counts against the same per-address rate as the site's (429 with Retry-After).
admin.site.login = throttled_posts(admin.site.login)  # type: ignore[method-assign,assignment]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("leaderboard.api.urls")),
    path("", include("leaderboard.web.urls")),
]
