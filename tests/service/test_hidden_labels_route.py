"""The one route to hidden labels: TaskTruth is read only by scoring.selectors.task_truth_get, which only
scoring calls. A new reader anywhere else fails this test."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "leaderboard"

# Files allowed to name TaskTruth: the model, the writes of hidden labels, and the one reader.
ALLOWED_TASKTRUTH = {"challenges/models.py", "challenges/services.py", "scoring/selectors.py"}
ALLOWED_SELECTOR_CALLERS = {"scoring/selectors.py", "scoring/services.py", "scoring/breakdown.py"}


def python_files() -> list[Path]:
    return [p for p in ROOT.rglob("*.py") if "migrations" not in p.parts]


def names_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name.split(".")[-1])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return found


def test_only_the_selector_and_the_label_writers_touch_tasktruth() -> None:
    readers = {str(p.relative_to(ROOT)) for p in python_files() if "TaskTruth" in names_in(p)}
    assert readers <= ALLOWED_TASKTRUTH, (
        f"TaskTruth used outside the allowed files: {readers - ALLOWED_TASKTRUTH}"
    )


def test_only_scoring_calls_the_hidden_label_selector() -> None:
    callers = {str(p.relative_to(ROOT)) for p in python_files() if "task_truth_get" in names_in(p)}
    assert callers <= ALLOWED_SELECTOR_CALLERS, callers - ALLOWED_SELECTOR_CALLERS
    assert "scoring/services.py" in callers


def test_the_reverse_relation_task_truth_is_not_used_outside_the_allowed_files() -> None:
    offenders = []
    for p in python_files():
        rel = str(p.relative_to(ROOT))
        if rel in ALLOWED_TASKTRUTH:
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "truth"
                and isinstance(node.value, ast.Name)
                and node.value.id == "task"
            ):
                offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, offenders


def test_only_the_engine_adapter_imports_the_statistics_package() -> None:
    """The adapters to stats/: leaderboard/scoring/engine.py and its vision half scoring/vision.py for files
    and scoring (where the hidden labels meet predictions), the task kinds that register them
    (scoring/kinds/, one module per kind: a new kind's adapter goes there), rankings/board.py for the board
    built from stored scores."""
    importers = set()
    for p in python_files():
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "stats") or (
                isinstance(node, ast.Import) and any(a.name.split(".")[0] == "stats" for a in node.names)
            ):
                importers.add(str(p.relative_to(ROOT)))
    kinds = {i for i in importers if i.startswith("scoring/kinds/")}
    assert importers - kinds == {"scoring/engine.py", "scoring/vision.py", "rankings/board.py"}
    assert "scoring/kinds/base.py" in kinds  # the registry asks the metric registry which kind claims it
