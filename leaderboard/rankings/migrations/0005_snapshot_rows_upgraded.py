"""Upgrade every stored board snapshot to the one row and signature shape, once (issue 19, item 7).

Snapshots written before issue 13 stored ``stats.board``'s row (pairs such as ``interval``, long names
such as ``difference``) and a signature with the ``stats.signature`` settings nested in ``extra`` and
several settings twice; snapshots written before verdicts existed have no ``verdict``. Until now every
read upgraded every row (``rankings.board.upgrade_row``) and the site's row view had its own fallback for
the verdict. This migration rewrites those snapshots once, so readers read rows as stored.

The rules are frozen here (a migration must not change when the code does). A snapshot already in the
shape is left untouched (its rows come back equal, so it is not written).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import migrations

#: The row's fields in order (``rankings.board.SnapshotRow`` when this migration was written).
ROW_FIELDS = (
    "rank", "name", "team", "key", "is_baseline", "submission_id", "submitted_at", "description", "link",
    "value", "low", "high", "interval_method", "interval_warning", "rank_low", "rank_high", "rank_sim_low",
    "rank_sim_high", "verdict", "is_leader", "compared_with", "compared_with_key",
    "compared_with_submission_id", "diff", "diff_low", "diff_high", "diff_se", "in_best_set",
    "in_best_set_max_t", "in_best_set_holm", "p_value", "p_adjusted", "items_needed", "n_runs", "seed_sd",
    "test_set_sd",
)  # fmt: skip
_ROW_PAIRS = {
    "interval": ("low", "high"),
    "rank_interval": ("rank_low", "rank_high"),
    "simultaneous_rank_interval": ("rank_sim_low", "rank_sim_high"),
    "difference_interval": ("diff_low", "diff_high"),
}
_ROW_RENAMES = {
    "difference": "diff",
    "adjusted_p_value": "p_adjusted",
    "difference_standard_error": "diff_se",
}
_SIGNATURE_RENAMES: dict[str, str | None] = {
    "method": "interval_method",
    "version": "engine_version",
    "best_set": "best_set_method",
    "verdict": None,  # the words of verdict_method and alpha
}


def upgrade_row(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A stored row in the one shape: pairs flattened, long names renamed, a row written before verdicts
    existed given its verdict from its max-t best-set flag and compared with the leader; keys the row does
    not define left out (a run's own figures among them)."""
    row: dict[str, Any] = {}
    for old, (lo, hi) in _ROW_PAIRS.items():
        pair = stored.get(old)
        if isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2:
            row[lo], row[hi] = pair[0], pair[1]
    for old, new in _ROW_RENAMES.items():
        if old in stored:
            row[new] = stored[old]
    row.update({k: v for k, v in stored.items() if k in ROW_FIELDS})
    if "verdict" not in stored:
        if not row.get("is_leader") and row.get("rank") != 1:
            row.setdefault("compared_with", "the leader")
        flag = row.get("in_best_set_max_t")
        if flag is not None:
            row["verdict"] = "could be the best" if flag else "worse than the best"
    return {k: row[k] for k in ROW_FIELDS if k in row}


def upgrade_signature(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A stored signature with one key per meaning: ``extra`` unnested, a setting stored twice kept once
    (the typed value wins over ``extra``'s text copy)."""
    extra = stored.get("extra")
    out: dict[str, Any] = {}
    for key, value in stored.items():
        name = _SIGNATURE_RENAMES.get(key, key)
        if key == "extra" or name is None or (key != name and name in stored):
            continue
        out[name] = value
    for key, value in (extra if isinstance(extra, Mapping) else {}).items():
        name = _SIGNATURE_RENAMES.get(key, key)
        if name is not None and name not in out:
            out[name] = value
    return out


def upgrade_snapshots(apps: Any, schema_editor: Any) -> None:
    BoardSnapshot = apps.get_model("rankings", "BoardSnapshot")
    for snapshot in BoardSnapshot.objects.only("pk", "rows", "signature").iterator(chunk_size=50):
        rows = [upgrade_row(r) for r in snapshot.rows or []]
        signature = upgrade_signature(snapshot.signature or {})
        # compared as sets of keys and values: PostgreSQL's jsonb keeps no key order
        if rows != (snapshot.rows or []) or signature != (snapshot.signature or {}):
            BoardSnapshot.objects.filter(pk=snapshot.pk).update(rows=rows, signature=signature)


class Migration(migrations.Migration):
    dependencies = [("rankings", "0004_ladder_public_mode")]

    operations = [migrations.RunPython(upgrade_snapshots, migrations.RunPython.noop, elidable=True)]
