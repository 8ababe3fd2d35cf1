"""The signature every reported number carries, so that it can be recomputed.

Modelled on sacreBLEU's signatures: a number without its metric, method, resamples, seed and confidence
level cannot be reproduced, so every result dataclass of this package carries one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from stats import __version__


@dataclass(frozen=True)
class Signature:
    """How a number was computed.

    Attributes
    ----------
    metric : str
        Registry name of the metric (``"accuracy"``, ``"macro_f1"``...).
    method : str
        Interval or test method (``"bca"``, ``"percentile"``, ``"wilson"``, ``"mcnemar"``...).
    resamples : int
        Number of bootstrap resamples or randomization draws (0 where none were used).
    seed : int | None
        Seed of the resample-weight matrix or of the randomization draws.
    confidence : float | None
        Confidence level of intervals (``None`` for a point value or a test).
    version : str
        Version of this package.
    extra : tuple[tuple[str, str], ...]
        Further settings (correction, grouping...), as sorted key/value pairs so the dataclass stays
        hashable and frozen.
    """

    metric: str
    method: str
    resamples: int
    seed: int | None
    confidence: float | None
    version: str = __version__
    extra: tuple[tuple[str, str], ...] = ()

    def with_extra(self, **items: object) -> Signature:
        """Return a copy with more ``extra`` settings (values are stored as strings)."""
        merged = dict(self.extra)
        merged.update({k: str(v) for k, v in items.items()})
        return Signature(
            metric=self.metric,
            method=self.method,
            resamples=self.resamples,
            seed=self.seed,
            confidence=self.confidence,
            version=self.version,
            extra=tuple(sorted(merged.items())),
        )

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        data = asdict(self)
        data["extra"] = dict(self.extra)
        return data

    def __str__(self) -> str:
        parts = [
            f"metric:{self.metric}",
            f"method:{self.method}",
            f"resamples:{self.resamples}",
            f"seed:{self.seed}",
        ]
        if self.confidence is not None:
            parts.append(f"confidence:{self.confidence:g}")
        parts.extend(f"{k}:{v}" for k, v in self.extra)
        parts.append(f"version:{self.version}")
        return "|".join(parts)
