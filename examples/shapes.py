"""Synthetic microdata of a chosen *shape*, with the configuration of its combined risk, for timing
``sdckit risk combined`` on many kinds of data (``benchmarks/bench_shapes.py``).

A shape is: the number of records; the number of quasi-identifiers and their cardinalities (one
figure for all, or a range ``LOW-HIGH`` spread evenly on a log scale over them); the share of missing
values in every quasi-identifier and flag; the skew of the quasi-identifiers' values (a Zipf exponent:
value k has probability proportional to 1/k^skew, 0 is uniform); the number of yes/no sensitive flags
(prevalences spread on a log scale from 10% down to 0.1%); and the number of known sets the
configuration keeps at epsilon 0.01.

The public probabilities are chosen so that exactly ``known_sets`` sets (the empty set included) have
PK(KS) > epsilon: each attribute gets a weight w (quasi-identifiers lighter than flags, so they come
first in the known sets; drawn from the seed), its probability is epsilon^(w / T) so that a set is kept
iff the sum of its weights is below T, and T is put halfway between the ``known_sets``-th and the next
smallest sum of weights of a set. Quasi-identifiers have sensitivity 0, flags sensitivity 1 ("Yes" 1,
"No" 0). Even-numbered quasi-identifiers are text (``a17``), odd-numbered ones integers (kind
numeric); a first column ``id`` is an identifier. The configuration treats missing values as a
category, as the polars baseline does. Same arguments, same data and configuration; vectorized numpy.

Usage, from the repository root::

    python -m examples.generate --kind shape --records 1000000 --qis 10 --cardinality 2-10000 \\
        --null-rate 0.2 --skew 1.1 --flags 16 --known-sets 111 --output out/shape.csv
    # writes out/shape.csv and its configuration out/shape.yaml
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
import polars as pl

EPSILON = 0.01
ALPHA = 100.0


@dataclass(frozen=True)
class Shape:
    """What :func:`generate_shape` makes; see the module docstring."""

    records: int = 1_000_000
    qis: int = 10
    cardinality: str = "2-64"
    null_rate: float = 0.0
    skew: float = 0.0
    flags: int = 16
    known_sets: int = 111

    def cardinalities(self) -> list[int]:
        """The cardinality of each quasi-identifier."""
        text = str(self.cardinality)
        if "-" in text:
            low, high = (int(part) for part in text.split("-", 1))
        else:
            low = high = int(text)
        if not 2 <= low <= high:
            raise ValueError(f"cardinality must be N or LOW-HIGH with 2 <= LOW <= HIGH, got {text!r}")
        if self.qis == 1:
            return [high]
        spread = np.exp(np.linspace(math.log(low), math.log(high), self.qis))
        return [int(round(value)) for value in spread]

    def label(self) -> str:
        """A short name: ``q10 c2-64 n0.2 s1.1 f16 k111``."""
        return (
            f"q{self.qis} c{self.cardinality} n{self.null_rate:g} s{self.skew:g} f{self.flags} "
            f"k{self.known_sets}"
        )


def _smallest_sums(weights: np.ndarray, count: int) -> list[float]:
    """The ``count`` smallest sums of sets of the (ascending) ``weights`` (the empty set's 0 first),
    by the classic heap walk: from the set ending at index i, add i+1, or replace i by i+1."""
    sums = [0.0]
    if weights.size == 0:
        return sums
    heap = [(float(weights[0]), 0)]
    while heap and len(sums) < count:
        total, last = heapq.heappop(heap)
        sums.append(total)
        if last + 1 < weights.size:
            heapq.heappush(heap, (total + float(weights[last + 1]), last + 1))
            heapq.heappush(heap, (total - float(weights[last]) + float(weights[last + 1]), last + 1))
    return sums


def public_probabilities(weights: np.ndarray, known_sets: int, epsilon: float = EPSILON) -> np.ndarray:
    """Probabilities, one per weight, such that exactly ``known_sets`` sets have a product above
    ``epsilon`` (see the module docstring)."""
    n = weights.size
    if not 1 <= known_sets <= 2**n:
        raise ValueError(f"known sets must be between 1 and 2^{n} = {2**n} for {n} attributes")
    order = np.argsort(weights, kind="stable")
    ascending = weights[order]
    sums = _smallest_sums(ascending, known_sets + 1)
    if len(sums) <= known_sets:  # every set kept
        limit = sums[-1] * 1.5 + 1.0
    else:
        low, high = sums[known_sets - 1], sums[known_sets]
        if not high - low > 1e-9 * max(high, 1.0):
            raise ValueError("two sets weigh the same: choose another seed")
        limit = (low + high) / 2.0
    probabilities = np.array([float(f"{p:.12g}") for p in epsilon ** (weights / limit)])
    kept = _count_known(probabilities, epsilon)
    if kept != known_sets:  # cannot happen unless rounding moved a set across epsilon
        raise ValueError(f"public probabilities keep {kept} known sets, not {known_sets}")
    return probabilities


def _count_known(probabilities: np.ndarray, epsilon: float) -> int:
    """The number of sets whose product of probabilities exceeds ``epsilon`` (the pruning search)."""
    count = 0
    stack: list[tuple[int, float]] = [(0, 1.0)]
    values = [float(p) for p in probabilities]
    while stack:
        start, product = stack.pop()
        count += 1
        for index in range(start, len(values)):
            extended = product * values[index]
            if extended > epsilon:
                stack.append((index + 1, extended))
    return count


def _zipf_codes(rng: np.random.Generator, n: int, cardinality: int, skew: float) -> np.ndarray:
    """``n`` draws of 0..cardinality-1, value k with probability proportional to 1/(k+1)^skew, every
    value drawn at least once when ``n`` allows (so the cardinality is the one asked for; the missing
    values set afterwards may hide a few rare values)."""
    probability = np.arange(1, cardinality + 1, dtype=np.float64) ** -skew
    cumulative = np.cumsum(probability / probability.sum())
    codes = np.searchsorted(cumulative, rng.random(n), side="right").clip(max=cardinality - 1)
    if n >= cardinality:
        codes[rng.choice(n, cardinality, replace=False)] = np.arange(cardinality)
    return codes.astype(np.int32)


def generate_shape(shape: Shape, seed: int = 1) -> tuple[pl.DataFrame, dict]:
    """The data of ``shape`` and its configuration (a dict ready for YAML)."""
    if shape.records < 1 or shape.qis < 0 or shape.flags < 0 or shape.qis + shape.flags == 0:
        raise ValueError("a shape needs records and at least one quasi-identifier or flag")
    if not 0.0 <= shape.null_rate < 1.0 or shape.skew < 0:
        raise ValueError("the null rate must be in [0, 1) and the skew >= 0")
    rng = np.random.default_rng(seed)
    n = shape.records
    columns: dict[str, pl.Series] = {"id": pl.Series(np.arange(1, n + 1, dtype=np.int64))}
    attributes: dict[str, dict] = {"id": {"role": "identifier"}}
    weights = np.concatenate([rng.uniform(1.0, 2.0, shape.qis), rng.uniform(1.6, 3.2, shape.flags)])
    probabilities = public_probabilities(weights, shape.known_sets)
    for j, cardinality in enumerate(shape.cardinalities()):
        name = f"q{j}"
        codes = _zipf_codes(rng, n, cardinality, shape.skew)
        missing = np.flatnonzero(rng.random(n) < shape.null_rate)
        if j % 2 == 0:
            labels = pl.Series(np.char.add("a", np.arange(cardinality).astype(str)))
            column = labels.gather(pl.Series(codes, dtype=pl.UInt32)).scatter(missing, None)
            kind = "categorical"
        else:
            column = pl.Series(codes.astype(np.int64) + 1).scatter(missing, None)
            kind = "numeric"
        columns[name] = column.alias(name)
        attributes[name] = {
            "role": "quasi-identifier",
            "kind": kind,
            "public": float(probabilities[j]),
            "sensitivity": 0,
        }
    prevalences = np.exp(np.linspace(math.log(0.1), math.log(0.001), shape.flags)) if shape.flags else []
    yes_no = pl.Series(["No", "Yes"])
    for j, prevalence in enumerate(prevalences):
        name = f"f{j}"
        flag = (rng.random(n) < prevalence).astype(np.uint32)
        missing = np.flatnonzero(rng.random(n) < shape.null_rate)
        columns[name] = yes_no.gather(pl.Series(flag)).scatter(missing, None).alias(name)
        attributes[name] = {
            "role": "sensitive",
            "kind": "categorical",
            "public": float(probabilities[shape.qis + j]),
            "sensitivity": 1,
            "values": {"Yes": 1, "No": 0},
        }
    config = {
        "attributes": attributes,
        "risk": {"alpha": ALPHA, "epsilon": EPSILON, "missing": "category"},
    }
    return pl.DataFrame(columns), config


def config_text(shape: Shape, seed: int, config: dict) -> str:
    """The configuration as YAML, one attribute a line, with the shape in a comment."""
    lines = [
        f"# Combined risk configuration of the generated shape {shape.label()}, {shape.records:,} records,",
        f"# seed {seed} (examples/shapes.py): {shape.known_sets} known sets at epsilon {EPSILON:g}.",
        "attributes:",
    ]
    for name, spec in config["attributes"].items():
        fields = []
        for key, value in spec.items():
            if key == "values":
                value = "{" + ", ".join(f'"{k}": {v}' for k, v in value.items()) + "}"
            elif isinstance(value, float):
                value = repr(value)
            fields.append(f"{key}: {value}")
        lines.append(f"  {name}: {{{', '.join(fields)}}}")
    risk = config["risk"]
    settings = f"alpha: {risk['alpha']:g}, epsilon: {risk['epsilon']:g}, missing: {risk['missing']}"
    lines.append(f"risk: {{{settings}}}")
    return "\n".join(lines) + "\n"
