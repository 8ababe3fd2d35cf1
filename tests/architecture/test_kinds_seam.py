"""Task kinds are registrations (issue 19): outside the kind registry (``leaderboard/scoring/kinds/``) and the
kinds' own implementation modules, no service code or template decides anything by a task kind's name.

A new kind is then one module in ``scoring/kinds/`` (docs/adding-a-task-kind.md), not a branch at every door.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from leaderboard.scoring.kinds import all_kinds, get_kind, kind_for_metric
from stats.metrics import METRICS

ROOT = Path(__file__).resolve().parents[2] / "leaderboard"
#: The registry and the kinds' modules, and the implementation of the detection and segmentation kinds
#: (which tells its two kinds apart). Nothing else may name a kind.
ALLOWED = ("scoring/kinds/", "scoring/vision.py")
KIND_NAMES = frozenset(kind.name for kind in all_kinds())


def _kind_literals(node: ast.AST) -> list[str]:
    """The kind names among a node's string constants (a constant, or a tuple / list / set of them)."""
    if isinstance(node, ast.Constant) and node.value in KIND_NAMES:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [name for element in node.elts for name in _kind_literals(element)]
    return []


def kind_branches(source: str) -> list[tuple[int, str]]:
    """Each place that compares something with a kind's name, matches on it, or keys a table by it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            names = [n for side in (node.left, *node.comparators) for n in _kind_literals(side)]
            if names:
                found.append((node.lineno, f"compares with {names[0]!r}"))
        elif isinstance(node, ast.Dict):
            names = [n for key in node.keys if key is not None for n in _kind_literals(key)]
            if names:
                found.append((node.lineno, f"a table keyed by {names[0]!r}"))
        elif isinstance(node, ast.MatchValue):
            names = _kind_literals(node.value)
            if names:
                found.append((node.lineno, f"matches {names[0]!r}"))
    return found


def _allowed(relative: str) -> bool:
    return relative.startswith(ALLOWED) or "/migrations/" in f"/{relative}"


def test_the_checker_finds_the_branches_it_forbids() -> None:
    """The scan would catch each shape the kinds replaced (so the next test can fail)."""
    code = (
        'if task.kind != "tabular": pass\n'
        'ok = kind in ("detection", "segmentation")\n'
        '_HELP = {"tabular": "CSV", "detection": "JSON"}\n'
        'match task.kind:\n    case "segmentation": pass\n'
        'if fmt.kind == "label": pass\n'  # a prediction kind, not a task kind: allowed
    )
    assert [line for line, _ in kind_branches(code)] == [1, 2, 3, 5]


def test_no_service_module_branches_on_a_task_kind() -> None:
    offending = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        if _allowed(relative):
            continue
        offending += [f"{relative}:{line}: {what}" for line, what in kind_branches(path.read_text())]
    assert not offending, "ask the task's kind (leaderboard.scoring.kinds) instead:\n" + "\n".join(offending)


#: ``task.kind == "detection"``, ``t.kind != 'tabular'``, ``kind in ...`` in a template tag.
_TEMPLATE_BRANCH = re.compile(r"\bkind\s*(?:==|!=|\bin\b)\s*[\"']([a-z_]+)[\"']")


def test_no_template_branches_on_a_task_kind() -> None:
    """A kind's own page fragments live in ``web/templates/web/kinds/`` (``TaskKind.format_template``)."""
    offending = []
    for path in sorted(ROOT.rglob("*.html")):
        relative = str(path.relative_to(ROOT))
        if "/kinds/" in relative:
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            offending += [
                f"{relative}:{number}: {m.group(0)}"
                for m in _TEMPLATE_BRANCH.finditer(line)
                if m.group(1) in KIND_NAMES
            ]
    assert not offending, "\n".join(offending)


def test_every_metric_belongs_to_exactly_one_registered_kind() -> None:
    """The metric decides a task's kind: each of the statistics package's metrics is claimed once."""
    for name in METRICS:
        kind = kind_for_metric(name)  # raises when none or several claim it
        assert get_kind(kind.name) is kind
    assert {kind_for_metric(n).name for n in METRICS} == KIND_NAMES  # no kind without a metric


@pytest.mark.parametrize("name", sorted(KIND_NAMES))
def test_a_kind_owns_its_templates_and_states_its_limit(name: str, settings) -> None:  # type: ignore[no-untyped-def]
    from django.template.loader import get_template

    kind = get_kind(name)
    get_template(kind.format_template)  # exists
    assert kind.upload_help and kind.upload_accept and kind.example_note and kind.label
    assert kind.upload_max_bytes() == getattr(settings, kind.upload_setting) > 0


def test_the_apis_enum_of_kinds_is_the_registry() -> None:
    """``Task.kind`` has no model choices (a new kind needs no migration); the API's schema still gives the
    enum, from the registry, in registration order (tabular first, as the model's choices were)."""
    from leaderboard.api.serializers import TaskOutputSerializer
    from leaderboard.challenges.models import Task
    from leaderboard.scoring.kinds import kind_choices

    assert not Task._meta.get_field("kind").choices
    field = TaskOutputSerializer().fields["kind"]
    assert list(field.choices) == [name for name, _ in kind_choices()]
    assert kind_choices()[0][0] == "tabular" and {n for n, _ in kind_choices()} == KIND_NAMES


def test_a_kind_registered_elsewhere_reaches_the_doors_without_their_change(monkeypatch, settings) -> None:  # type: ignore[no-untyped-def]
    """What a new kind's module does (``register(...)``) is all the doors need: the upload bound, the
    submit form's widget and help, the example file and the format page fragment come from the kind."""
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.scoring.kinds import base
    from leaderboard.web.formats import example_download
    from leaderboard.web.forms import SubmissionForm, task_field_name

    class Toy(base.TaskKind):
        name = "toy"
        label = "A toy kind"
        upload_setting = "TOY_UPLOAD_MAX_BYTES"
        upload_help = "A toy file"
        upload_accept = ".toy"
        format_template = "web/kinds/tabular_format.html"
        example_note = "a toy"

        def claims(self, metric):  # type: ignore[no-untyped-def]
            return False

        # the members no door below calls (a real kind implements them)
        parse_truth = validate_predictions = score_files = prediction_format = format_text = None  # type: ignore[assignment]
        api_format = None  # type: ignore[assignment]

        def example_file(self, task):  # type: ignore[no-untyped-def]
            return base.ExampleFile(f"{task.slug}.toy", "text/plain", b"toy\n")

    settings.TOY_UPLOAD_MAX_BYTES = 10**12
    monkeypatch.setitem(base._KINDS, "toy", Toy())
    assert base.upload_limit() == 10**12 and base.upload_limit(["toy", "tabular"]) == 10**12
    task = Task(challenge=Challenge(slug="c"), slug="t", title="T", metric="accuracy", kind="toy", max_runs=2)
    field = SubmissionForm(tasks=[task]).fields[task_field_name(task)]
    assert field.help_text.startswith("A toy file;") and field.widget.attrs["accept"] == ".toy"
    assert field.widget.attrs["data-max-bytes"] == 10**12
    assert example_download(task).data == b"toy\n"
