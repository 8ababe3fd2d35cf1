"""Text-task files: plain text, JSONL, CSV and CoNLL, with ``file:line`` errors.

Formats (docs/text.md):

- **plain text** (any other extension): one segment per line, read as sacreBLEU's command line reads it
  (UTF-8, universal newlines, trailing whitespace stripped, empty lines are empty segments). Segment ids
  are the line numbers ``1..N``. Several references: one file per reference stream.
- **JSONL** (``.jsonl``, ``.json``): one object per line. Hypotheses ``{"id": ..., "text": ...}``; truth
  ``{"id": ..., "references": [...]}`` (or ``"reference": "..."``) and optionally ``"doc": ...``.
- **CSV** (``.csv``): a header; hypotheses ``id,text``; truth ``id,reference[,reference_2,...][,doc]``
  (every column whose name starts with ``reference`` is a reference stream; an empty cell is a missing
  reference).
- **CoNLL** (for entity tagging): one token per line, the tag in the last column, a blank line between
  sentences, ``-DOCSTART-`` lines starting a new document. Sentence ids are ``1..S``; a prediction file
  must hold the same sentences with the same number of tokens (and the same tokens where both files
  have a token column).

Every reader takes a path, bytes or a binary file object (with ``name=`` for messages and the format's
extension), as :mod:`stats.io` does. Every problem raises :class:`stats.io.InputError` (``file:line[:column]: message``); a prediction's
messages quote only the prediction file itself and counts, never a reference.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stats.io import DEFAULT_MAX_BYTES, InputError, Source, _display_name, _read_bytes, decode_text

__all__ = [
    "TagTruth",
    "TextTruth",
    "read_hypotheses",
    "read_tag_predictions",
    "read_tag_truth",
    "read_text_truth",
    "text_format",
]


@dataclass(frozen=True, eq=False)
class TextTruth:
    """References of a text task.

    Attributes
    ----------
    name : str
        Display name (the first reference file).
    ids : list of str
        Segment ids in task order (plain text: line numbers).
    references : list of list of (str or None)
        Reference streams: ``references[r][i]`` is reference ``r`` of segment ``i`` (None: segment ``i``
        has fewer references).
    documents : list of str or None
        Each segment's document id, when the truth names them (grouped resampling).
    """

    name: str
    ids: list[str]
    references: list[list[str | None]]
    documents: list[str] | None

    @property
    def n_refs(self) -> int:
        return len(self.references)


@dataclass(frozen=True, eq=False)
class TagTruth:
    """Gold tag sequences of an entity-tagging task (CoNLL).

    Attributes
    ----------
    name : str
    tokens : list of list of str
        Each sentence's tokens (first column; empty strings for a tag-only file).
    tags : list of list of str
    documents : list of str
        Each sentence's document (``-DOCSTART-`` count; ``"1"`` when the file has none).
    lines : list of int
        The line where each sentence starts.
    """

    name: str
    tokens: list[list[str]]
    tags: list[list[str]]
    documents: list[str]
    lines: list[int]

    @property
    def ids(self) -> list[str]:
        return [str(i + 1) for i in range(len(self.tags))]

    def types(self) -> list[str]:
        """Entity types named by the gold tags (``B-PER`` -> ``PER``), sorted."""
        out = set()
        for sent in self.tags:
            for tag in sent:
                if tag != "O" and "-" in tag:
                    out.add(tag.split("-", 1)[1])
        return sorted(out)


def text_format(path: Source, fmt: str | None = None, *, name: str | None = None) -> str:
    """``"jsonl"``, ``"csv"`` or ``"plain"``: ``fmt`` when given, else from the extension of the file's
    (display) name."""
    if fmt:
        if fmt not in ("jsonl", "csv", "plain"):
            raise ValueError(f"`fmt` must be 'jsonl', 'csv' or 'plain', got {fmt!r}.")
        return fmt
    suffix = Path(_display_name(path, name)).suffix.lower()
    return {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv"}.get(suffix, "plain")


def _text(path: Source, *, name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[str, str]:
    """The file's display name and text; ``path`` may be a path, bytes or a binary file object."""
    name = _display_name(path, name)
    data = _read_bytes(path, name, max_bytes)
    if not data.strip():
        raise InputError("the file is empty", file=name)
    text = decode_text(data, name=name)  # archives, UTF-16, NUL bytes, invalid UTF-8: located refusals
    return name, text.replace("\r\n", "\n").replace("\r", "\n")


def _plain_lines(text: str) -> list[str]:
    lines = text.split("\n")  # not splitlines(): U+2028 and form feeds stay inside their segment
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip() for line in lines]


def _jsonl_records(name: str, text: str) -> list[tuple[int, dict[str, object]]]:
    out = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", file=name, line=lineno, column=exc.colno) from None
        if not isinstance(record, dict):
            raise InputError("each line must be a JSON object", file=name, line=lineno)
        out.append((lineno, record))
    if not out:
        raise InputError("the file holds no record", file=name)
    return out


