"""Generated enterprise microdata for the table benchmarks (issue 15): 1,000,000 records of firms with a
district (40 districts in 8 regions), an economic activity (30 classes in 6 sections), a size class
(10 classes) and a skewed turnover, plus the hierarchies of district and activity. The same seed gives
the same data in every part."""

from __future__ import annotations

import numpy as np
import polars as pl

from sdckit.hierarchy import Hierarchy
from sdckit.table import Schema, Table

DISTRICTS = [f"D{d:02d}" for d in range(40)]
ACTIVITIES = [f"A{a:02d}" for a in range(30)]
SIZES = [f"S{s}" for s in range(10)]


def hierarchies() -> dict[str, Hierarchy]:
    district = pl.DataFrame(
        {"district": DISTRICTS, "region": [f"R{d // 5}" for d in range(40)], "top": ["*"] * 40}
    )
    activity = pl.DataFrame(
        {"activity": ACTIVITIES, "section": [f"SEC{a // 5}" for a in range(30)], "top": ["*"] * 30}
    )
    return {
        "district": Hierarchy.from_frame("district", district),
        "activity": Hierarchy.from_frame("activity", activity),
    }


def enterprises(n: int = 1_000_000, seed: int = 15) -> Table:
    """``n`` records: district and activity (Zipf-like skew, so that some cells are small), size
    class, a firm id (about 3 records per firm) and a log-normal turnover that grows with size."""
    rng = np.random.default_rng(seed)
    district = rng.choice(40, n, p=_zipf(40, 0.8, rng))
    activity = rng.choice(30, n, p=_zipf(30, 1.1, rng))
    size = np.minimum(rng.geometric(0.45, n) - 1, 9)
    turnover = np.round(rng.lognormal(3.0 + 0.6 * size, 1.2), 2)
    frame = pl.DataFrame(
        {
            "district": np.array(DISTRICTS)[district],
            "activity": np.array(ACTIVITIES)[activity],
            "size": np.array(SIZES)[size],
            "firm": rng.integers(0, n // 3, n),
            "turnover": turnover,
        }
    )
    return Table(data=frame, schema=Schema.infer(frame))


def two_way(n: int = 1_000_000, seed: int = 15) -> Table:
    """``n`` records crossing 50 row classes with 50 column classes: Zipf-skewed classes (s = 1.4, so
    the rarest cells hold a handful of records) and a heavy-tailed turnover (log-normal, σ = 1.6), so that
    the p%-rule flags cells a few large units dominate."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(50, n, p=_zipf(50, 1.4, rng))
    cols = rng.choice(50, n, p=_zipf(50, 1.4, rng))
    frame = pl.DataFrame(
        {
            "row": np.char.add("r", rows.astype(str)),
            "col": np.char.add("c", cols.astype(str)),
            "turnover": np.round(rng.lognormal(4.0, 1.6, n), 2),
        }
    )
    return Table(data=frame, schema=Schema.infer(frame))


def _zipf(k: int, s: float, rng: np.random.Generator) -> np.ndarray:
    weights = 1.0 / np.arange(1, k + 1) ** s
    weights = weights[rng.permutation(k)]
    return weights / weights.sum()
