"""Property-based tests of the one parser (``stats.io``) and of the service's adapter to it.

- Any bytes give either a parsed result or ``InputError`` (``ApplicationError`` through the adapter),
  never another exception and never a hang (each example has a deadline; each test a timeout).
- Well-formed generated files (CSV written by ``csv.writer``, and Parquet) round-trip exactly.
- A reported line lies within the file's lines and a reported column is positive.
"""

from __future__ import annotations

import csv
import io
import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from leaderboard.challenges.models import Task
from leaderboard.core.exceptions import ApplicationError
from leaderboard.scoring import engine
from stats.io import InputError, read_predictions, read_truth

pytestmark = pytest.mark.timeout(120)

ITEMS = ["a", "b", "c"]
LABELS = ["cat", "dog"]
BOUNDED = settings(
    max_examples=250, deadline=1000, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

# Text made of the characters that matter to a CSV parser, so the examples reach past the header.
CSV_TEXT = st.lists(
    st.sampled_from([*'abcdog,;\t"\n\r 01.-eEinfNa\ufeff\u00e9', "id", "prediction", "label", "score"]),
    max_size=60,
).map("".join)
RAW = st.one_of(
    st.binary(max_size=300),
    CSV_TEXT.map(lambda t: t.encode("utf-8")),
    CSV_TEXT.map(lambda t: ("id,prediction\n" + t).encode("utf-8")),
    CSV_TEXT.map(lambda t: ("id,label\n" + t).encode("utf-8")),
    CSV_TEXT.map(lambda t: ("id,score\n" + t).encode("utf-8")),
    st.binary(max_size=200).map(lambda b: b"PAR1" + b),
    st.binary(max_size=200).map(lambda b: b"PK\x03\x04" + b),
)


def physical_lines(data: bytes) -> int:
    text = data.decode("utf-8", errors="replace")
    return len(re.split(r"\r\n|\r|\n", text))


def check_position(exc: InputError, data: bytes) -> None:
    assert exc.file == "f.csv"
    assert str(exc).startswith("f.csv")
    if exc.line is not None:
        assert 1 <= exc.line <= physical_lines(data), (exc.line, physical_lines(data), str(exc))
    if exc.column is not None:
        assert exc.line is not None and exc.column >= 1


@BOUNDED
@given(
    data=RAW, kind=st.sampled_from(["label", "ranked_labels", "score", "value"]), probabilities=st.booleans()
)
@example(data=b'id,prediction\n"a\nb",cat\n', kind="label", probabilities=False)
@example(data=b"id,score\na,1e309\n", kind="score", probabilities=True)
def test_read_predictions_of_any_bytes_parses_or_raises_input_error(
    data: bytes, kind: str, probabilities: bool
) -> None:
    try:
        result = read_predictions(
            data,
            item_ids=ITEMS,
            kind=kind,
            label_set=LABELS,
            probabilities=probabilities,
            name="f.csv",  # type: ignore[arg-type]
        )
    except InputError as exc:
        check_position(exc, data)
    else:
        assert len(result) == len(ITEMS)


@BOUNDED
@given(data=RAW, kind=st.sampled_from(["label", "value"]), group=st.sampled_from([None, "g"]))
def test_read_truth_of_any_bytes_parses_or_raises_input_error(
    data: bytes, kind: str, group: str | None
) -> None:
    try:
        truth = read_truth(data, kind=kind, group_column=group, name="f.csv")  # type: ignore[arg-type]
    except InputError as exc:
        check_position(exc, data)
    else:
        assert len(truth.ids) == len(truth.labels) == len(set(truth.ids.tolist())) > 0
        assert list(truth.ids) == sorted(truth.ids)


def _task(metric: str) -> Task:
    return Task(slug="t", metric=metric, item_ids=ITEMS, labels=LABELS if metric == "accuracy" else [])


@BOUNDED
@given(
    data=st.one_of(RAW, CSV_TEXT.map(lambda t: ("id,label,split\n" + t).encode())),
    metric=st.sampled_from(["accuracy", "mae", "log_loss"]),
    split=st.sampled_from([None, "split"]),
)
@example(data=b'id,split,label\n"a",public,"cat\n"\n\nb,private,\n', metric="accuracy", split="split")
def test_service_adapter_answers_only_with_application_errors(
    data: bytes, metric: str, split: str | None
) -> None:
    try:
        parsed = engine.parse_truth(
            data, name="f.csv", metric=metric, labels=None, group_column=None, split_column=split
        )
    except ApplicationError as exc:
        assert exc.message.startswith("f.csv"), exc.message
        line = exc.extra.get("line")
        if line is not None:
            assert 1 <= line <= physical_lines(data), (line, exc.message)
    else:
        assert len(parsed.ids) == len(parsed.labels)
        if split:
            assert parsed.private is not None and any(parsed.private) and not all(parsed.private)
    try:
        engine.validate_predictions(data, name="f.csv", task=_task(metric))
    except ApplicationError as exc:
        assert exc.message.startswith("f.csv") and exc.status_code == 400


# --- round trips --------------------------------------------------------------------------------------
FIELD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff"),
    min_size=1,
    max_size=12,
).filter(lambda s: s == s.strip() and s != "")
FIELD_WITH_BREAKS = st.one_of(FIELD, st.tuples(FIELD, FIELD).map(lambda p: f'{p[0]}\n"{p[1]}'))


