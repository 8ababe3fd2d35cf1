"""Django admin for staff: challenges, tasks, teams, submissions and board snapshots.

The hidden labels (``TaskTruth``) and the stored per-item statistics (``Score``) are deliberately not
registered: the admin is a page like any other, and no page shows a hidden label.
"""

from __future__ import annotations

from django.contrib import admin
from django.db import models
from django.http import HttpRequest
from django.utils import timezone

from leaderboard.challenges.models import Challenge, Participant, Task, Team
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Submission, SubmissionFile


class TaskInline(admin.TabularInline):
    model = Task
    fields = ("slug", "title", "metric", "position", "truth_version", "has_private_split", "grouped")
    readonly_fields = ("truth_version", "has_private_split", "grouped")
    extra = 0
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # tasks are made with their labels file, through the organizer page or the API


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "visibility", "start", "end", "private_revealed")
    list_filter = ("visibility", "private_revealed")
    search_fields = ("slug", "title")
    filter_horizontal = ("organizers",)
    inlines = [TaskInline]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("__str__", "title", "metric", "n_items", "truth_version", "has_private_split")
    list_filter = ("metric",)
    search_fields = ("slug", "title", "challenge__slug")
    # The public item list can be long: shown as a count. The hidden labels are not on this model.
    exclude = ("item_ids",)
    readonly_fields = (
        "challenge",
        "metric",
        "labels",
        "truth_version",
        "has_private_split",
        "grouped",
        "n_items",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    """Who asked to take part in challenges that take approved participants only; approve in bulk."""

    list_display = ("user", "challenge", "approved", "requested_at", "approved_at")
    list_filter = ("approved", "challenge")
    search_fields = ("user__username", "challenge__slug")
    readonly_fields = ("requested_at", "approved_at")
    actions = ["approve"]

    @admin.action(description="Approve the selected participants")
    def approve(self, request: HttpRequest, queryset: models.QuerySet[Participant]) -> None:
        updated = queryset.filter(approved=False).update(approved=True, approved_at=timezone.now())
        self.message_user(request, f"{updated} participant(s) approved.")


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "challenge", "is_baseline")
    list_filter = ("is_baseline",)
    search_fields = ("name", "challenge__slug", "members__username")
    filter_horizontal = ("members",)


class SubmissionFileInline(admin.TabularInline):
    model = SubmissionFile
    fields = ("task", "run", "original_name", "format", "size", "sha256")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    # Django 6 will assume https for scheme-less links; say so now (and silence the transition warning).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_display = ("pk", "name", "challenge", "team", "status", "is_baseline", "charged", "created_at")
    list_filter = ("status", "is_baseline", "charged", "challenge")
    search_fields = ("name", "team__name", "challenge__slug")
    readonly_fields = (
        "challenge", "team", "submitted_by", "status", "attempts", "created_at", "updated_at",
        "dispatched_at", "started_at", "finished_at",
    )  # fmt: skip
    inlines = [SubmissionFileInline]


@admin.register(BoardSnapshot)
class BoardSnapshotAdmin(admin.ModelAdmin):
    """Snapshots are immutable: read-only here."""

    list_display = ("task", "split", "sequence", "entry_count", "created_at")
    list_filter = ("split",)
    search_fields = ("task__slug", "task__challenge__slug")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
