"""A snapshot's JSON columns are stored with LZ4 on PostgreSQL (rankings migration 0009, issue 24)."""

from __future__ import annotations

import pytest
from django.db import connection

from leaderboard.rankings.models import BoardSnapshot

COLUMNS = ("signature", "rows", "rank_distribution", "pairwise", "robustness", "ladder_rows")


@pytest.mark.django_db
def test_snapshot_json_columns_compress_with_lz4_on_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no column compression")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attcompression FROM pg_attribute WHERE attrelid = %s::regclass AND attname = ANY(%s)",
            [BoardSnapshot._meta.db_table, list(COLUMNS)],
        )
        found = dict(cursor.fetchall())
    assert set(found) == set(COLUMNS)
    assert set(found.values()) == {"l"}, found  # "l": LZ4 (a server built without it keeps "" = default)
