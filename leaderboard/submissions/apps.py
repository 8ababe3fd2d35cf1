from typing import Any

from django.apps import AppConfig
from django.db import transaction
from django.db.models.signals import post_delete


def _delete_stored_file(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A deleted file row takes its bytes with it (a challenge deleted, the demo reloaded), once the deletion
    has committed: a rolled-back deletion keeps them. Without this the bytes would stay in the uploads
    storage (database rows or a bucket) forever, referenced by nothing."""
    name, storage = instance.file.name, instance.file.storage
    if name:
        transaction.on_commit(lambda: storage.delete(name))


class SubmissionsConfig(AppConfig):
    name = "leaderboard.submissions"
    label = "submissions"

    def ready(self) -> None:
        post_delete.connect(
            _delete_stored_file, sender="submissions.SubmissionFile", dispatch_uid="submission_file_bytes"
        )
