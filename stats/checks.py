"""The edges of the statistics: when a number is undefined, and what happens then (issue 11).

Every rule here is stated once and used by the engine, the command line and the service alike:

- **Too few units.** A bootstrap, a jackknife or a test needs at least :data:`MIN_UNITS` resampled units
  (items, or groups for the grouped bootstrap). With fewer, the engine refuses with a message that says
  so in the task's words (never an internal argument name).
- **Few clusters.** With fewer than :data:`FEW_CLUSTERS` groups the cluster bootstrap is unreliable (too
  few distinct resamples, undercoverage); :func:`design_warnings` says so, and the board tests a grouped
  task's entries with the exact cluster sign-flip test (:func:`stats.compare.cluster_sign_flip`). The
  verdicts come from a randomization max-t below ``stats.board.RANDOMIZATION_UNITS`` items or groups,
  and are declined where no exact test can reach the level (:mod:`stats.randomization`).
- **Undefined point value.** A metric that the test set itself leaves undefined (ROC AUC with one class,
  average precision without a positive item, R^2 with a constant truth, Cohen's kappa with one class) is
  refused before anything is computed (:func:`truth_problem`); a point value still undefined for one
  entry is refused by the engine, naming the entry.
- **Undefined replicates.** Class-based metrics are resampled within each true class by default
  (:func:`class_strata`), which keeps every class of the truth in every resample, so ROC AUC, average
  precision, kappa and the macro averages stay defined. Where a replicate is still undefined (a grouped
  task whose groups mix classes, R^2 on a resample of identical values) the rule is
  :data:`UNDEFINED_RULE`: such resamples are left out (the bootstrap conditional on the metric being
  defined), for every entry of a board alike so the comparison stays paired, their number is stated in
  the signature (``undefined_resamples``), and more than :data:`UNDEFINED_LIMIT` of them is refused
  (the command line) or warned about (a service board, which must not fail).

It also holds the package's **argument checks** (:func:`check_level`, :func:`check_count`,
:func:`check_choice`, :func:`check_probabilities`, :func:`check_vector`, :func:`check_replicates`,
:func:`check_jackknife`): every public function of ``stats`` validates its arguments through them, so a
bad argument gets the same message (naming the argument as the caller spelled it) wherever it is passed.
Each returns the value converted (a float, an int, a float64 array).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats._threads import in_blocks

if TYPE_CHECKING:
    from stats.metrics import Metric

__all__ = [
    "FEW_CLUSTERS",
    "MIN_UNITS",
    "UNDEFINED_LIMIT",
    "UNDEFINED_RULE",
    "check_choice",
    "check_count",
    "check_jackknife",
    "check_level",
    "check_probabilities",
    "check_replicates",
    "check_statistics",
    "check_vector",
    "check_weights",
    "class_strata",
    "defined_rows",
    "design_warnings",
    "truth_problem",
    "undefined_warning",
]

#: Fewest resampled units (items, or groups) for an interval or a test.
MIN_UNITS = 2
#: Below this many groups the cluster bootstrap is flagged and the board uses the exact cluster test.
FEW_CLUSTERS = 30
#: Largest share of undefined resamples that is dropped rather than refused.
UNDEFINED_LIMIT = 0.05
#: The rule for undefined replicates, as the signature states it.
UNDEFINED_RULE = "drop-undefined-resamples"


FloatArray = NDArray[np.float64]


# --------------------------------------------------------------------------------------------------
# argument checks


def check_level(value: Any, *, name: str) -> float:
    """A level strictly between 0 and 1 (a confidence, a test's ``alpha``, a power).

    Examples
    --------
    >>> check_level(0.95, name="confidence")
    0.95
    >>> check_level(1, name="alpha")
    Traceback (most recent call last):
    ...
    ValueError: `alpha` must be a number strictly between 0 and 1, got 1.
    """
    message = f"`{name}` must be a number strictly between 0 and 1, got {value!r}."
    if isinstance(value, bool | str | bytes):
        raise ValueError(message)
    try:
        level = float(value)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not 0.0 < level < 1.0:
        raise ValueError(message)
    return level


def check_count(value: Any, *, name: str, minimum: int = 0) -> int:
    """An integer (a Python or numpy integer, not a bool or a float) of at least ``minimum``.

    Used for seeds, numbers of resamples, items and randomizations, counts of a 2 x 2 table, indices.

    Examples
    --------
    >>> check_count(10_000, name="resamples", minimum=1)
    10000
    >>> check_count(2.5, name="resamples", minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: `resamples` must be an integer >= 1, got 2.5.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_choice(value: Any, allowed: Sequence[str], *, name: str) -> str:
    """One of the ``allowed`` names.

    Examples
    --------
    >>> check_choice("student", ("bca", "percentile"), name="method")
    Traceback (most recent call last):
    ...
    ValueError: `method` must be one of bca, percentile, got 'student'.
    """
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"`{name}` must be one of {', '.join(allowed)}, got {value!r}.")
    return value


def check_probabilities(values: ArrayLike, *, name: str = "p_values") -> FloatArray:
    """A one-dimensional array of probabilities in [0, 1] (no NaN)."""
    p = np.asarray(values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"`{name}` must be a one-dimensional array of probabilities.")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"`{name}` must contain only probabilities in [0, 1] (no NaN).")
    return p