def _csv_rows(name: str, text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for record in reader:
            line = start
            start = reader.line_num + 1
            if header is None:
                header = [c.strip() for c in record]
                continue
            if not record:
                continue
            if len(record) != len(header):
                raise InputError(f"expected {len(header)} fields, found {len(record)}", file=name, line=line)
            rows.append((line, record))
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=name, line=reader.line_num) from None
    if header is None or not rows:
        raise InputError("the file holds no row under its header", file=name)
    return header, rows


def _segment_id(name: str, value: object, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError("`id` must be a string or an integer", file=name, line=line)
    text = str(value).strip()
    if not text:
        raise InputError("empty `id`", file=name, line=line)
    return text


def _check_unique(name: str, ids: list[str], lines: list[int]) -> None:
    seen: dict[str, int] = {}
    for sid, line in zip(ids, lines, strict=True):
        if sid in seen:
            raise InputError(f"duplicate id '{sid}' (first on line {seen[sid]})", file=name, line=line)
        seen[sid] = line


def read_text_truth(
    paths: Sequence[Source], *, fmt: str | None = None, names: Sequence[str] | None = None
) -> TextTruth:
    """References of a text task: one plain-text file per reference stream, or one JSONL or CSV file
    holding every reference (and optionally document ids).

    Raises
    ------
    stats.io.InputError
        Located at ``file:line``; plain-text streams of different lengths name both counts.
    """
    if not paths:
        raise ValueError("`paths` must name at least one truth file.")
    shown = [_display_name(p, None if names is None else names[k]) for k, p in enumerate(paths)]
    kinds = {text_format(p, fmt, name=shown[k]) for k, p in enumerate(paths)}
    if len(kinds) != 1:
        raise InputError("the truth files mix formats; give plain-text files only", file=shown[0])
    kind = kinds.pop()
    if kind == "plain":
        streams: list[list[str | None]] = []
        first = ""
        for k, path in enumerate(paths):
            name, text = _text(path, name=shown[k])
            lines: list[str | None] = list(_plain_lines(text))
            if k == 0:
                first = name
            elif len(lines) != len(streams[0]):
                raise InputError(
                    f"{len(lines)} lines, but the first reference file {first} has {len(streams[0])}",
                    file=name,
                    line=min(len(lines), len(streams[0])) + 1,
                )
            streams.append(lines)
        return TextTruth(first, [str(i + 1) for i in range(len(streams[0]))], streams, None)
    if len(paths) != 1:
        raise InputError(
            f"a {kind.upper()} truth holds every reference in one file; got {len(paths)} files",
            file=shown[1],
        )
    name, text = _text(paths[0], name=shown[0])
    ids: list[str] = []
    refs: list[list[str | None]] = []
    docs: list[str | None] = []
    lines_of: list[int] = []
    if kind == "jsonl":
        for line, rec in _jsonl_records(name, text):
            ids.append(_segment_id(name, rec.get("id"), line))
            raw = rec.get("references", rec.get("reference"))
            if isinstance(raw, str):
                raw = [raw]
            if not isinstance(raw, list) or not raw or not all(isinstance(r, str) or r is None for r in raw):
                raise InputError(
                    "`references` must be a non-empty list of strings (or `reference` one string)",
                    file=name,
                    line=line,
                )
            refs.append([None if r is None else r.rstrip() for r in raw])
            doc = rec.get("doc")
            docs.append(None if doc is None else str(doc))
            lines_of.append(line)
    else:
        header, rows = _csv_rows(name, text)
        lower = [h.lower() for h in header]
        if "id" not in lower:
            raise InputError("the header has no `id` column", file=name, line=1)
        ref_cols = [i for i, h in enumerate(lower) if h.startswith("reference") or h == "ref"]
        if not ref_cols:
            raise InputError("the header has no `reference` column", file=name, line=1)
        id_col = lower.index("id")
        doc_col = lower.index("doc") if "doc" in lower else None
        for line, row in rows:
            ids.append(_segment_id(name, row[id_col], line))
            cells: list[str | None] = [row[c].rstrip() if row[c].strip() else None for c in ref_cols]
            if all(c is None for c in cells):
                cells[0] = ""
            refs.append(cells)
            docs.append(None if doc_col is None else row[doc_col].strip() or None)
            lines_of.append(line)
    _check_unique(name, ids, lines_of)
    n_refs = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(n_refs)]
    if all(r is None for r in streams[0]):
        raise InputError("no segment has a reference", file=name)
    for k, line in enumerate(lines_of):
        if streams[0][k] is None and all(s[k] is None for s in streams):
            raise InputError("the segment has no reference", file=name, line=line)
    named = [d for d in docs if d is not None]
    if named and len(named) != len(docs):
        missing = next(line for d, line in zip(docs, lines_of, strict=True) if d is None)
        raise InputError("`doc` is given for some segments and not for this one", file=name, line=missing)
    documents = [str(d) for d in docs] if named else None
    return TextTruth(name, ids, streams, documents)


