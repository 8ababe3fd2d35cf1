"""Entity chunks of a tag sequence under the two conventions the field uses, named.

``conlleval`` (default): the CoNLL-2000 ``conlleval`` script's reading, as seqeval's default mode
(``get_entities``) extends it to ``E-``/``S-`` tags. Tolerant: a chunk starts at ``B-``/``S-``, at any
tag after ``O`` or after a tag of another type, so ``I-X`` after ``O`` opens a chunk (IOB1 files read
right); a chunk ends before ``B-``, ``S-``, ``O`` or a tag of another type, and after ``E-``/``S-``.

``strict``: only chunks well formed in the named scheme count (seqeval's ``mode="strict"``):
IOB2 ``B-X (I-X)*``; IOBES ``S-X`` or ``B-X (I-X)* E-X``; BILOU the same with ``U``/``L``. A malformed
chunk (``I-X`` with no ``B-X``, a ``B-X`` never closed by ``E-X`` in IOBES) is not an entity at all.

Written here rather than imported from seqeval so that seqeval stays an independent test oracle
(``tests/stats/test_text.py`` compares both modes with seqeval on random tag sequences) and the
statistics need no scikit-learn at run time.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["STRICT_SCHEMES", "chunks"]

#: Schemes whose strict reading is implemented (seqeval's ``IOB2``, ``IOBES``, ``BILOU``).
STRICT_SCHEMES = ("IOB2", "IOBES", "BILOU")

Chunk = tuple[str, int, int]  # (type, first token, last token), inclusive


def _split(tag: str) -> tuple[str, str]:
    if tag == "O" or "-" not in tag:
        return tag[:1] or "O", "_"
    prefix, typ = tag.split("-", 1)
    return prefix, typ or "_"


def _end(prev: str, tag: str, prev_type: str, typ: str) -> bool:
    if prev in ("E", "S"):
        return True
    if prev in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev not in ("O", ".") and prev_type != typ


def _start(prev: str, tag: str, prev_type: str, typ: str) -> bool:
    if tag in ("B", "S"):
        return True
    if prev in ("E", "S", "O") and tag in ("E", "I"):
        return True
    return tag not in ("O", ".") and prev_type != typ


def _conlleval(tags: Sequence[str]) -> list[Chunk]:
    out: list[Chunk] = []
    prev, prev_type, begin = "O", "", 0
    for i, tag in enumerate([*tags, "O"]):
        p, typ = _split(tag)
        if _end(prev, p, prev_type, typ):
            out.append((prev_type, begin, i - 1))
        if _start(prev, p, prev_type, typ):
            begin = i
        prev, prev_type = p, typ
    return out


def _strict(tags: Sequence[str], scheme: str) -> list[Chunk]:
    mapping = {"U": "S", "L": "E"} if scheme == "BILOU" else {}
    parts = [_split(t) for t in tags]
    parts = [(mapping.get(p, p), typ) for p, typ in parts]
    out: list[Chunk] = []
    i, n = 0, len(parts)
    if scheme == "IOB2":
        while i < n:
            p, typ = parts[i]
            if p == "B":
                j = i + 1
                while j < n and parts[j] == ("I", typ):
                    j += 1
                out.append((typ, i, j - 1))
                i = j
            else:
                i += 1
        return out
    while i < n:  # IOBES / BILOU
        p, typ = parts[i]
        if p == "S":
            out.append((typ, i, i))
            i += 1
        elif p == "B":
            j = i + 1
            while j < n and parts[j] == ("I", typ):
                j += 1
            if j < n and parts[j] == ("E", typ):
                out.append((typ, i, j))
                i = j + 1
            else:
                i = j
        else:
            i += 1
    return out


def chunks(tags: Sequence[str], *, mode: str = "conlleval", scheme: str = "IOB2") -> set[Chunk]:
    """The entity chunks ``(type, first, last)`` of one sentence's tags.

    Examples
    --------
    >>> sorted(chunks(["O", "I-PER", "I-PER", "B-LOC", "O"]))  # conlleval: I- after O opens a chunk
    [('LOC', 3, 3), ('PER', 1, 2)]
    >>> sorted(chunks(["O", "I-PER", "I-PER", "B-LOC", "O"], mode="strict"))  # IOB2: I- without B- is no chunk
    [('LOC', 3, 3)]
    """
    if mode == "conlleval":
        return set(_conlleval(tags))
    if mode != "strict":
        raise ValueError(f"`mode` must be 'conlleval' or 'strict', got {mode!r}.")
    if scheme not in STRICT_SCHEMES:
        raise ValueError(f"strict mode reads the schemes {list(STRICT_SCHEMES)}, got {scheme!r}.")
    return set(_strict(tags, scheme))
