"""Organizer pages: create and edit a challenge, add tasks with hidden labels, re-score, reveal."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Participant
from leaderboard.challenges.selectors import task_list
from leaderboard.challenges.services import (
    challenge_create,
    challenge_reveal_private,
    challenge_update,
    participation_approve,
    participation_revoke,
    slug_for,
    task_create,
    task_truth_replace,
)
from leaderboard.challenges.settings_spec import TEXT_METRIC_OPTIONS
from leaderboard.core.exceptions import ApplicationError
from leaderboard.rankings.board import plan_items, planned
from leaderboard.rankings.selectors import board_health
from leaderboard.scoring.engine import metric_choices
from leaderboard.scoring.models import RescoreJob
from leaderboard.scoring.services import task_rescore
from leaderboard.submissions.selectors import shared_addresses
from leaderboard.web.forms import ChallengeForm, PlanForm, TaskForm, TruthReplaceForm
from leaderboard.web.selectors import organizer_counts, rescore_job_get, rescore_jobs_recent
from leaderboard.web.views.common import (
    as_http,
    error_context,
    organizer_challenge,
    size_limited_uploads,
    task_for,
)

# Hidden-label files are read whole to be parsed; the service checks the size limit before parsing.


@login_required
def challenge_new(request: HttpRequest) -> HttpResponse:
    form = ChallengeForm(request.POST or None)
    error = None
    if request.method == "POST" and form.is_valid():
        slug = form.cleaned_data["slug"] or slug_for(form.cleaned_data["title"])
        fields = form.service_fields()
        title = fields.pop("title")
        try:
            challenge = challenge_create(organizer=request.user, slug=slug, title=title, **fields)  # type: ignore[arg-type]
        except ApplicationError as exc:
            error = error_context(exc)
        else:
            messages.success(request, f"Challenge '{challenge.title}' created. Add its first task.")
            return redirect("task_new", slug=challenge.slug)
    return render(
        request, "web/organizer/challenge_form.html", {"form": form, "error": error, "challenge": None},
        status=400 if request.method == "POST" else 200,
    )  # fmt: skip


@login_required
def challenge_edit(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = organizer_challenge(request, slug)
    form = ChallengeForm(request.POST or None, editing=challenge)
    error = None
    if request.method == "POST" and form.is_valid():
        fields = {k: v for k, v in form.service_fields().items() if not form.fields[k].disabled}
        try:
            challenge_update(challenge=challenge, **fields)
        except ApplicationError as exc:
            error = error_context(exc)
        else:
            messages.success(request, "Challenge saved.")
            return redirect("organize", slug=challenge.slug)
    return render(
        request, "web/organizer/challenge_form.html", {"form": form, "error": error, "challenge": challenge},
        status=400 if request.method == "POST" else 200,
    )  # fmt: skip


@login_required
@require_GET
def organize(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = organizer_challenge(request, slug)
    tasks = list(task_list(challenge=challenge))
    return render(
        request,
        "web/organizer/organize.html",
        {
            "challenge": challenge,
            "tasks": tasks,
            # no task has a private split: the reveal opens the per-class results only (walk of 2026-12-02, N4)
            "no_private_split": bool(tasks) and not any(t.has_private_split for t in tasks),
            "counts": organizer_counts(challenge=challenge),
            "jobs": rescore_jobs_recent(challenge=challenge),
            "participants": list(
                Participant.objects.filter(challenge=challenge)
                .select_related("user")
                .order_by("approved", "requested_at")
            ),
            "boards": board_health(challenge=challenge),
            "shared_addresses": shared_addresses(challenge=challenge),
        },
    )


@size_limited_uploads(any_kind=True)
@login_required
def task_new(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = organizer_challenge(request, slug)
    form = TaskForm(request.POST or None, request.FILES or None, metric_choices=metric_choices())
    error: dict[str, Any] | None = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["truth"]
        try:
            task = task_create(
                challenge=challenge,
                slug=form.cleaned_data["slug"],
                title=form.cleaned_data["title"],
                description=form.cleaned_data["description"],
                metric=form.cleaned_data["metric"],
                truth=upload.read(),
                truth_name=upload.name,
                labels=form.label_list(),
                group_column=form.cleaned_data["group_column"] or None,
                split_column=form.cleaned_data["split_column"] or None,
                positive=form.cleaned_data["positive"].strip() or None,
                stratify=form.cleaned_data["stratify"] or "auto",
                max_runs=form.cleaned_data["max_runs"],
                decimals=form.cleaned_data["decimals"],
                ignore_index=form.cleaned_data["ignore_index"],
                reduce_zero_label=form.cleaned_data["reduce_zero_label"],
                public_mode=form.cleaned_data["public_mode"] or "plain",
                ladder_eta=form.cleaned_data["ladder_eta"],
                ladder_z=form.cleaned_data["ladder_z"],
                text_options={
                    key: form.cleaned_data[key] for key in TEXT_METRIC_OPTIONS if key in form.cleaned_data
                },
                secondary_metrics=form.cleaned_data.get("secondary_metrics") or None,
            )
        except ApplicationError as exc:
            error = error_context(exc)
        else:
            messages.success(
                request,
                f"Task '{task.title}' added with {task.n_items} items; its labels are stored privately.",
            )
            return redirect("organize", slug=challenge.slug)
    return render(
        request, "web/organizer/task_form.html", {"form": form, "error": error, "challenge": challenge},
        status=400 if request.method == "POST" else 200,
    )  # fmt: skip


@size_limited_uploads
@login_required
def task_labels(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    challenge = organizer_challenge(request, slug)
    task = task_for(challenge, task_slug)
    form = TruthReplaceForm(request.POST or None, request.FILES or None, task=task)
    error = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["truth"]
        try:
            task_truth_replace(
                task=task,
                truth=upload.read(),
                truth_name=upload.name,
                group_column=form.cleaned_data["group_column"] or None,
                split_column=form.cleaned_data["split_column"] or None,
            )
        except ApplicationError as exc:
            error = error_context(exc)
        else:
            messages.success(
                request,
                f"Labels of '{task.title}' replaced (version {task.truth_version}). Re-score to apply them.",
            )
            return redirect("organize", slug=challenge.slug)
    return render(
        request,
        "web/organizer/task_labels.html",
        {"form": form, "error": error, "challenge": challenge, "task": task},
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def rescore(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    challenge = organizer_challenge(request, slug)
    task = task_for(challenge, task_slug)
    if request.POST.get("confirm") != "rescore":  # one click must not re-score a whole task (issue 22, A10)
        messages.error(request, f"Tick the box to re-score every submission of '{task.title}'.")
        return redirect("organize", slug=challenge.slug)
    job = task_rescore(task=task, user=request.user)  # type: ignore[arg-type]
    return redirect("rescore_job", slug=challenge.slug, pk=job.pk)


def _job_payload(job: RescoreJob) -> dict[str, Any]:
    percent = 100 if job.total == 0 else round(100 * job.done / job.total)
    return {"id": job.pk, "state": job.state, "done": job.done, "total": job.total, "percent": percent,
            "final": job.state == RescoreJob.State.DONE}  # fmt: skip


@login_required
@require_GET
def rescore_job(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    challenge = organizer_challenge(request, slug)
    with as_http():  # a job of another challenge, or none: 404, not a 500
        job = rescore_job_get(challenge=challenge, pk=pk)
    if request.GET.get("format") == "json":
        return JsonResponse(_job_payload(job))
    return render(
        request,
        "web/organizer/rescore.html",
        {"challenge": challenge, "job": job, "status": _job_payload(job)},
    )


@login_required
@require_POST
def reveal(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = organizer_challenge(request, slug)
    if request.POST.get("confirm") != "reveal":
        messages.error(request, "Tick the confirmation box to reveal the private board.")
        return redirect("organize", slug=challenge.slug)
    when_open = request.POST.get("when_open", "")
    try:
        challenge_reveal_private(
            challenge=challenge, close=when_open == "close", while_open=when_open == "stay-open"
        )
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("organize", slug=challenge.slug)
    closed = " Submissions are closed." if when_open == "close" else ""
    messages.success(
        request, f"The private board is now visible to everyone who can see the challenge.{closed}"
    )
    return redirect("organize", slug=challenge.slug)


@login_required
@require_POST
def participant_decide(request: HttpRequest, slug: str, username: str) -> HttpResponse:
    """Approve a participant, or withdraw an approval (``action=revoke``)."""
    challenge = organizer_challenge(request, slug)
    user = User.objects.filter(username=username).first()
    if user is None:
        raise Http404(f"No user '{username}'.")
    if request.POST.get("action") == "revoke":
        participation_revoke(challenge=challenge, user=user, revoked_by=request.user)  # type: ignore[arg-type]
        messages.success(request, f"{username} may no longer submit.")
    else:
        participation_approve(challenge=challenge, user=user, approved_by=request.user)  # type: ignore[arg-type]
        messages.success(request, f"{username} is approved and may submit.")
    return redirect("organize", slug=challenge.slug)


_PLAN_GIVEN = ("accuracy", "sd", "pilot_standard_error", "pilot_items")


@login_required
@require_GET
def plan(request: HttpRequest, slug: str) -> HttpResponse:
    """For organizers planning a test set: the items a gap needs at a power, per metric
    (``stats.power.items_for_gap``), and the smallest difference a number of items resolves."""
    challenge = organizer_challenge(request, slug)
    form = PlanForm(request.GET or None, metric_choices=metric_choices())
    result: dict[str, Any] | None = None
    resolves: dict[str, Any] | None = None
    error = ""
    if request.GET and form.is_valid():
        data = form.cleaned_data
        given = {k: data[k] for k in _PLAN_GIVEN if data.get(k) is not None}
        try:
            result = plan_items(
                data["gap"], metric=data["metric"], alpha=data["alpha"], power=data["power"], **given
            )
        except ValueError as exc:
            error = str(exc)
        if data.get("n_items"):
            resolves = planned(
                data["n_items"], metric=data["metric"], alpha=data["alpha"], power=data["power"], **given
            )
    return render(
        request,
        "web/organizer/plan.html",
        {"challenge": challenge, "form": form, "result": result, "resolves": resolves, "error": error},
        status=400 if request.GET and not form.is_valid() else 200,
    )
