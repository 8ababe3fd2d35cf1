"""Account pages: sign up, and the API token for the command-line client (log in/out are Django's views)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial, wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.accounts.services import api_token_get_or_create, api_token_regenerate
from leaderboard.core.throttles import SignupAddressThrottle, SignupGlobalThrottle
from leaderboard.notifications.services import preference_of
from leaderboard.web.forms import SignupForm

TOO_MANY_ATTEMPTS = "Too many attempts from your address; try again in {wait} seconds."


class _FormThrottle(SimpleRateThrottle):
    """The API's ``login`` rate (``LEADERBOARD_THROTTLE_LOGIN``), per client address, for the site's forms."""

    scope = "login"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": "web-login", "ident": self.get_ident(request)}


def throttled_posts(
    view: Callable[..., HttpResponseBase], *, extra: tuple[type[SimpleRateThrottle], ...] = ()
) -> Callable[..., HttpResponseBase]:
    """Log-in and sign-up forms (the site's and the admin's): POSTs over the rate answer 429 with
    ``Retry-After`` (no password guessing through the site while the API's token endpoint is throttled).
    Reading the form is never throttled. ``extra`` throttles apply too (sign-up's own rates)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method == "POST":
            for throttle in (_FormThrottle(), *(cls() for cls in extra)):
                if not throttle.allow_request(request, None):  # type: ignore[arg-type]
                    wait = max(1, math.ceil(throttle.wait() or 1))
                    response = HttpResponse(
                        TOO_MANY_ATTEMPTS.format(wait=wait),
                        status=429,
                        content_type="text/plain; charset=utf-8",
                    )
                    response["Retry-After"] = str(wait)
                    return response
        return view(request, *args, **kwargs)

    return wrapper


login_view = throttled_posts(auth_views.LoginView.as_view())


@partial(throttled_posts, extra=(SignupAddressThrottle, SignupGlobalThrottle))
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("account")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend=settings.AUTHENTICATION_BACKENDS[0])
        messages.success(request, f"Welcome, {user.get_username()}. You are logged in.")
        return redirect(request.GET.get("next") or "home") if _safe(request) else redirect("home")
    return render(request, "registration/signup.html", {"form": form}, status=400 if form.errors else 200)


def _safe(request: HttpRequest) -> bool:
    from django.utils.http import url_has_allowed_host_and_scheme

    target = request.GET.get("next") or ""
    return not target or url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})


@login_required
def account(request: HttpRequest) -> HttpResponse:
    token = api_token_get_or_create(user=request.user)  # type: ignore[arg-type]
    return render(
        request,
        "web/account.html",
        {
            "token": token.key,
            "host": request.build_absolute_uri("/").rstrip("/"),
            "notice_preference": preference_of(request.user),  # type: ignore[arg-type]
        },
    )


@login_required
@require_POST
def token_regenerate(request: HttpRequest) -> HttpResponse:
    api_token_regenerate(user=request.user)  # type: ignore[arg-type]
    messages.success(request, "A new API token was made; the old one no longer works.")
    return redirect("account")


# --- password reset: Django's views with the site's templates (email through EMAIL_BACKEND) ---------------
def _reset_timeout_days() -> int:
    from django.conf import settings

    return max(1, settings.PASSWORD_RESET_TIMEOUT // 86400)


# Asking for a reset link sends an email: throttled like log-in, per client address.
password_reset = throttled_posts(
    auth_views.PasswordResetView.as_view(
        template_name="web/account/password_reset_form.html",
        email_template_name="web/account/password_reset_email.txt",
        subject_template_name="web/account/password_reset_subject.txt",
        extra_context={"timeout_days": _reset_timeout_days},
        extra_email_context={"timeout_days": _reset_timeout_days},
    )
)
password_reset_done = auth_views.PasswordResetDoneView.as_view(
    template_name="web/account/password_reset_done.html"
)
password_reset_confirm = throttled_posts(
    auth_views.PasswordResetConfirmView.as_view(template_name="web/account/password_reset_confirm.html")
)
password_reset_complete = auth_views.PasswordResetCompleteView.as_view(
    template_name="web/account/password_reset_complete.html"
)