def check_vector(
    values: ArrayLike, *, name: str, length: int | None = None, minimum: int = 1, what: str = "values"
) -> FloatArray:
    """A one-dimensional finite array: ``length`` values, or at least ``minimum`` of them.

    ``what`` names the values in the message (``"run scores"``, ``"values, one per entry"``).

    Examples
    --------
    >>> check_vector([0.8, float("nan")], name="runs", minimum=2, what="run scores")
    Traceback (most recent call last):
    ...
    ValueError: `runs` must be a one-dimensional array of at least 2 finite run scores.
    """
    arr = np.asarray(values, dtype=np.float64)
    if length is not None:
        if arr.shape != (length,) or not np.all(np.isfinite(arr)):
            raise ValueError(f"`{name}` must be a finite array of shape ({length},) of {what}.")
    elif arr.ndim != 1 or arr.size < minimum or not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be a one-dimensional array of at least {minimum} finite {what}.")
    return arr


def check_replicates(
    replicates: ArrayLike,
    *,
    name: str = "replicates",
    k: int | None = None,
    one_dimensional: bool = False,
    finite: bool = True,
) -> FloatArray:
    """Bootstrap replicates as a (B, K) array with B >= 2 (one column per entry).

    Parameters
    ----------
    k : int, optional
        The number of columns required (one per entry).
    one_dimensional : bool, default False
        Accept shape (B,) as one column.
    finite : bool, default True
        Refuse NaN and infinite replicates (``False``: a bootstrap interval whose bounds become NaN).
    """
    arr = np.asarray(replicates, dtype=np.float64)
    if one_dimensional and arr.ndim == 1:
        arr = arr[:, None]
    columns = "K" if k is None else str(k)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1 or (k is not None and arr.shape[1] != k):
        shapes = f"(B,) or (B, {columns})" if one_dimensional else f"(B, {columns})"
        raise ValueError(f"`{name}` must have shape {shapes} with B >= 2 resamples, one column per entry.")
    if finite and not _all_finite(arr):
        raise ValueError(f"`{name}` must be finite (no NaN or infinite replicates).")
    return arr


#: Rows per block of :func:`_all_finite` on the board's threads.
_FINITE_ROWS = 512


def _all_finite(arr: NDArray[np.float64]) -> bool:
    """Whether every element of a (B, K) array is finite: the min and max of each block of rows are finite exactly when every
    element of it is (NaN propagates through both); two reductions instead of a boolean copy of the whole
    array (K = 5,000, B = 10,000: 50 MB per call), by blocks of rows on the board's threads
    (``stats._threads.in_blocks``; issue 24, eighth pass: at K = N = B = 10,000 the serial pair took
    0.07-0.2 s before a new entry's board could start)."""
    if arr.size < 1 << 20:
        return bool(np.isfinite(arr.min()) and np.isfinite(arr.max()))

    def block(r0: int) -> bool:
        part = arr[r0 : r0 + _FINITE_ROWS]
        return bool(np.isfinite(part.min()) and np.isfinite(part.max()))

    return all(in_blocks(block, range(0, arr.shape[0], _FINITE_ROWS)))


def check_jackknife(jackknife: ArrayLike, *, k: int, name: str = "jackknife") -> FloatArray:
    """Leave-one-out values as an (n_units, K) array with n_units >= 2 (shape (n,) when K = 1).

    A NaN is an undefined leave-one-out value (leaving out the only positive item of an AUC) and is left
    out of BCa's acceleration (:func:`stats.intervals.bca_constants`); an infinite value is refused.
    """
    arr = np.asarray(jackknife, dtype=np.float64)
    if arr.ndim == 1 and k == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != k or arr.shape[0] < 2:
        raise ValueError(f"`{name}` must have shape (n_units, {k}) with n_units >= 2, one column per entry.")
    if np.any(np.isinf(arr)):
        raise ValueError(f"`{name}` must not hold infinite values (NaN marks an undefined one).")
    return arr


