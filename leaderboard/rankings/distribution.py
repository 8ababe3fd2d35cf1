"""The rank distribution of a snapshot as stored (``BoardSnapshot.rank_distribution``), and back.

Each row (an entry, in board order) holds the share of resamples in which the entry took each rank. Most
of a large board's row is zero (an entry ranks within a band around its own place), so since issue 24 a
snapshot stores each row from its first to its last nonzero share: at K = 1,000 the K x K list of lists
was a million numbers (5 MB of JSON) that every rebuild encoded and PostgreSQL parsed, and every read of
the rank page decoded. Snapshots written before hold the K x K list; :func:`unpack_rank_distribution` reads
both. Numbers are the same floats either way: only the zeros are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: ``BoardSnapshot.rank_distribution`` as written since issue 24: each row's shares from its first to its last
#: nonzero rank (a row of a large board is zero on most ranks: at K = 1,000 the K x K list was 5 MB of
#: JSON encoded, sent and parsed by PostgreSQL on every rebuild). Snapshots written before hold the K x K
#: list of lists; :func:`unpack_rank_distribution` reads both.
RANK_BANDS = "bands"


def pack_rank_distribution(matrix: Any) -> dict[str, Any] | list[list[float]]:
    """The K x K rank shares (rows: entries in board order; columns: ranks) as stored: ``{"format":
    "bands", "size": [K, K], "first": [first nonzero rank per row], "shares": [[shares from it to the last
    nonzero], ...]}``; the very numbers of the matrix, its zeros left out. An empty board stores ``[]``."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.size == 0:
        return []
    k = m.shape[0]
    nonzero = m != 0
    any_nonzero = nonzero.any(axis=1)
    first = np.where(any_nonzero, nonzero.argmax(axis=1), 0)
    last = np.where(any_nonzero, m.shape[1] - nonzero[:, ::-1].argmax(axis=1), 0)  # one past the last
    return {
        "format": RANK_BANDS,
        "size": [k, int(m.shape[1])],
        "first": first.tolist(),
        "shares": [m[i, first[i] : last[i]].tolist() for i in range(k)],
    }


def unpack_rank_distribution(stored: Any) -> np.ndarray:
    """The K x K matrix of a snapshot's ``rank_distribution`` (either form :func:`pack_rank_distribution`
    says); an empty one is an empty array."""
    if isinstance(stored, dict) and stored.get("format") == RANK_BANDS:
        rows, columns = (int(n) for n in stored["size"])
        out = np.zeros((rows, columns))
        for i, (start, shares) in enumerate(zip(stored["first"], stored["shares"], strict=True)):
            out[i, start : start + len(shares)] = shares
        return out
    return np.asarray(stored or [], dtype=np.float64)