@BOUNDED
@given(
    rows=st.lists(
        st.tuples(FIELD_WITH_BREAKS, st.sampled_from(LABELS)),
        min_size=1,
        max_size=20,
        unique_by=lambda r: r[0],
    ),
    crlf=st.booleans(),
    bom=st.booleans(),
)
def test_well_formed_label_predictions_round_trip(rows: list[tuple[str, str]], crlf: bool, bom: bool) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(["id", "prediction"])
    writer.writerows(rows)
    data = (b"\xef\xbb\xbf" if bom else b"") + out.getvalue().encode()
    ids = [i for i, _ in reversed(rows)]  # the task's order differs from the file's
    got = read_predictions(data, item_ids=ids, kind="label", label_set=LABELS, name="f.csv")
    assert got.tolist() == [label for _, label in reversed(rows)]


@BOUNDED
@given(
    rows=st.lists(
        st.tuples(FIELD, st.floats(allow_nan=False, allow_infinity=False)), min_size=1, max_size=20,
        unique_by=lambda r: r[0],
    ),
    parquet=st.booleans(),
)  # fmt: skip
def test_well_formed_value_predictions_round_trip_in_csv_and_parquet(
    rows: list[tuple[str, float]], parquet: bool
) -> None:
    if parquet:
        buffer = io.BytesIO()
        pq.write_table(pa.table({"id": [i for i, _ in rows], "prediction": [v for _, v in rows]}), buffer)
        data = buffer.getvalue()
    else:
        out = io.StringIO()
        csv.writer(out).writerows([("id", "prediction"), *((i, repr(v)) for i, v in rows)])
        data = out.getvalue().encode()
    got = read_predictions(data, item_ids=[i for i, _ in rows], kind="value", name="f.csv")
    assert got.tolist() == [v for _, v in rows]


@BOUNDED
@given(
    rows=st.lists(
        st.tuples(FIELD_WITH_BREAKS, FIELD, FIELD), min_size=1, max_size=20, unique_by=lambda r: r[0]
    ),
)
def test_well_formed_truth_with_groups_round_trips_in_canonical_order(
    rows: list[tuple[str, str, str]],
) -> None:
    out = io.StringIO()
    csv.writer(out).writerows([("label", "id", "writer"), *((lab, i, g) for i, lab, g in rows)])
    truth = read_truth(out.getvalue().encode(), group_column="writer", name="f.csv")
    expected = sorted(rows)
    assert truth.ids.tolist() == [i for i, _, _ in expected]
    assert truth.labels.tolist() == [lab for _, lab, _ in expected]
    assert truth.groups is not None and truth.groups.tolist() == [g for _, _, g in expected]


