"""A board snapshot's JSON columns compressed with LZ4 on PostgreSQL (issue 24: the rebuild's write stage).

The snapshot of a board of 5,000 entries holds about 16 MB of JSON (its rows and rank distribution), which
PostgreSQL compresses when it stores it (TOAST, ``pglz`` by default). Measured on this stack (PostgreSQL 15,
load 6, docs/benchmarks.md "Fourth pass"): the INSERT of such a row took 1.04-1.06 s with ``pglz`` and
0.53-0.62 s with ``lz4``, and reading it back 0.88 s and 0.62 s; it costs space: the real snapshot of
K = 5,000 was stored 13% (rows) and 54% (rank distribution) larger than with ``pglz``. The values are the same
(compression is lossless and below the JSON); only values written after this migration are compressed with
LZ4, the others are read as they are. A PostgreSQL built without LZ4 (or older than 14) keeps its default,
and SQLite has no such setting: nothing is done there.
"""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError, migrations, transaction

COLUMNS = ("signature", "rows", "rank_distribution", "pairwise", "robustness", "ladder_rows")


def _set_compression(method: str) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        connection = schema_editor.connection
        if connection.vendor != "postgresql" or connection.pg_version < 140000:
            return
        table = schema_editor.quote_name(apps.get_model("rankings", "BoardSnapshot")._meta.db_table)
        alter = ", ".join(
            f"ALTER COLUMN {schema_editor.quote_name(c)} SET COMPRESSION {method}" for c in COLUMNS
        )
        try:
            with transaction.atomic(using=connection.alias):  # a savepoint: a server without LZ4 refuses it
                schema_editor.execute(f"ALTER TABLE {table} {alter}")
        except DatabaseError:  # the server's default compression stays
            return

    return run


class Migration(migrations.Migration):
    dependencies = [("rankings", "0008_leader_adjustment_rule")]

    operations = [migrations.RunPython(_set_compression("lz4"), _set_compression("default"))]
