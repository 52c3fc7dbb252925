"""The combining rules analysts apply to the ``M`` implicates of synthetic data (Raghunathan, Reiter &
Rubin 2003; Reiter 2003): :func:`combine`, re-exported by :mod:`sdckit.anonymize.synthesis`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sdckit.errors import ConfigError


@dataclass(frozen=True)
class Combined:
    """An estimate combined over ``m`` implicates: ``estimate`` q̄ (the mean of the estimates),
    ``variance`` T, ``df`` the degrees of freedom of its t reference distribution, ``between`` b (the
    variance of the estimates across implicates, ddof 1), ``within`` ū (the mean of the variances),
    ``kind`` full or partial, ``adjusted``: the fully synthetic T came out ≤ 0 and was replaced by ū."""

    estimate: float
    variance: float
    df: float
    between: float
    within: float
    m: int
    kind: str
    adjusted: bool = False

    @property
    def standard_error(self) -> float:
        return math.sqrt(self.variance)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The ``level`` confidence interval ``q̄ ± t_{df, (1+level)/2} √T``."""
        from scipy.stats import t

        if not 0 < level < 1:
            raise ConfigError(f"level must be in (0, 1), got {level!r}")
        quantile = t.ppf((1 + level) / 2, self.df) if math.isfinite(self.df) else _normal_quantile(level)
        half = float(quantile) * self.standard_error
        return self.estimate - half, self.estimate + half


def _normal_quantile(level: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf((1 + level) / 2))


def combine(
    estimates: Sequence[float], variances: Sequence[float], kind: Literal["full", "partial"] = "full"
) -> Combined:
    """Combine an estimate ``q_l`` and its estimated variance ``u_l`` computed on each of the ``M``
    implicates.

    ``q̄ = Σ q_l / M``, ``b = Σ (q_l − q̄)² / (M − 1)``, ``ū = Σ u_l / M``, and

    * ``kind="full"`` (fully synthetic; Raghunathan, Reiter & Rubin 2003):
      ``T_f = (1 + 1/M) b − ū`` with ``ν_f = (M − 1) (1 − M ū / ((M + 1) b))²``. When ``T_f ≤ 0``
      (possible with few implicates) ``T_f`` is replaced by ``ū`` (Reiter 2002's ``(n_syn/n) ū`` with
      ``n_syn = n``) and ``ν = M − 1``; ``adjusted`` says so.
    * ``kind="partial"`` (partially synthetic; Reiter 2003): ``T_p = b/M + ū`` with
      ``ν_p = (M − 1) (1 + M ū / b)²`` (infinite when ``b = 0``).

    Needs at least two implicates (``b`` is a variance across them)."""
    q = np.asarray(estimates, dtype=np.float64).ravel()
    u = np.asarray(variances, dtype=np.float64).ravel()
    if kind not in ("full", "partial"):
        raise ConfigError(f"kind must be full or partial, got {kind!r}")
    if len(q) != len(u):
        raise ConfigError(
            f"combine needs one variance per estimate, got {len(q)} estimates, {len(u)} variances"
        )
    if len(q) < 2:
        raise ConfigError(f"the combining rules need at least 2 implicates, got {len(q)}")
    if not (np.isfinite(q).all() and np.isfinite(u).all()) or (u < 0).any():
        raise ConfigError("combine needs finite estimates and finite variances at least 0")
    m = len(q)
    mean = float(q.mean())
    between = float(q.var(ddof=1))
    within = float(u.mean())
    adjusted = False
    if kind == "full":
        variance = (1 + 1 / m) * between - within
        if variance <= 0:
            variance, df, adjusted = within, float(m - 1), True
        else:
            df = (m - 1) * (1 - m * within / ((m + 1) * between)) ** 2
    else:
        variance = between / m + within
        df = math.inf if between == 0 else (m - 1) * (1 + m * within / between) ** 2
    return Combined(mean, float(variance), float(df), between, within, m, kind, adjusted)