def read_hypotheses(
    path: Source, truth: TextTruth, *, fmt: str | None = None, name: str | None = None
) -> list[str]:
    """One system's segments in the truth's order.

    Plain text must have exactly one line per segment (the message names both counts); JSONL and CSV
    must name every segment id of the truth once and no other.
    """
    kind = text_format(path, fmt, name=name)
    name, text = _text(path, name=name)
    n = len(truth.ids)
    if kind == "plain":
        lines = _plain_lines(text)
        if len(lines) != n:
            raise InputError(
                f"{len(lines)} lines, but the truth {truth.name} has {n} segments",
                file=name,
                line=min(len(lines), n) + 1,
            )
        return lines
    position = {sid: k for k, sid in enumerate(truth.ids)}
    out: list[str | None] = [None] * n
    seen: dict[str, int] = {}
    if kind == "jsonl":
        records = [
            (line, rec.get("id"), rec.get("text", rec.get("hypothesis")))
            for line, rec in _jsonl_records(name, text)
        ]
    else:
        header, rows = _csv_rows(name, text)
        lower = [h.lower() for h in header]
        if "id" not in lower:
            raise InputError("the header has no `id` column", file=name, line=1)
        col = next((lower.index(c) for c in ("text", "hypothesis", "prediction") if c in lower), None)
        if col is None:
            raise InputError("the header has no `text` column", file=name, line=1)
        records = [(line, row[lower.index("id")], row[col]) for line, row in rows]
    for line, raw_id, value in records:
        sid = _segment_id(name, raw_id, line)
        if not isinstance(value, str):
            raise InputError("`text` must be a string", file=name, line=line)
        if sid not in position:
            raise InputError(f"id '{sid}' is not a segment of the task", file=name, line=line)
        if sid in seen:
            raise InputError(f"duplicate id '{sid}' (first on line {seen[sid]})", file=name, line=line)
        seen[sid] = line
        out[position[sid]] = value.rstrip()
    missing = [truth.ids[k] for k, v in enumerate(out) if v is None]
    if missing:
        shown = ", ".join(f"'{m}'" for m in missing[:5])
        raise InputError(f"{len(missing)} of {n} segments have no hypothesis (first: {shown})", file=name)
    return [v for v in out if v is not None]


def _conll(
    path: Source, name: str | None = None
) -> tuple[str, list[list[str]], list[list[str]], list[str], list[int]]:
    name, text = _text(path, name=name)
    tokens: list[list[str]] = []
    tags: list[list[str]] = []
    docs: list[str] = []
    starts: list[int] = []
    doc = 1
    cur_tok: list[str] = []
    cur_tag: list[str] = []
    width: int | None = None

    def close() -> None:
        if cur_tag:
            tokens.append(list(cur_tok))
            tags.append(list(cur_tag))
            docs.append(str(doc))
            cur_tok.clear()
            cur_tag.clear()

    for lineno, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields:
            close()
            continue
        if fields[0] == "-DOCSTART-":
            close()
            if tags:
                doc += 1
            continue
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            raise InputError(f"expected {width} columns, found {len(fields)}", file=name, line=lineno)
        tag = fields[-1]
        if tag != "O" and not (len(tag) > 2 and tag[1] == "-" and tag[0] in "BIESLU"):
            raise InputError(
                f"'{tag}' is not a tag (O, or B-/I-/E-/S-/L-/U- and a type)",
                file=name,
                line=lineno,
                column=len(fields),
            )
        if not cur_tag:
            starts.append(lineno)
        cur_tok.append(fields[0] if len(fields) > 1 else "")
        cur_tag.append(tag)
    close()
    if not tags:
        raise InputError("the file holds no tagged token", file=name)
    return name, tokens, tags, docs, starts


def read_tag_truth(path: Source, *, name: str | None = None) -> TagTruth:
    """Gold CoNLL tags (token in the first column, tag in the last)."""
    name, tokens, tags, docs, starts = _conll(path, name)
    return TagTruth(name, tokens, tags, docs, starts)


def read_tag_predictions(path: Source, truth: TagTruth, *, name: str | None = None) -> list[list[str]]:
    """Predicted CoNLL tags, sentence by sentence as in the truth (same sentence and token counts)."""
    name, tokens, tags, _, starts = _conll(path, name)
    if len(tags) != len(truth.tags):
        raise InputError(
            f"{len(tags)} sentences, but the truth {truth.name} has {len(truth.tags)}",
            file=name,
            line=starts[min(len(tags), len(truth.tags)) - 1],
        )
    for k, (pred, gold) in enumerate(zip(tags, truth.tags, strict=True)):
        if len(pred) != len(gold):
            raise InputError(
                f"sentence {k + 1} has {len(pred)} tokens, but {len(gold)} in the truth",
                file=name,
                line=starts[k],
            )
        own, theirs = tokens[k], truth.tokens[k]
        if all(own) and all(theirs) and own != theirs:
            at = next(j for j, (a, b) in enumerate(zip(own, theirs, strict=True)) if a != b)
            raise InputError(
                f"token '{own[at]}' differs from the truth's token at this position",
                file=name,
                line=starts[k] + at,
            )
    return tags
