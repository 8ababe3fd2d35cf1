"""The boundary between the service and the statistics package: a few adapters import ``stats``.

(Moved here from tests/service/test_hidden_labels_route.py, beside the layers contract; ``stats`` importing
nothing of the service or Django is the ``stats-pure`` contract of tests/architecture/test_layers.py.)
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "leaderboard"


def python_files() -> list[Path]:
    return [p for p in ROOT.rglob("*.py") if "migrations" not in p.parts]


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
