"""Copy prediction files written under DATA_DIR/uploads (before uploads moved to the database) into the
configured storage, so that workers on other hosts can read them. Run ``migrate`` on the host that holds
the old files (the web host). A file missing on disk is reported and left as it was: scoring it fails
as it would have before (an uncharged, platform-side failure).
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.core.files.storage import FileSystemStorage, storages
from django.db import migrations

from leaderboard.core.storage import DatabaseStorage, write_file

logger = logging.getLogger("leaderboard.migrations")


def copy_files_from_disk(apps, schema_editor) -> None:
    target = storages["default"]
    source = Path(settings.MEDIA_ROOT)
    if isinstance(target, FileSystemStorage) and Path(target.location).resolve() == source.resolve():
        return  # uploads stay where they are
    submission_file = apps.get_model("submissions", "SubmissionFile")
    stored_file = apps.get_model("core", "StoredFile")
    stored_chunk = apps.get_model("core", "StoredFileChunk")
    copied = missing = 0
    for name in submission_file.objects.values_list("file", flat=True).iterator():
        path = source / name
        if isinstance(target, DatabaseStorage):
            if stored_file.objects.filter(name=name).exists():
                continue
        elif target.exists(name):
            continue
        if not path.is_file():
            missing += 1
            logger.warning("uploaded file %s is not under %s: left as it was", name, source)
            continue
        with path.open("rb") as handle:
            pieces = iter(lambda: handle.read(1 << 20), b"")
            if isinstance(target, DatabaseStorage):
                write_file(name, pieces, file_model=stored_file, chunk_model=stored_chunk)
            else:
                saved = target.save(name, handle)
                if saved != name:
                    submission_file.objects.filter(file=name).update(file=saved)
        copied += 1
    if copied or missing:
        logger.warning("copied %d uploaded files into storage; %d missing on disk", copied, missing)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_storage_blobs"),
        ("submissions", "0004_vservice_file_formats"),
    ]

    operations = [migrations.RunPython(copy_files_from_disk, migrations.RunPython.noop, elidable=True)]