@BOUNDED
@given(
    rows=st.lists(
        st.tuples(FIELD, st.sampled_from(LABELS)), min_size=2, max_size=15, unique_by=lambda r: r[0]
    ),
    bad_row=st.integers(min_value=0, max_value=14),
    breaks=st.lists(st.integers(min_value=0, max_value=3), min_size=15, max_size=15),
)
def test_the_line_reported_is_the_line_where_the_bad_row_starts(
    rows: list[tuple[str, str]], bad_row: int, breaks: list[int]
) -> None:
    """Rows whose label spans lines (a quoted field with line breaks, which the parser strips) and blank
    lines between rows: an unknown label on row k is reported on the physical line where row k starts."""
    bad_row %= len(rows)
    lines = ["id,prediction"]
    start_of_bad = 0
    for k, (item, label) in enumerate(rows):
        value = "cow" if k == bad_row else label
        quoted_item = '"' + item.replace('"', '""') + '"'
        text = f'{quoted_item},"{value}' + "\n" * breaks[k] + '"'
        lines.extend([""] * (k % 2))  # blank lines count
        if k == bad_row:
            start_of_bad = "\n".join(lines).count("\n") + 2  # the next physical line
        lines.append(text)
    data = "\n".join(lines).encode() + b"\n"
    with pytest.raises(InputError) as info:
        read_predictions(data, item_ids=[i for i, _ in rows], kind="label", label_set=LABELS, name="f.csv")
    assert (info.value.line, info.value.column) == (start_of_bad, 2), str(info.value)
    assert str(info.value) == f"f.csv:{start_of_bad}:2: unknown label 'cow' (labels: cat, dog)"


