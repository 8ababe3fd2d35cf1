"""Tests of stats.cddiagram: valid SVG, names kept as text, identical bytes in any process."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from stats.cddiagram import cd_diagram_svg
from stats.crosstask import compare_across_tasks

NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf", "R&D <beta>"]
SCORES = np.array(
    [
        [0.763, 0.768, 0.771, 0.798, 0.70],
        [0.599, 0.591, 0.590, 0.569, 0.52],
        [0.954, 0.971, 0.968, 0.967, 0.90],
        [0.628, 0.661, 0.654, 0.657, 0.61],
        [0.882, 0.888, 0.886, 0.898, 0.85],
        [0.936, 0.931, 0.916, 0.931, 0.93],
    ]
)

SCRIPT = """
import sys
import numpy as np
from stats.cddiagram import cd_diagram_svg
from stats.crosstask import compare_across_tasks
scores = np.array({scores})
names = {names!r}
sys.stdout.buffer.write(cd_diagram_svg(compare_across_tasks(scores, names=names, alpha=0.1), title="t"))
"""


def _svg() -> bytes:
    return cd_diagram_svg(compare_across_tasks(SCORES, names=NAMES, alpha=0.1), title="t")


def test_svg_parses_and_keeps_names_as_text() -> None:
    svg = _svg()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    texts = "".join(el.text or "" for el in root.iter() if el.tag.endswith("text"))
    for name in NAMES:
        assert name in texts
    assert "CD = " in texts


def test_same_input_same_bytes_twice_and_in_a_fresh_process() -> None:
    first = _svg()
    assert _svg() == first
    code = SCRIPT.format(scores=SCORES.tolist(), names=NAMES)
    root = Path(__file__).resolve().parents[2]
    fresh = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, check=True).stdout
    assert fresh == first


def test_wilcoxon_diagram_has_no_cd_bar() -> None:
    res = compare_across_tasks(SCORES, names=NAMES, posthoc="wilcoxon-holm")
    assert b"CD = " not in cd_diagram_svg(res)


def test_validation() -> None:
    with pytest.raises(TypeError, match="`result` must be a CrossTaskResult"):
        cd_diagram_svg("nope")  # type: ignore[arg-type]
