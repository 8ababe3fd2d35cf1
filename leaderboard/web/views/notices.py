"""The user's notices (a submission scored or failed, a board revealed) and their opt-outs."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from leaderboard.notifications.selectors import notices_for
from leaderboard.notifications.services import notices_mark_read, preference_set

PER_PAGE = 50


@login_required
@require_GET
def notices(request: HttpRequest) -> HttpResponse:
    page = Paginator(notices_for(user=request.user), PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "web/notices.html", {"page": page, "notices": list(page.object_list)})


@login_required
@require_POST
def notices_read(request: HttpRequest) -> HttpResponse:
    """Mark one notice (``id``) or every notice read."""
    raw = request.POST.get("id", "")
    ids = [int(raw)] if raw.isdigit() else None
    notices_mark_read(user=request.user, ids=ids)  # type: ignore[arg-type]
    return redirect("notices")


@login_required
@require_POST
def notice_preferences(request: HttpRequest) -> HttpResponse:
    email, site = request.POST.get("email") == "on", request.POST.get("site") == "on"
    preference_set(user=request.user, email=email, site=site)  # type: ignore[arg-type]
    said = ", ".join(n for n, on in (("by e-mail", email), ("on the site", site)) if on) or "none"
    messages.success(request, f"Notices saved: {said}.")
    return redirect("account")
