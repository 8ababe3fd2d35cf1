from django.contrib import admin
from django.urls import include, path

from leaderboard.core.views import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("leaderboard.api.urls")),
    path("", include("leaderboard.web.urls")),
]

# A database outage answers 503 with Retry-After, in the API's JSON shape under /api/ (core/views.py).
handler500 = "leaderboard.core.views.server_error"
