"""Holding original records out of a release before it is protected, so that an attack can compare
what it learns about the released records with what it learns about records the release never saw
(the control set of Giomi et al. 2023)."""

from __future__ import annotations

import dataclasses

import numpy as np

from sdckit.errors import ConfigError
from sdckit.params import spell
from sdckit.table import Table


def hold_out(table: Table, fraction: float, seed: int) -> tuple[Table, Table]:
    """Split ``table`` into the records to protect and the control records held out: a simple random
    sample without replacement of ``round(fraction · n)`` records (at least one, and at least one
    left), drawn with ``numpy.random.default_rng(seed)``; both parts keep the input's record order
    and every column exactly as read."""
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"{spell('split', '--split')} must be a fraction in (0, 1), got {fraction}")
    n = table.n_records
    held = int(round(fraction * n))
    if n < 2 or held < 1 or held >= n:
        raise ConfigError(
            f"{spell('split', '--split')} {fraction} of {n:,} records leaves no record on one side: "
            "hold out at least one record and keep at least one"
        )
    chosen = np.zeros(n, dtype=bool)
    chosen[np.random.default_rng(seed).choice(n, size=held, replace=False)] = True
    kept = table.data.filter(~chosen)
    control = table.data.filter(chosen)
    return dataclasses.replace(table, data=kept), dataclasses.replace(table, data=control)
