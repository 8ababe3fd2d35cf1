"""The team page of a challenge: your team and its invite code; found a team or join one."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from leaderboard.challenges.selectors import user_is_organizer, user_team
from leaderboard.challenges.services import team_found, team_join
from leaderboard.core.exceptions import ApplicationError
from leaderboard.web.views.common import challenge_for


class FoundTeamForm(forms.Form):
    name = forms.CharField(max_length=100, label="Team name")


class JoinTeamForm(forms.Form):
    invite_code = forms.CharField(max_length=32, label="Invite code", help_text="Ask a member of the team.")


@login_required
def team(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    found_form = FoundTeamForm(
        request.POST if request.POST.get("action") == "found" else None, prefix="found"
    )
    join_form = JoinTeamForm(request.POST if request.POST.get("action") == "join" else None, prefix="join")
    status = 200
    if request.method == "POST":
        form = found_form if request.POST.get("action") == "found" else join_form
        if form.is_valid():
            try:
                if form is found_form:
                    joined = team_found(
                        challenge=challenge,
                        user=request.user,  # type: ignore[arg-type]
                        name=form.cleaned_data["name"],
                    )
                else:
                    joined = team_join(
                        challenge=challenge,
                        user=request.user,  # type: ignore[arg-type]
                        invite_code=form.cleaned_data["invite_code"],
                    )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, f"You are in the team {joined.name}.")
                return redirect("team", slug=challenge.slug)
        status = 400
    context = {
        "challenge": challenge,
        "team": user_team(challenge=challenge, user=request.user),
        "found_form": found_form,
        "join_form": join_form,
        "is_organizer": user_is_organizer(challenge=challenge, user=request.user),
    }
    return render(request, "web/team.html", context, status=status)
