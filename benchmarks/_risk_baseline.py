"""The polars baseline of the combined risk D(r) (Orooji & Knapp, 2019), shared by the benchmarks.

The straightforward implementation: for each kept known set one polars ``pl.len().over(known_set)``
window count, no reuse between sets, and D accumulated in numpy as PK(KS) / count * alpha * C(UKS).
It reads the YAML itself and enumerates the known sets itself, so it is an independent check of
``sdckit.risk.combined``. polars groups nulls together, which is the ``category`` treatment of missing
values.

``benchmarks/bench_risk.py`` times :func:`baseline_risk` in memory; ``benchmarks/bench_shapes.py`` runs
this file as a whole process, the way a user would write it (import polars, read the CSV, compute,
write the scores)::

    python benchmarks/_risk_baseline.py DATA.csv CONFIG.yaml SCORES.parquet
"""

from __future__ import annotations

import math
import sys

import numpy as np
import polars as pl
import yaml


def baseline_attributes(config: dict) -> list[dict]:
    """The non-identifier attributes of the YAML configuration, in file order, with their PK, W(A),
    and W(v) given per value or per range."""
    attributes = []
    for name, spec in (config.get("attributes") or {}).items():
        spec = spec or {}
        if spec.get("role", "insensitive") == "identifier":
            continue
        attributes.append(
            {
                "name": name,
                "public": float(spec.get("public", 0.0)),
                "sensitivity": float(spec.get("sensitivity", 0.0)),
                "values": {str(k): float(v) for k, v in (spec.get("values") or {}).items()},
                "ranges": list(spec.get("ranges") or []),
            }
        )
    return attributes


def baseline_known_sets(probabilities: list[float], epsilon: float) -> list[tuple[int, ...]]:
    """Every set of attribute indices whose product of public probabilities exceeds ``epsilon``
    (the empty set first), by depth-first search that stops growing a set once it falls to
    ``epsilon`` or below: its supersets can only be smaller."""
    kept: list[tuple[int, ...]] = [()]
    stack: list[tuple[tuple[int, ...], float]] = [((), 1.0)]
    while stack:
        known, probability = stack.pop()
        start = known[-1] + 1 if known else 0
        for index in range(start, len(probabilities)):
            product = probability * probabilities[index]
            if product > epsilon:
                kept.append((*known, index))
                stack.append(((*known, index), product))
    return kept


def baseline_consequence_terms(frame: pl.DataFrame, attribute: dict) -> np.ndarray:
    """W(A) * W(r(A)) for every record: a listed value weighs as given, an unlisted one 1, a missing
    one 0."""
    column = pl.col(attribute["name"])
    if attribute["ranges"]:
        weight = pl.lit(1.0)
        for value_range in reversed(attribute["ranges"]):  # the first matching range wins
            inside = pl.lit(True)
            if "min" in value_range:
                inside = inside & (column >= value_range["min"])
            if "max" in value_range:
                inside = inside & (column < value_range["max"])
            weight = pl.when(inside).then(pl.lit(float(value_range["weight"]))).otherwise(weight)
    elif attribute["values"]:
        weight = column.cast(pl.String).replace_strict(
            attribute["values"], default=1.0, return_dtype=pl.Float64
        )
    else:
        weight = pl.lit(1.0)
    weight = pl.when(column.is_null()).then(0.0).otherwise(weight)
    values = frame.select(weight.cast(pl.Float64).alias("w")).to_series().to_numpy()
    return attribute["sensitivity"] * values


def baseline_risk(frame: pl.DataFrame, config: dict, alpha: float, epsilon: float) -> tuple[np.ndarray, int]:
    """D(r) for every record and the number of known sets kept."""
    attributes = baseline_attributes(config)
    known_sets = baseline_known_sets([a["public"] for a in attributes], epsilon)
    n = frame.height
    terms = {a["name"]: baseline_consequence_terms(frame, a) for a in attributes if a["sensitivity"] > 0.0}
    total = np.zeros(n, dtype=np.float64)
    for values in terms.values():
        total += values
    risk = np.zeros(n, dtype=np.float64)
    for known in known_sets:
        names = [attributes[i]["name"] for i in known]
        public = math.prod(attributes[i]["public"] for i in known)
        if names:
            count = frame.select(pl.len().over(names)).to_series().to_numpy().astype(np.float64)
        else:
            count = np.full(n, float(n))
        consequence = total.copy()
        for name in names:
            if name in terms:
                consequence -= terms[name]
        risk += public / count * alpha * consequence
    return risk, len(known_sets)


def main(argv: list[str] | None = None) -> int:
    """The whole baseline process: read the CSV (polars' own type inference) or Parquet file,
    compute D(r) with the configuration's alpha and epsilon, write one ``risk`` column per record
    to Parquet."""
    data, config_path, output = sys.argv[1:] if argv is None else argv
    with open(config_path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    alpha = float(config.get("risk", {}).get("alpha", 100.0))
    epsilon = float(config.get("risk", {}).get("epsilon", 0.01))
    frame = pl.read_parquet(data) if data.endswith(".parquet") else pl.read_csv(data)
    risk, _ = baseline_risk(frame, config, alpha, epsilon)
    pl.DataFrame({"risk": risk}).write_parquet(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
