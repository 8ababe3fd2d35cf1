"""The fan-out's prepared state is stored without pickle (leaderboard.scoring.state_codec): what goes in
comes back equal, and what the codec does not know is refused when written."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import sparse

from leaderboard.scoring import engine, state_codec


def test_a_tabular_plan_comes_back_equal_array_by_array() -> None:
    plan = engine.TabularPlan(
        split="public",
        metric="accuracy",
        truth=np.array(["cat", "dog", "cat"]),
        runs=[np.array(["cat", "cat", "cat"]), np.array(["dog", "dog", "cat"])],
        labels=["cat", "dog"],
        groups=None,
        strata=np.array([0, 1, 0]),
        per_run=[np.array([[1.0], [0.0], [1.0]]), np.array([[0.0], [1.0], [1.0]])],
    )
    state = {"kind": "tabular", "splits": [{"plan": plan, "values": [2 / 3, float("nan")]}], "b": (1, "x")}
    back = state_codec.loads(state_codec.dumps(state))
    got = back["splits"][0]["plan"]
    assert isinstance(got, engine.TabularPlan) and got.split == "public" and got.labels == ["cat", "dog"]
    for name in ("truth", "strata"):
        assert np.array_equal(getattr(got, name), getattr(plan, name))
    assert all(np.array_equal(a, b) for a, b in zip(got.runs, plan.runs, strict=True))
    assert all(
        np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got.per_run, plan.per_run, strict=True)
    )
    assert back["splits"][0]["values"][0] == 2 / 3 and np.isnan(back["splits"][0]["values"][1])
    assert back["b"] == (1, "x")


def test_a_sparse_matrix_and_string_object_arrays_round_trip() -> None:
    m = sparse.random(20, 30, density=0.2, format="csr", random_state=0)
    back = state_codec.loads(state_codec.dumps({"m": m, "s": np.array(["a", "bb"], dtype=object)}))
    assert (back["m"] != m).nnz == 0 and back["s"].tolist() == ["a", "bb"]


def test_what_the_codec_does_not_know_is_refused_when_written() -> None:
    @dataclasses.dataclass
    class Unknown:
        x: int

    with pytest.raises(TypeError, match="not registered"):
        state_codec.dumps({"u": Unknown(1)})
    with pytest.raises(TypeError, match="object array"):
        state_codec.dumps({"o": np.array([1, "a"], dtype=object)})
    with pytest.raises(TypeError, match="cannot be stored"):
        state_codec.dumps({"f": lambda: 0})
