"""Writes the bad-input corpus (small files, committed). Run from this directory: ``python make_corpus.py``.

Every case and the exact message it must produce are listed in ``tests/reliability/test_bad_input.py``;
this script only writes the bytes (text files could be written by hand, the binary ones could not).
The task they are checked against: items it-1..it-4; ``cls`` (accuracy, labels cat,dog), ``prob``
(log_loss, labels neg,pos), ``reg`` (mae).
"""

from __future__ import annotations

import gzip
import io
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
GOOD_CLS = "id,prediction\nit-1,cat\nit-2,dog\nit-3,cat\nit-4,dog\n"
GOOD_TRUTH = "id,label\nit-1,cat\nit-2,dog\nit-3,cat\nit-4,dog\n"


def parquet(columns: dict[str, list[object]]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out)
    return out.getvalue()


def zipped(name: str, text: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(name, text)
    return out.getvalue()


PREDICTIONS: dict[str, bytes] = {
    # cls: id,prediction with a label of cat,dog
    "empty.csv": b"",
    "blank_lines_only.csv": b"\n\n  \n",
    "header_only.csv": b"id,prediction\n",
    "missing_column.csv": b"id\nit-1\nit-2\nit-3\nit-4\n",
    "extra_columns.csv": b"id,prediction,confidence\nit-1,cat,0.9\nit-2,dog,0.8\nit-3,cat,0.7\nit-4,dog,0.6\n",
    "repeated_column.csv": b"id,prediction,id\nit-1,cat,it-1\n",
    "extra_field.csv": b"id,prediction\nit-1,cat\nit-2,dog,oops\nit-3,cat\nit-4,dog\n",
    "duplicate_ids.csv": b"id,prediction\nit-1,cat\nit-2,dog\nit-1,dog\nit-3,cat\nit-4,dog\n",
    "missing_ids.csv": b"id,prediction\nit-1,cat\nit-2,dog\n",
    "unknown_ids.csv": b"id,prediction\nit-1,cat\nit-9,dog\nit-2,dog\nit-3,cat\nit-4,dog\n",
    "empty_id.csv": b"id,prediction\nit-1,cat\n,dog\n",
    "label_outside_set.csv": b"id,prediction\nit-1,cat\nit-2,cow\nit-3,cat\nit-4,dog\n",
    "number_as_label.csv": b"id,prediction\nit-1,1\nit-2,dog\nit-3,cat\nit-4,dog\n",
    "semicolon.csv": b"id;prediction\nit-1;cat\nit-2;dog\nit-3;cat\nit-4;dog\n",
    "tab.csv": b"id\tprediction\nit-1\tcat\nit-2\tdog\nit-3\tcat\nit-4\tdog\n",
    "utf16_bom.csv": GOOD_CLS.encode("utf-16"),
    "utf16_no_bom.csv": GOOD_CLS.encode("utf-16-le"),
    "latin1.csv": "id,prediction\nit-1,cat\nit-2,dég\nit-3,cat\nit-4,dog\n".encode("latin-1"),
    "broken_quote.csv": b'id,prediction\nit-1,"cat\nit-2,dog\n',
    # a quoted field spanning lines 3-4 is valid ("dog\n" is stripped); the error on line 5 says line 5
    "multiline_then_error.csv": b'id,prediction\n"it-1","cat"\n"it-2","dog\n"\nit-3,cow\nit-4,dog\n',
    "archive.zip": zipped("predictions.csv", GOOD_CLS),
    "predictions.csv.gz": gzip.compress(GOOD_CLS.encode(), mtime=0),
    "wrong_names.parquet": parquet({"item": ["it-1", "it-2"], "pred": ["cat", "dog"]}),
    "int_labels.parquet": parquet({"id": ["it-1", "it-2", "it-3", "it-4"], "prediction": [1, 0, 1, 0]}),
    "damaged.parquet": b"PAR1 this is not really parquet PAR1",
    # accepted
    "quoted_crlf.csv": b'"id","prediction"\r\n"it-1","cat"\r\n"it-2","dog"\r\n"it-3","cat"\r\n"it-4","dog"\r\n',
    "utf8_bom.csv": b"\xef\xbb\xbf" + GOOD_CLS.encode(),
    "multiline_valid.csv": b'id,prediction\n"it-1","cat"\n"it-2","dog\n"\n\nit-3,cat\nit-4,dog\n',
    "valid.parquet": parquet(
        {"prediction": ["cat", "dog", "cat", "dog"], "id": ["it-1", "it-2", "it-3", "it-4"]}
    ),
    # prob: id,score, probabilities
    "score_text.csv": b"id,score\nit-1,0.2\nit-2,high\nit-3,0.1\nit-4,0.9\n",
    "score_nan.csv": b"id,score\nit-1,NaN\nit-2,0.5\nit-3,0.1\nit-4,0.9\n",
    "score_inf.csv": b"id,score\nit-1,0.2\nit-2,0.5\nit-3,inf\nit-4,0.9\n",
    "score_above_one.csv": b"id,score\nit-1,0.2\nit-2,1.5\nit-3,0.1\nit-4,0.9\n",
    "score_negative.csv": b"id,score\nit-1,-0.1\nit-2,0.5\nit-3,0.1\nit-4,0.9\n",
    "score_header_of_labels.csv": b"id,prediction\nit-1,0.2\nit-2,0.5\nit-3,0.1\nit-4,0.9\n",
    "score_as_text.parquet": parquet(
        {"id": ["it-1", "it-2", "it-3", "it-4"], "score": ["0.1", "high", "0.2", "0.3"]}
    ),
    "score_valid.csv": b"id,score\nit-1,0.2\nit-2,0.5\nit-3,1e-1\nit-4,1\n",
    # reg: id,prediction with a finite number
    "reg_text.csv": b"id,prediction\nit-1,1.5\nit-2,cat\nit-3,2\nit-4,3\n",
    "reg_infinity.csv": b"id,prediction\nit-1,1.5\nit-2,2\nit-3,-Infinity\nit-4,3\n",
    "reg_nan.csv": b"id,prediction\nit-1,nan\nit-2,2\nit-3,2\nit-4,3\n",
}

TRUTH: dict[str, bytes] = {
    "t_empty.csv": b"",
    "t_header_only.csv": b"id,label\n",
    "t_missing_column.csv": b"id\nit-1\nit-2\n",
    "t_extra_columns.csv": b"id,label,note\nit-1,cat,x\nit-2,dog,y\n",
    "t_duplicate_ids.csv": b"id,label\nit-1,cat\nit-1,dog\n",
    "t_empty_id.csv": b"id,label\nit-1,cat\n ,dog\n",
    "t_empty_label.csv": b"id,label\nit-1,cat\nit-2,\n",
    "t_label_outside_set.csv": b"id,label\nit-1,cat\nit-2,dog\nit-3,cow\n",
    "t_reg_text.csv": b"id,label\nit-1,1.5\nit-2,cat\n",
    "t_reg_nan.csv": b"id,label\nit-1,1.5\nit-2,NaN\n",
    "t_reg_inf.csv": b"id,label\nit-1,inf\nit-2,2\n",
    "t_semicolon.csv": b"id;label\nit-1;cat\nit-2;dog\n",
    "t_tab.csv": b"id\tlabel\nit-1\tcat\nit-2\tdog\n",
    "t_utf16_bom.csv": GOOD_TRUTH.encode("utf-16"),
    "t_utf16_no_bom.csv": GOOD_TRUTH.encode("utf-16-le"),
    "t_latin1.csv": "id,label\nit-1,cat\nit-2,dög\n".encode("latin-1"),
    "t_broken_quote.csv": b'id,label\nit-1,"cat\nit-2,dog\n',
    "t_archive.zip": zipped("truth.csv", GOOD_TRUTH),
    "t_wrong_names.parquet": parquet({"id": ["it-1", "it-2"], "truth": ["cat", "dog"]}),
    "t_reg_text.parquet": parquet({"id": ["it-1", "it-2"], "label": ["high", "2.0"]}),
    # with split_column=split (columns after the split column keep their numbers)
    "t_split_bad_value.csv": b"id,label,split\nit-1,cat,public\nit-2,dog,maybe\n",
    "t_split_all_public.csv": b"id,label,split\nit-1,cat,public\nit-2,dog,public\n",
    "t_split_missing.csv": b"id,label\nit-1,cat\nit-2,dog\n",
    "t_split_multiline_then_error.csv": (
        b'id,split,label\n"it-1",public,"cat\n"\n\n"it-2",private,dog\nit-3,public,cow\n'
    ),
    "t_split_utf16.csv": "id,label,split\nit-1,cat,public\nit-2,dog,private\n".encode("utf-16"),
    "t_split_latin1.csv": "id,label,split\nit-1,cat,public\nit-2,dög,private\n".encode("latin-1"),
    "t_split_semicolon.csv": b"id;label;split\nit-1;cat;public\nit-2;dog;private\n",
    # with group_column=writer: a group name spanning lines, then an error on the line it is on
    "t_group_multiline_then_error.csv": b'id,label,writer\nit-1,cat,"Ann\nLee"\nit-2,dog,bob\nit-3,,bob\n',
    # accepted
    "t_utf8_bom.csv": b"\xef\xbb\xbf" + GOOD_TRUTH.encode(),
    "t_quoted_crlf.csv": b'"id","label"\r\n"it-1","cat"\r\n"it-2","dog"\r\n"it-3","cat"\r\n"it-4","dog"\r\n',
    "t_split.parquet": parquet(
        {
            "id": ["it-1", "it-2", "it-3", "it-4"],
            "label": ["cat", "dog", "cat", "dog"],
            "split": ["public", "private", "public", "private"],
        }
    ),
    # replacing a task's labels: the same items are required
    "t_replace_missing_ids.csv": b"id,label\nit-1,cat\nit-2,dog\nit-3,cat\n",
    "t_replace_unknown_ids.csv": b"id,label\nit-1,cat\nit-2,dog\nit-3,cat\nit-9,dog\n",
}

VALID = {
    "cls.csv": GOOD_TRUTH.encode(),
    "prob.csv": b"id,label\nit-1,neg\nit-2,pos\nit-3,neg\nit-4,pos\n",
    "reg.csv": b"id,label\nit-1,1.0\nit-2,2.5\nit-3,0\nit-4,-3\n",
    "reg_predictions.csv": b"id,prediction\nit-1,1.5\nit-2,2\nit-3,0.5\nit-4,-2\n",
}


def main() -> None:
    for folder, files in (("predictions", PREDICTIONS), ("truth", TRUTH), ("valid", VALID)):
        (HERE / folder).mkdir(exist_ok=True)
        for name, data in files.items():
            (HERE / folder / name).write_bytes(data)


if __name__ == "__main__":
    main()
