from django.contrib import admin
from django.urls import include, path

from leaderboard.core.views import favicon, healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico whatever the page says; answer with the site's icon, not a 404.
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("api/", include("leaderboard.api.urls")),
    path("", include("leaderboard.web.urls")),
]
