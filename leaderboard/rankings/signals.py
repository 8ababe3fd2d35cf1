"""Every change of what an anonymous board read shows replaces its challenge's reads version (on commit),
so no process serves an answer cached before it (leaderboard/rankings/read_cache.py)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import m2m_changed, post_delete, post_save
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


@receiver(m2m_changed, sender=Challenge.organizers.through, dispatch_uid="reads-organizers")
def _organizers_changed(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any
) -> None:
    """Who organizes a challenge is part of a signed-in reader's cached answer (read_cache keeps whether
    the reader is an organizer under the reads version): a change replaces the version."""
    if not action.startswith("post_"):
        return
    if isinstance(instance, Challenge):
        reads_changed(instance.slug)
    else:  # from the user's side: the challenges added or removed (all of the user's on a clear)
        ids = pk_set if pk_set else instance.organized_challenges.values_list("pk", flat=True)
        for slug in Challenge.objects.filter(pk__in=list(ids)).values_list("slug", flat=True):
            reads_changed(slug)
