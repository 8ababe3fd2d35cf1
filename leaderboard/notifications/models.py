"""Notices to participants (a submission scored or failed, a private board revealed) and their opt-outs."""

from django.conf import settings
from django.db import models


class Notice(models.Model):
    """One notice to one user. ``key`` names the event (``scored:12``, ``revealed:3``): unique per user, so an
    event retried (a task redelivered, an on-commit hook run twice) notifies once. ``on_site`` is False
    when the user had turned site notices off: the row still records that the event was handled."""

    class Kind(models.TextChoices):
        SCORED = "scored", "Submission scored"
        FAILED = "failed", "Submission failed"
        REVEALED = "revealed", "Private board revealed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notices")
    key = models.CharField(max_length=80)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    subject = models.CharField(max_length=200)
    body = models.TextField()
    url = models.CharField(max_length=300, blank=True, help_text="The site path the notice is about.")
    on_site = models.BooleanField(default=True)
    emailed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="unique_notice_per_event")]
        indexes = [models.Index(fields=["user", "read_at"])]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.subject}"


class NoticePreference(models.Model):
    """A user's opt-outs; a user without a row gets both (e-mail and site notices)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notice_preference"
    )
    email = models.BooleanField(default=True, help_text="Send notices by e-mail.")
    site = models.BooleanField(default=True, help_text="List notices on the site (the bell).")

    def __str__(self) -> str:
        return f"{self.user_id}: email={self.email} site={self.site}"