# --- the REST API from its OpenAPI schema (schemathesis) --------------------------------------------------
# per operation and role: ~20 operations x 2 roles stay well under two minutes (more for a one-off search:
# LEADERBOARD_FUZZ_EXAMPLES=200)
API_EXAMPLES = int(os.environ.get("LEADERBOARD_FUZZ_EXAMPLES", "15"))
API_SETTINGS = settings(
    max_examples=API_EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def _conformance_checks() -> list[object]:
    """No 500, and every answer as the schema says: its status code is documented, its content type,
    headers and body match the documented response (issue 10 point 8); and every check schemathesis offers
    for one request (issue 21, item 11): a request that the schema calls valid is not refused with a 4xx
    that says the input is wrong (``positive_data_acceptance``), one it calls invalid is not accepted
    (``negative_data_rejection``), a missing required header is refused, an undocumented method answers
    405 with ``Allow``. Not ``ignored_auth``: this test passes the organizer's token as a header, which
    the check's probe keeps, so it reports the valid token as "invalid auth accepted"; wrong and missing
    credentials are refused by every operation in tests/service/test_permissions.py."""
    from schemathesis.checks import (
        allow_header_conformance,
        content_type_conformance,
        missing_required_header,
        negative_data_rejection,
        not_a_server_error,
        positive_data_acceptance,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
        unsupported_method,
    )

    return [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
        negative_data_rejection,
        positive_data_acceptance,
        missing_required_header,
        unsupported_method,
        allow_header_conformance,
    ]


#: Operations where a request the schema calls valid may still be refused with 400, for a rule OpenAPI
#: cannot state, each with the rule (issue 21, item 11; docs/api.md). schemathesis' ``positive_data_acceptance``
#: (ST202) accepts a 400 for these operations only, and every other failure of every check fails the test.
_FILE_CONTENTS = (
    "the uploaded file's contents: a CSV or Parquet file (not an archive) with the task's items and "
    "labels, which no schema states (the schema states the file part, ``format: binary``)"
)
REFUSED_FOR_UNSTATED_RULES: dict[str, str] = {
    "POST /api/auth/register/": "Django's password rules beyond length and digits: a password similar to "
    "the username, or a common one (the schema states the length, the username's characters, not all digits)",
    "GET /api/plan/": "joint rules of the numbers given (e.g. accuracy and gap: p_d >= gap^2), which per-field "
    "bounds cannot state (each field's own bounds are in the schema, open ones as exclusiveMinimum/Maximum)",
    "POST /api/challenges/": "a challenge's end comes after its start (a rule between two fields)",
    "PATCH /api/challenges/{slug}/": "a challenge's end comes after its start (also the stored one)",
    "POST /api/challenges/{slug}/tasks/": _FILE_CONTENTS,
    "PUT /api/challenges/{slug}/tasks/{task}/truth/": _FILE_CONTENTS,
    "POST /api/challenges/{slug}/submissions/": _FILE_CONTENTS + "; a challenge of several tasks takes "
    "'file:<task>' parts",
    "PATCH /api/challenges/{slug}/tasks/{task}/": "mode 'ladder' needs ladder_eta (given or stored): a rule "
    "between two fields",
}


def _config():  # type: ignore[no-untyped-def]
    """schemathesis' configuration: the default expected statuses of ``positive_data_acceptance``, and 400
    for the operations of ``REFUSED_FOR_UNSTATED_RULES``."""
    from schemathesis.config import SchemathesisConfig
    from schemathesis.config._checks import POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES

    accepted = [*POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES, "400"]
    return SchemathesisConfig.from_dict(
        {
            "operations": [
                {
                    "include-name": label,
                    "checks": {"positive_data_acceptance": {"expected-statuses": accepted}},
                }
                for label in REFUSED_FOR_UNSTATED_RULES
            ]
        }
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize("role", ["anonymous", "organizer"])
def test_no_api_operation_answers_500_or_off_schema_to_generated_requests(
    transactional_db, settings, role: str
) -> None:  # type: ignore[no-untyped-def]
    """Every operation of /api/schema/, fed schemathesis' generated requests (valid and invalid), as an
    anonymous visitor and as the organizer of a challenge with a task, a submission and a board: no 500,
    and no answer that the schema does not describe (status code, content type, headers, body).
    Half of the examples use identifiers that exist, so the requests reach past the 404s."""
    import schemathesis
    from django.core.cache import cache
    from rest_framework.authtoken.models import Token

    from leaderboard.config.wsgi import application
    from leaderboard.submissions.services import submission_create
    from tests.service.factories import challenge_with_task, predictions, upload, user

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    organizer = user("fuzz-org")
    challenge, _task, ids, truth = challenge_with_task(organizer, slug="pub", resamples=100, n=30)
    sub = submission_create(
        challenge=challenge, user=user("fuzz-p"), name="p",
        files={"main": [upload("p.csv", predictions(ids, truth, 0.8, 1))]},
    )  # fmt: skip
    key = Token.objects.create(user=organizer).key
    real: dict[str, object] = {"slug": "pub", "task": "main", "id": sub.pk, "pk": sub.pk}
    headers = {"Authorization": f"Token {key}"} if role == "organizer" else {}

    schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=_config())
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20, [o.label for o in operations]
    failures: list[str] = []
    for operation in operations:

        @API_SETTINGS
        @given(case=operation.as_strategy(), use_real=st.booleans())
        def run(case, use_real: bool) -> None:  # type: ignore[no-untyped-def]
            if use_real and case.path_parameters:
                case.path_parameters = {k: real.get(k, v) for k, v in case.path_parameters.items()}
            if role == "organizer":  # a generated DELETE /api/auth/token/ revokes the token
                Token.objects.get_or_create(user=organizer, defaults={"key": key})
            cache.clear()  # throttles would turn most examples into 429s
            response = case.call(headers=headers)
            case.validate_response(response, checks=_conformance_checks())

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # every operation's failure, then one assertion
            failures.append(f"{operation.label}: {type(exc).__name__}: {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
