"""Every change of what an anonymous board read shows replaces its challenge's reads version (on commit),
so no process serves an answer cached before it (leaderboard/rankings/read_cache.py)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from leaderboard.challenges.models import Challenge, Task
from leaderboard.rankings.models import BoardSnapshot, ChallengeSummary
from leaderboard.rankings.read_cache import reads_changed


@receiver([post_save, post_delete], sender=Challenge, dispatch_uid="reads-challenge")
def _challenge_changed(sender: Any, instance: Challenge, **kwargs: Any) -> None:
    reads_changed(instance.slug)


@receiver([post_save, post_delete], sender=Task, dispatch_uid="reads-task")
@receiver([post_save, post_delete], sender=ChallengeSummary, dispatch_uid="reads-summary")
def _part_changed(sender: Any, instance: Task | ChallengeSummary, **kwargs: Any) -> None:
    slug = Challenge.objects.filter(pk=instance.challenge_id).values_list("slug", flat=True).first()
    if slug is not None:
        reads_changed(slug)


@receiver([post_save, post_delete], sender=BoardSnapshot, dispatch_uid="reads-snapshot")
def _snapshot_changed(sender: Any, instance: BoardSnapshot, **kwargs: Any) -> None:
    slug = Task.objects.filter(pk=instance.task_id).values_list("challenge__slug", flat=True).first()
    if slug is not None:
        reads_changed(slug)