def check_statistics(
    statistics: Sequence[ArrayLike],
    *,
    name: str = "statistics",
    k: int | None = None,
    one_dimensional: bool = False,
    finite: bool = False,
) -> list[FloatArray]:
    """Per-item sufficient statistics of K entries: K arrays of one common shape (N, m) with N >= 1.

    Parameters
    ----------
    k : int, optional
        The number of entries required (otherwise at least one).
    one_dimensional : bool, default False
        Accept shape (N,) as one statistic per item (m = 1).
    finite : bool, default False
        Refuse NaN and infinite statistics.
    """
    arrays = [np.asarray(s, dtype=np.float64) for s in statistics]
    if k is not None and len(arrays) != k:
        raise ValueError(f"`{name}` must hold {k} arrays, one per entry.")
    if not arrays:
        raise ValueError(f"`{name}` must hold at least one entry.")
    if one_dimensional:
        arrays = [a[:, None] if a.ndim == 1 else a for a in arrays]
    shape = arrays[0].shape
    if any(a.ndim != 2 or a.shape != shape for a in arrays) or shape[0] < 1:
        raise ValueError(f"`{name}` must be arrays of one common shape (N, m) with N >= 1, one per entry.")
    if finite and not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError(f"`{name}` must be finite.")
    return arrays


def check_weights(
    weights: ArrayLike, *, n_items: int, name: str = "weights", counts: bool = True, min_rows: int = 1
) -> NDArray[Any]:
    """Resample weights ``W``: shape (B, N), one row per resample and one column per item (or image).

    Parameters
    ----------
    counts : bool, default True
        Require non-negative integer counts (what the bootstrap draws).
    min_rows : int, default 1
        Fewest resamples (0 accepts an empty chunk).

    Examples
    --------
    >>> import numpy as np
    >>> check_weights(np.ones((3, 2), dtype=np.uint8), n_items=5)
    Traceback (most recent call last):
    ...
    ValueError: `weights` must have shape (B, N) with N = 5 items, one column per item.
    """
    w = np.asarray(weights)
    if w.ndim != 2 or w.shape[1] != n_items or w.shape[0] < min_rows:
        raise ValueError(f"`{name}` must have shape (B, N) with N = {n_items} items, one column per item.")
    if counts and (not np.issubdtype(w.dtype, np.integer) or (w.size and w.min() < 0)):
        raise ValueError(f"`{name}` must hold non-negative integer counts.")
    return w


# --------------------------------------------------------------------------------------------------
# the edges


def _metric(metric: str | Metric) -> Metric:
    from stats.metrics import Metric, get_metric

    return metric if isinstance(metric, Metric) else get_metric(metric)


def units_problem(n_units: int, *, grouped: bool) -> str | None:
    """Why ``n_units`` units are too few for an interval (``None`` when they are enough)."""
    if n_units >= MIN_UNITS:
        return None
    what = "groups" if grouped else "items"
    return (
        f"at least {MIN_UNITS} {what} are needed to estimate an interval or test a difference "
        f"(this test set has {n_units}); a single {what[:-1]} gives no estimate of its variability"
    )


def design_warnings(n_units: int, *, grouped: bool) -> list[str]:
    """Warnings about the resampling design (few clusters)."""
    if grouped and n_units < FEW_CLUSTERS:
        return [
            f"only {n_units} groups: the cluster bootstrap needs about {FEW_CLUSTERS} or more (with few "
            "groups it has few distinct resamples and its intervals are too narrow); the paired tests use "
            "the exact cluster sign-flip test and the verdicts a randomization max-t over the groups instead"
        ]
    return []


def truth_problem(
    metric: str | Metric, truth: ArrayLike, *, labels: Sequence[Any] | None = None
) -> str | None:
    """Why ``metric`` is undefined on this test set whatever the predictions (``None`` if it is defined).

    Parameters
    ----------
    metric : str or Metric
    truth : array_like, shape (N,)
        The hidden labels or values.
    labels : sequence, optional
        The label set; for binary-score metrics ``(negative, positive)``.
    """
    m = _metric(metric)
    y = np.asarray(truth)
    if y.shape[0] == 0:
        return "the test set has no item"
    if m.name in ("roc_auc", "average_precision"):
        if labels is not None and len(labels) == 2:
            positive = y.astype(str) == str(labels[1])
        else:
            try:
                positive = y.astype(np.float64) == 1
            except ValueError:
                return None  # not 0/1: the metric itself says what it needs
        n_pos = int(positive.sum())
        if m.name == "roc_auc" and (n_pos == 0 or n_pos == y.shape[0]):
            which = "positive" if n_pos == 0 else "negative"
            return (
                f"ROC AUC is undefined on this test set: it has no {which} item (the truth holds only one "
                "class); an AUC compares positive with negative items"
            )
        if m.name == "average_precision" and n_pos == 0:
            return "average precision is undefined on this test set: it has no positive item"
    if m.name == "cohen_kappa" and np.unique(y.astype(str)).shape[0] < 2:
        return (
            "Cohen's kappa is undefined on this test set: the truth holds only one class (kappa is then 0 "
            "or undefined for every entry)"
        )
    if m.prediction_kind == "value" and m.name == "r2":
        try:
            values = y.astype(np.float64)
        except ValueError:
            return None
        if np.all(values == values[0]):
            return "R^2 is undefined on this test set: every true value is the same (zero total variance)"
    return None


