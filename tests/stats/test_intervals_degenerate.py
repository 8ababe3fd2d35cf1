"""BCa when every replicate lies on one side of the point: finite bounds, not a crash."""

import numpy as np

from stats.intervals import bootstrap_bounds


def test_bca_with_all_replicates_above_the_point_gives_finite_bounds_within_the_replicates() -> None:
    theta = np.linspace(0.5, 0.6, 100)[:, None]
    low, high = bootstrap_bounds(
        theta, point=[0.4], method="bca", jackknife=np.linspace(0.39, 0.41, 20)[:, None]
    )
    assert np.isfinite(low).all() and np.isfinite(high).all()
    assert 0.5 <= low[0] <= high[0] <= 0.6
