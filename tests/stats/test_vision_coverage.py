"""Slow simulation: coverage of 95% intervals for COCO AP and mIoU (figures in docs/stats.md).

``python -m tests.stats.vision_simulation 500`` prints the full table; these tests run a smaller version
and check that each metric's default interval (``Metric.default_interval``) is the best-covering method.
"""

from __future__ import annotations

import pytest

from stats.metrics import get_metric
from tests.stats.vision_simulation import (
    detection_coverage,
    detection_population_ap,
    segmentation_coverage,
    segmentation_population,
)


@pytest.mark.slow
def test_ap_coverage_and_default_interval() -> None:
    pop = detection_population_ap()
    cov = detection_coverage(test_sets=200, n_images=500, resamples=500, truth_values=pop)
    print(f"\nAP coverage, 500 images: {cov}")
    for metric, by_method in cov.items():
        default = get_metric(metric).default_interval
        assert default is not None
        best = min(by_method, key=lambda m: abs(by_method[m] - 0.95))
        assert abs(by_method[default] - 0.95) <= abs(by_method[best] - 0.95) + 0.02
        assert by_method[default] >= 0.88  # still below 0.95: see docs/stats.md
    # AP is biased upward: the percentile interval misses the population value far too often
    assert cov["coco_ap"]["percentile"] < 0.85


@pytest.mark.slow
def test_miou_coverage_and_default_interval() -> None:
    pop = segmentation_population()
    cov = segmentation_coverage(test_sets=600, n_images=100, resamples=1000, truth_value=pop)
    print(f"\nmIoU coverage, 100 images: {cov}")
    default = get_metric("miou").default_interval or "bca"
    best = min(cov, key=lambda m: abs(cov[m] - 0.95))
    assert abs(cov[default] - 0.95) <= abs(cov[best] - 0.95) + 0.02
    assert cov[default] >= 0.90