def class_strata(
    metric: str | Metric, truth: ArrayLike, *, groups: ArrayLike | None = None, stratify: bool | None = None
) -> tuple[NDArray[Any] | None, str]:
    """The strata for resampling ``metric`` (each item's true class) and what was decided.

    Parameters
    ----------
    stratify : bool or None
        ``None`` (the default): stratify when the metric is class-based (``Metric.stratify_by_class``)
        and it applies; ``True``: stratify by class whenever it applies; ``False``: never.

    Returns
    -------
    (strata or None, decision)
        ``decision`` is ``"class"`` (stratified by true class), ``"none"``, or
        ``"none (groups mix classes)"`` when a group holds items of several classes, where whole groups
        cannot be resampled within one class.
    """
    m = _metric(metric)
    wanted = m.stratify_by_class if stratify is None else stratify
    if not wanted or m.prediction_kind == "value":
        return None, "none"
    y = np.asarray(truth).astype(str)
    if groups is not None:
        g = np.asarray(groups).astype(str)
        pairs = np.unique(np.stack([g, y]), axis=1)
        if np.unique(pairs[0]).shape[0] != pairs.shape[1]:
            return None, "none (groups mix classes)"
    return y, "class"


def defined_rows(replicates: ArrayLike, *, limit: float = UNDEFINED_LIMIT) -> tuple[NDArray[np.bool_], int]:
    """Rows (resamples) in which every column is defined, and how many are not.

    Parameters
    ----------
    limit : float, default :data:`UNDEFINED_LIMIT`
        Largest share of undefined resamples accepted. A board built from stored scores passes 1.0 (it
        must not fail; it warns instead, see :func:`undefined_warning`).

    Raises
    ------
    ValueError
        When more than ``limit`` of the resamples, or all but one, are undefined.
    """
    theta = np.asarray(replicates, dtype=np.float64)
    keep = np.all(np.isfinite(theta.reshape(theta.shape[0], -1)), axis=1)
    dropped = int((~keep).sum())
    if dropped > limit * theta.shape[0] or keep.sum() < 2:
        raise ValueError(
            f"the metric is undefined in {dropped} of {theta.shape[0]} resamples (more than "
            f"{UNDEFINED_LIMIT:.0%}): too few items of a class, or groups that mix classes; add items or "
            "stratify the resampling by class"
        )
    return keep, dropped


def order_positive(labels: Sequence[Any], positive: Any | None) -> tuple[list[Any], str]:
    """The binary label set as ``[negative, positive]`` and a note saying how the positive was chosen.

    Parameters
    ----------
    labels : sequence of two labels
        The task's label set (any order).
    positive : label or None
        The positive class named by the organizer; ``None`` keeps the second label in sorted order
        (the historical default, stated in the note).

    Raises
    ------
    ValueError
        When the label set does not hold two labels or ``positive`` is not one of them.
    """
    labs = [str(x) for x in labels]
    if len(labs) != 2:
        raise ValueError(f"a binary metric needs exactly two labels, the label set has {len(labs)}")
    if positive is None or str(positive) == "":
        ordered = sorted(labs)
        return (
            ordered,
            f"positive class: '{ordered[1]}' (the second label in sorted order; name it to change)",
        )
    if str(positive) not in labs:
        raise ValueError(f"the positive class '{positive}' is not in the label set ({', '.join(labs)})")
    negative = labs[0] if labs[1] == str(positive) else labs[1]
    return [negative, str(positive)], f"positive class: '{positive}'"


def value_warnings(metric: str | Metric, values: Sequence[float], names: Sequence[str]) -> list[str]:
    """Warnings about point values: an AUC below 0.5 usually means the positive class is the wrong one."""
    m = _metric(metric)
    out = []
    if m.name == "roc_auc":
        for name, value in zip(names, values, strict=True):
            if value < 0.5:
                out.append(
                    f"'{name}': ROC AUC {value:.4f} is below 0.5 (worse than chance): is the positive class "
                    "the right one? Its scores must be the probability of the positive class"
                )
    return out


def undefined_warning(undefined: int, resamples: int) -> list[str]:
    """A warning when more than :data:`UNDEFINED_LIMIT` of a board's resamples were dropped."""
    if resamples and undefined > UNDEFINED_LIMIT * resamples:
        return [
            f"the metric is undefined in {undefined} of {resamples} resamples, which were left out: the "
            "intervals hold conditionally on the metric being defined; stratify by class or add items"
        ]
    return []
