"""Re-identification risk of a microdata file: the figures of sdcMicro's ``measure_risk`` and ARX's
risk analysis, from the quasi-identifiers (the *key*).

Frequencies (sdcMicro ``freqCalc``)
    ``f_k`` is the number of sample records sharing a record's key, ``F_k`` the sum of their sampling
    weights (the estimated population frequency; ``F_k = f_k`` without weights). A missing key value
    is a wildcard that matches every value (sdcMicro's convention, ``missing: wildcard``) or a value
    of its own (``missing: category``). Counting is :func:`sdckit.frequency.wildcard_pattern_sizes`.
    ``alpha`` (sdcMicro's ``freqCalc(alpha)``, wildcard only) weighs a match through another pattern
    with a missing value by ``alpha`` (:func:`sdckit.frequency.alpha_wildcard_pattern_sizes`, which
    states the rule and its one deviation); ``f_k`` is then fractional. Deviation: sdcMicro's
    ``indivRisk`` (weighted) gives ``r = 0`` to a fractional ``f_k`` in (1, 2) and its f >= 3 formula
    to every ``f_k`` above 2; here a fractional ``f_k`` below 3 has ``r = 1/f_k`` and one of 3 or more
    the f >= 3 formula.

Individual risk (Benedetti & Franconi 1998; Capobianchi, Polettini & Lucarelli 2001; sdcMicro
``indivRisk``)
    ``r = E[1/F | f]`` under a negative binomial posterior with ``p = f/F``::

        f = 1:  r = p/(1-p) log(1/p)
        f = 2:  r = p/(1-p) - (p/(1-p))^2 log(1/p)
        f >= 3, approx: r = p / (f - (1-p))
        f >= 3, exact:  r = sum_{h>=f} (1/h) C(h-1, f-1) p^f (1-p)^(h-f)
        p = 1 (F = f) or no weights: r = 1/f;   finally r *= qual

    The exact series equals ``p^f / f * 2F1(f, f; f+1; 1-p)`` (Gauss's hypergeometric function, one
    vectorized call); sdcMicro's closed form (its alternating sum of products B_i) is
    :func:`exact_risk_closed_form`, and the tests check both against the series summed term by
    term. Deviation: sdcMicro computes nonsense for ``F < f`` (weights below 1, p > 1); here p is
    clipped to 1 (r = 1/f) with a warning, and ``F = 0`` is an error. Without weights ``qual`` is not
    applied (sdcMicro's ``survey = FALSE``).

Global risk (sdcMicro ``measure_risk``)
    ``ER = sum_i r_i`` (expected re-identifications), ``global_risk = ER / n`` and in percent.
    Household risk: with an attribute of role ``household``, every member of a household gets
    ``r_h = 1 - prod_{i in h} (1 - r_i)``; ``hier_risk_ER = sum_i r_h(i)`` over records, as sdcMicro.
    Global threshold (sdcMicro ``measure_risk``'s ``max_global_risk`` and ``global_threshold``,
    its ``measure_threshold``, mu-Argus manual 4.1 section 2.3.4.1): with the risks sorted in
    decreasing order, the largest risk value t, taken among the values the records hold, such that
    ``sum_i min(r_i, t) < max_global_risk * n`` (the records above t, brought down to t, leave the
    global risk below the maximum); summed in sdcMicro's order. None (sdcMicro's NA) when the file's
    global risk is already below the maximum; 0 when no record value works. A record is above the
    threshold when ``r > t``.

k-anonymity
    Records with ``f_k < k`` for k = 2, 3, 5 (count and percent), as sdcMicro's print method.

l-diversity (sdcMicro ``ldiversity``: distinct, entropy and recursive)
    Per record, over the records sharing its key (with wildcard nulls: the records that match it):
    the number of distinct values of a sensitive attribute, exp of the entropy of their shares, and
    the recursive (c, l)-diversity with ``l_recursive_c`` (:func:`sdckit.risk._risk_estimators.
    l_diversities`). A missing sensitive value counts as one more value when some other value is
    present (sdcMicro's C++ rule), in distinct and entropy; the multi-attribute figures are not
    computed. Deviation: sdcMicro matches a key with nulls one-sidedly
    (and reads the sensitive value of the wrong record there); here the same symmetric matching as
    ``f_k`` is used.

Prosecutor, journalist and marketer risk (El Emam 2013, as ARX's ``RiskModelSampleSummary``)
    Prosecutor: per record ``1/f_k``; *average* = number of classes / n (= mean of 1/f_k);
    *highest* = 1 / smallest f_k; *records at risk* = share of records with 1/f_k > threshold
    (default 0.2, ARX's default threshold of the overview). Journalist: the same with the population
    class sizes, here ``max(F_k, f_k)`` from the weights (without weights the population is the
    sample and it equals the prosecutor risk); its average is ARX's ``max(classes / sum of class
    sizes, mean of f_k / F_k per record)``. Marketer: the expected share of records re-identified,
    ``(1/n) sum_records 1/F_k`` (= classes / n without weights). The class counts are written as
    sums over records (classes = sum_i 1/f_i), which is exact for disjoint classes and the natural
    extension for wildcard nulls.

Population uniqueness (ARX ``RiskModelPopulationUniqueness`` and its models)
    Given a sampling fraction ``f`` or a population size ``N`` (``f = n/N``), from the histogram of
    class sizes (``c_j`` classes of size j, ``u`` classes, nulls as a value of their own):

    * Zayatz (1991), ARX ``ModelZayatz``: ``P = (c_1/u) h(1;N,1,n) / sum_j (c_j/u) h(1;N,j,n)``
      with ``h`` the hypergeometric probability of one success; uniques ``= c_1 P / f``. N is
      rounded to a whole number (ARX truncates it).
    * Pitman (Hoshino 2001), ARX ``ModelPitman``: maximum-likelihood (theta, alpha) of the Pitman
      sampling formula by Newton-Raphson from ARX's initial guess (theta >= 0 kept), the likelihood
      equations in ARX's closed form with digamma and trigamma; uniques
      ``= Gamma(theta+1) / Gamma(theta+alpha) N^alpha`` when in [0, N]. Deviation: a root is taken
      only inside the parameter space (alpha < 1, theta + i alpha > 0 for i < u, where the
      likelihood is defined); the closed form has roots outside, which ARX takes (on Adult, 7
      population uniques where the likelihood's maximum gives 4842).
    * SNB (Chen & Keller-McNulty 1998), ARX ``ModelSNB``: population class sizes 1 + NegBin(alpha,
      beta), the number of classes K estimated by Haas et al.'s (1995) Shlosser-type estimator;
      (alpha, beta) solve E[c_1] = c_1, E[c_2] = c_2 by Newton-Raphson from (1, 1); uniques
      ``= K beta^alpha``. Deviations from ARX's code, which has two slips: its Shlosser denominator
      subtracts 1 per class size instead of ``(1-f)^j c_j``, and its second equation multiplies by
      ``(1-d)^(alpha+2)`` where its own derivatives (and the model) divide; here both follow the
      papers. The Jacobian is taken by central differences.
    * Dankar et al. (2012) decision rule, ARX: f <= 0.1: Pitman if it gives an estimate, else
      Zayatz; f > 0.1: the smaller of Zayatz and SNB (Zayatz if SNB gives none).

    Newton-Raphson as ARX 3.9.2's solver: accuracy 1e-6 on both equations, up to 1000 iterations per
    try and 10000 in all, after the first try one from each of ARX's 16 prepared start values (0,
    0.33, 0.66, 0.99 squared). Deviations: where ARX then gives up, sdckit goes on from random points
    in [0, start) (a fixed seed), and it has no time limits (ARX's 100 ms a try and 1 s in all make
    its result depend on the machine's load). No estimate: null. With f = 1 the population is the
    sample and every estimator gives the sample uniques.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Self

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.errors import ConfigError, InputError, SdcWarning
from sdckit.frequency import (
    alpha_wildcard_pattern_sizes,
    check_weights,
    coverage_group_sizes,
    dense_keys,
    encode,
    extend_keys,
    first_of_groups,
    group_records,
    group_sizes,
    grouped_quantiles,
    initial_keys,
    wildcard_pattern_sizes,
)
from sdckit.hierarchy import Hierarchy
from sdckit.measures import Context, register_measure
from sdckit.params import Finite, MethodParams, Whole
from sdckit.risk._reidentification_report import report
from sdckit.risk._risk_estimators import (
    PopulationUniqueness,
    exact_risk_closed_form,
    household_risk,
    individual_risk,
    l_diversities_of_many,
    population_uniqueness,
)
from sdckit.table import Role, Table

__all__ = [
    "PopulationUniqueness",
    "ReidentificationParams",
    "ReidentificationRisk",
    "exact_risk_closed_form",
    "global_threshold",
    "household_risk",
    "individual_risk",
    "population_uniqueness",
    "reidentification_risk",
]

K_ANONYMITY = (2, 3, 5)
QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)


# The measure ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReidentificationRisk:
    """Re-identification risk of every record and of the file (sdcMicro's ``freqCalc``,
    ``indivRisk``, ``measure_risk`` and ``ldiversity``; ARX's prosecutor, journalist, marketer and
    population-uniqueness risks). See the module docstring for the formulas and deviations.

    ``fk``, ``Fk``, ``risk`` and ``household_risk`` (None without a household attribute) are per
    record in input order; ``population_class_sizes`` are ``max(F_k, f_k)``; ``l_diversity`` maps
    each sensitive attribute to the distinct l-diversity of every record, ``entropy_l_diversity`` and
    ``recursive_l_diversity`` to its entropy and recursive (``l_recursive_c``) l-diversity.
    """

    keys: tuple[str, ...]
    fk: np.ndarray
    Fk: np.ndarray
    risk: np.ndarray
    household_risk: np.ndarray | None
    household: str | None
    n_households: int
    weighted: bool
    missing: str
    method: str
    qual: float
    threshold: float
    top: int
    clipped: int
    key_values: pl.DataFrame
    l_diversity: dict[str, np.ndarray]
    population: PopulationUniqueness | None
    # Each record's key pattern (nulls as values), and each pattern's risk and number of records.
    pattern_of: np.ndarray
    pattern_risk: np.ndarray
    pattern_records: np.ndarray
    #: Records per row when each row stands for several identical records (the patterns of a data
    #: set, :mod:`sdckit.scale`), and the number of the first record of each; None: one record a row.
    multiplicity: np.ndarray | None = None
    first_record: np.ndarray | None = None
    entropy_l_diversity: dict[str, np.ndarray] = field(default_factory=dict)
    recursive_l_diversity: dict[str, np.ndarray] = field(default_factory=dict)
    l_recursive_c: float = 2.0
    #: freqCalc's alpha when given (None: the plain wildcard count, not reported).
    alpha: float | None = None
    #: measure_risk's max_global_risk when given, and the threshold it gives (None: not asked for,
    #: or sdcMicro's NA: the file is within it).
    max_global_risk: float | None = None
    global_threshold: float | None = None

    @property
    def n_records(self) -> int:
        return len(self.fk) if self.multiplicity is None else int(self.multiplicity.sum())

    def _count(self, flags: np.ndarray) -> int:
        return (
            int(np.count_nonzero(flags)) if self.multiplicity is None else int(self.multiplicity[flags].sum())
        )

    def _sum(self, values: np.ndarray) -> float:
        return float(values.sum()) if self.multiplicity is None else float(values @ self.multiplicity)

    def _diversity_figures(self, name: str) -> dict[str, Any]:
        """Distinct l-diversity's quantiles and records with l = 1; entropy and recursive l-diversity's
        quantiles (sdcMicro's ``ldiversity`` columns), when computed."""
        values = self.l_diversity[name]
        figures: dict[str, Any] = {
            **_quantiles(np.arange(values.max() + 1), np.bincount(values, weights=self.multiplicity)),
            "records_with_l_1": self._count(values <= 1),
        }
        entropy = self.entropy_l_diversity.get(name)
        if entropy is not None:
            # a hash count of the few distinct values, not a sort of every record's
            weights = np.ones(len(entropy)) if self.multiplicity is None else self.multiplicity
            levels = (
                pl.DataFrame({"value": entropy, "weight": weights})
                .group_by("value")
                .agg(pl.col("weight").sum())
                .sort("value")
            )
            figures["entropy"] = _quantiles(
                levels.get_column("value").to_numpy(), levels.get_column("weight").to_numpy()
            )
        recursive = self.recursive_l_diversity.get(name)
        if recursive is not None:
            figures["recursive"] = {
                **_quantiles(
                    np.arange(recursive.max() + 1), np.bincount(recursive, weights=self.multiplicity)
                ),
                "c": self.l_recursive_c,
            }
        return figures

    def records(self) -> pl.DataFrame:
        """One row per record, input order (one per pattern when rows stand for several records): fk,
        Fk, individual_risk, household_risk, the l-diversities of the sensitive attributes, and
        above_global_threshold when a maximum global risk is given."""
        household = (
            pl.Series("household_risk", self.household_risk, dtype=pl.Float64)
            if self.household_risk is not None
            else pl.Series("household_risk", [None] * len(self.risk), dtype=pl.Float64)
        )
        diversity = [
            pl.Series(f"{kind}_l_diversity_{name}", values)
            for name in self.l_diversity
            for kind, values in (
                ("distinct", self.l_diversity[name]),
                ("entropy", self.entropy_l_diversity.get(name)),
                ("recursive", self.recursive_l_diversity.get(name)),
            )
            if values is not None
        ]
        above = []
        if self.max_global_risk is not None:
            above = [pl.Series("above_global_threshold", self.above_threshold())]
        return pl.DataFrame(
            [
                pl.Series("fk", self.fk if self.alpha is not None else self.fk.astype(np.int64)),
                pl.Series("Fk", self.Fk),
                pl.Series("individual_risk", self.risk),
                household,
                *diversity,
                *above,
            ]
        )

    def above_threshold(self) -> np.ndarray:
        """Per row: its individual risk is above the global threshold (none when there is none)."""
        if self.global_threshold is None:
            return np.zeros(len(self.risk), dtype=bool)
        return self.risk > self.global_threshold

    def riskiest(self, count: int | None = None) -> pl.DataFrame:
        """The ``count`` records of highest individual risk (ties in record order) with their keys."""
        count = min(self.top if count is None else count, len(self.risk))
        if self.first_record is not None:
            # Rows are patterns: each is listed once, by its first record.
            order = np.lexsort((self.first_record, -self.risk))[:count]
            numbers = self.first_record[order]
        else:
            order = _top_records(self.risk, self.pattern_risk, self.pattern_records, count)
            numbers = order
        index = pl.Series(order)
        frame = pl.DataFrame({"record": numbers.astype(np.int64)})
        frame = frame.hstack(self.key_values[index].select(pl.all().cast(pl.String)))
        frame = frame.with_columns(
            pl.Series("fk", self.fk[order] if self.alpha is not None else self.fk[order].astype(np.int64)),
            pl.Series("Fk", self.Fk[order]),
            pl.Series("individual_risk", self.risk[order]),
        )
        if self.household_risk is not None:
            frame = frame.with_columns(pl.Series("household_risk", self.household_risk[order]))
        return frame

    def summary(self) -> dict[str, Any]:
        n = self.n_records
        fk, risk = self.fk, self.risk
        expected = self._sum(risk)
        percent = 100.0 / n if n else 0.0
        result: dict[str, Any] = {
            "records": n,
            "keys": list(self.keys),
            "weighted": self.weighted,
            "missing": self.missing,
            "method": self.method if self.weighted else None,
            "qual": self.qual,
            "expected_reidentifications": expected,
            "global_risk": expected / n if n else 0.0,
            "global_risk_percent": expected * percent,
            "k_anonymity_violations": {
                str(k): {
                    "records": self._count(fk < k),
                    "percent": float(self._count(fk < k) * percent),
                }
                for k in K_ANONYMITY
            },
            "sample_uniques": self._count(fk == 1),
            "sample_uniques_percent": float(self._count(fk == 1) * percent),
            "individual_risk": _quantiles(self.pattern_risk, self.pattern_records),
            "higher_risk_records": _higher_risk(
                risk, self.pattern_risk, self.pattern_records, self.multiplicity
            ),
            "clipped_records": self.clipped,
            **self.attacker_models(),
        }
        if self.alpha is not None:
            result["alpha"] = self.alpha
        if self.max_global_risk is not None:
            result["max_global_risk"] = self.max_global_risk
            result["global_threshold"] = self.global_threshold
            result["records_above_global_threshold"] = self._count(self.above_threshold())
        if self.household_risk is not None:
            hier = float(self.household_risk.sum())
            result["household"] = {
                "attribute": self.household,
                "households": self.n_households,
                "expected_reidentifications": hier,
                "global_risk": hier / n if n else 0.0,
                "global_risk_percent": hier * percent,
            }
        if self.l_diversity:
            result["l_diversity"] = {name: self._diversity_figures(name) for name in self.l_diversity}
        if self.population is not None:
            result["population_uniqueness"] = self.population.figures()
        result["riskiest"] = self.riskiest().to_dicts()
        return result

    def attacker_models(self) -> dict[str, Any]:
        """Prosecutor, journalist and marketer risk (ARX's ``RiskModelSampleSummary``)."""
        n = self.n_records
        if n == 0:
            empty = {"average": 0.0, "highest": 0.0, "records_at_risk": 0.0, "threshold": self.threshold}
            return {"prosecutor": empty, "journalist": empty, "marketer": {"average": 0.0}}
        inverse = 1.0 / self.fk
        classes = self._sum(inverse)
        prosecutor = {
            "average": classes / n,
            "highest": float(inverse.max()),
            "records_at_risk": float(self._count(inverse > self.threshold) / n),
            "threshold": self.threshold,
        }
        if not self.weighted:
            return {
                "prosecutor": prosecutor,
                "journalist": {**prosecutor, "population": "sample"},
                "marketer": {"average": classes / n},
            }
        population = np.maximum(self.Fk, self.fk)
        population_inverse = 1.0 / population
        success = self._sum(population_inverse) / n
        journalist = {
            "average": max(classes / self._sum(population * inverse), success),
            "highest": float(population_inverse.max()),
            "records_at_risk": float(self._count(population_inverse > self.threshold) / n),
            "threshold": self.threshold,
            "population": "weights",
        }
        return {"prosecutor": prosecutor, "journalist": journalist, "marketer": {"average": success}}


def _quantiles(values: np.ndarray, counts: np.ndarray) -> dict[str, float | None]:
    """Min, quartiles, mean and max of ``values[i]`` repeated ``counts[i]`` times."""
    if counts.sum() == 0:
        return {"min": None, "p25": None, "median": None, "mean": None, "p75": None, "max": None}
    q = grouped_quantiles(values, counts, QUANTILES)
    return {
        "min": float(q[0]),
        "p25": float(q[1]),
        "median": float(q[2]),
        "mean": float(np.dot(values, counts) / counts.sum()),
        "p75": float(q[3]),
        "max": float(q[4]),
    }


def _higher_risk(
    risk: np.ndarray,
    pattern_risk: np.ndarray,
    pattern_records: np.ndarray,
    multiplicity: np.ndarray | None = None,
) -> int:
    """sdcMicro's "obs. with higher risk as the main part": risk > median + 3 MAD and > 0.1 (R's mad,
    scaled by 1.4826)."""
    if len(risk) == 0:
        return 0
    median = grouped_quantiles(pattern_risk, pattern_records, [0.5])[0]
    mad = 1.4826 * grouped_quantiles(np.abs(pattern_risk - median), pattern_records, [0.5])[0]
    higher = (risk > median + 3 * mad) & (risk > 0.1)
    return int(np.count_nonzero(higher)) if multiplicity is None else int(multiplicity[higher].sum())


def _top_records(
    risk: np.ndarray, pattern_risk: np.ndarray, pattern_records: np.ndarray, count: int
) -> np.ndarray:
    """The ``count`` records of highest risk, ties in record order, without sorting every record:
    the cut-off risk is found on the patterns, then only records at or above it are ordered."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    by_risk = np.argsort(-pattern_risk, kind="stable")
    reached = np.searchsorted(np.cumsum(pattern_records[by_risk]), count)
    cut = pattern_risk[by_risk[min(int(reached), len(by_risk) - 1)]]
    above = np.flatnonzero(risk > cut)
    at = np.flatnonzero(risk == cut)[: count - len(above)]
    chosen = np.concatenate([above, at])
    return chosen[np.lexsort((chosen, -risk[chosen]))][:count]


def reidentification_risk(
    table: Table,
    *,
    weights: str | None = None,
    missing: str = "wildcard",
    method: str = "approx",
    qual: float = 1.0,
    threshold: float = 0.2,
    top: int = 10,
    sampling_fraction: float | None = None,
    population_size: float | None = None,
    multiplicity: np.ndarray | None = None,
    weight_sums: np.ndarray | None = None,
    first_record: np.ndarray | None = None,
    original: Table | None = None,
    hierarchies: dict[str, Hierarchy] | None = None,
    l_recursive_c: float = 2.0,
    alpha: float | None = None,
    max_global_risk: float | None = None,
) -> ReidentificationRisk:
    """Re-identification risk of ``table``: keys are the attributes with role quasi-identifier,
    ``weights`` the column of sampling weights (None: not a sample survey), the household id the
    attribute with role household, l-diversity for every attribute with role sensitive. The
    population-uniqueness estimators run when ``sampling_fraction`` (in (0, 1]) or
    ``population_size`` (at least the number of records) is given.

    ``multiplicity`` (records per row), ``weight_sums`` (their sum of sampling weights, instead of
    ``weights``) and ``first_record`` (the number of each row's first record) describe a table of
    distinct patterns standing for the records of a data set (:mod:`sdckit.scale`): the figures are
    then those of the records.

    With ``original``, ``table`` is a release of it (same records, same order) measured as an
    adversary who knows the original key values sees it: ``f_k`` of a record is the number of released
    records whose key values *cover* its original ones (:mod:`sdckit.coverage`; ``hierarchies``: the
    nodes labels may be, default those of the original's schema), ``F_k`` their weight sum, and every
    figure built on them (individual, global, household risk, k-anonymity violations, attacker
    models) follows. l-diversity and population uniqueness stay those of the release's classes as
    released (identical labels). A record that no released record covers (an untruthful release)
    is an error.

    ``alpha`` (in [0, 1], wildcard nulls only, not with ``original``) weighs matches through other
    patterns with missing values (sdcMicro's ``freqCalc``; None: 1, the plain wildcard count);
    ``max_global_risk`` (in (0, 1), sdcMicro's default 0.01) asks for sdcMicro's ``global_threshold``
    and each record's place above it (see the module docstring)."""
    keys = [attribute.name for attribute in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    where = f"{table.source}: " if table.source else ""
    n = table.n_records if multiplicity is None else int(multiplicity.sum())
    household = _check_arguments(table, keys, missing, sampling_fraction, population_size, n)
    _check_sdcmicro_options(missing, alpha, max_global_risk, original)
    weight_values = _weight_values(table, weights, weight_sums, where)
    key = _KeyFrequencies.of(table, keys, missing, multiplicity, weight_values, alpha)
    pattern_of, f_pattern, F_pattern, counts = key.pattern_of, key.f, key.F, key.counts  # noqa: N806
    if original is not None:
        pattern_of, f_pattern, F_pattern, counts = _covered_frequencies(  # noqa: N806
            table, original, keys, missing, weight_values, hierarchies
        )
    if weight_values is not None and np.any(F_pattern <= 0):
        bad = int(np.flatnonzero(F_pattern[pattern_of] <= 0)[0])
        described = ", ".join(f"{name}={table.column(name)[bad]}" for name in keys)
        raise InputError(
            f"{where}record {bad + 1} ({described}): estimated population frequency F = 0, all records "
            f"of its key have weight 0 in weights column '{weights}'"
        )
    risk_pattern, clipped_patterns = individual_risk(
        f_pattern, F_pattern if weight_values is not None else None, method=method, qual=qual
    )
    clipped = 0
    if clipped_patterns:
        too_small = F_pattern < f_pattern
        clipped = int(
            np.count_nonzero(too_small[pattern_of])
            if multiplicity is None
            else multiplicity[too_small[pattern_of]].sum()
        )
        warnings.warn(
            SdcWarning(
                f"{where}{clipped:,} records have F < f (weights below 1): their p = f/F is clipped to 1 "
                "and their individual risk is 1/f"
            ),
            stacklevel=2,
        )
    fk, Fk, risk = f_pattern[pattern_of], F_pattern[pattern_of], risk_pattern[pattern_of]  # noqa: N806
    household_values, n_households = None, 0
    if household is not None:
        household_values, n_households = _household_figures(table, household, risk, n, where)

    l_diversity, entropy_l, recursive_l = _diversities(table, key, l_recursive_c, multiplicity)

    population = None
    size = population_size
    if size is None and sampling_fraction is not None:
        size = n / sampling_fraction
    if size is not None:
        population = population_uniqueness(key.counts, size) if n else None

    return ReidentificationRisk(
        keys=tuple(keys),
        fk=fk,
        Fk=np.asarray(Fk, dtype=np.float64),
        risk=risk,
        household_risk=household_values,
        household=household,
        n_households=n_households,
        weighted=weight_values is not None,
        missing=missing,
        method=method,
        qual=qual,
        threshold=threshold,
        top=top,
        clipped=clipped,
        key_values=table.data.select(keys),
        l_diversity=l_diversity,
        population=population,
        pattern_of=pattern_of,
        pattern_risk=risk_pattern,
        pattern_records=counts.astype(np.int64),
        multiplicity=multiplicity,
        first_record=first_record,
        entropy_l_diversity=entropy_l,
        recursive_l_diversity=recursive_l,
        l_recursive_c=l_recursive_c,
        alpha=alpha,
        max_global_risk=max_global_risk,
        global_threshold=(
            None if max_global_risk is None else global_threshold(risk_pattern, max_global_risk, counts)
        ),
    )


def global_threshold(
    risk: np.ndarray, max_global_risk: float, multiplicity: np.ndarray | None = None
) -> float | None:
    """sdcMicro's ``global_threshold`` of the individual risks ``risk`` (one a record, or a row
    standing for ``multiplicity`` records) for ``max_global_risk``: the largest risk value t among the
    records' such that ``sum_i min(r_i, t) < max_global_risk * n``; None when the total risk is
    already below ``max_global_risk * n`` (sdcMicro's NA), 0 when no value works. The sums are those
    of sdcMicro's ``measure_threshold`` in its order (a running total over the risks in decreasing
    order, each removed in turn), so that ties with the bound resolve as there."""
    values = np.asarray(risk, dtype=np.float64)
    order = np.argsort(-values, kind="stable")
    ordered = values[order]
    if multiplicity is not None:  # sort the rows, then repeat them: the same decreasing sequence
        ordered = np.repeat(ordered, np.asarray(multiplicity, dtype=np.int64)[order])
    n = len(ordered)
    bound = max_global_risk * n
    if n == 0:
        return None
    # cumsum adds one term after the other, as sdcMicro's loops do.
    total = np.cumsum(ordered)[-1]
    if total < bound:
        return None
    remaining = np.cumsum(np.concatenate([[total], -ordered[:-1]]))  # before removing record j
    steps = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1  # where a lower risk value starts
    within = remaining[steps] + ordered[steps] * steps.astype(np.float64) < bound
    hits = np.flatnonzero(within)
    return float(ordered[steps[hits[0]]]) if len(hits) else 0.0


def _check_sdcmicro_options(
    missing: str, alpha: float | None, max_global_risk: float | None, original: Table | None
) -> None:
    """Refuse an ``alpha`` or ``max_global_risk`` :func:`reidentification_risk` cannot apply."""
    if alpha is not None:
        if not 0 <= alpha <= 1:
            raise ConfigError(f"alpha must be in [0, 1], got {alpha:g}")
        if missing != "wildcard":
            raise ConfigError("alpha weighs wildcard matches: it needs missing wildcard, not category")
        if original is not None:
            raise ConfigError("alpha does not apply to coverage counting against an original")
    if max_global_risk is not None and not 0 < max_global_risk < 1:
        raise ConfigError(f"max_global_risk must be in (0, 1), got {max_global_risk:g}")


def _check_arguments(
    table: Table,
    keys: list[str],
    missing: str,
    sampling_fraction: float | None,
    population_size: float | None,
    n: int,
) -> str | None:
    """Refuse arguments :func:`reidentification_risk` cannot measure with; the household attribute
    (None: none)."""
    where = f"{table.source}: " if table.source else ""
    if not keys:
        raise ConfigError("re-identification risk needs at least one attribute with role quasi-identifier")
    absent = [name for name in keys if name not in table.data.columns]
    if absent:
        raise ConfigError(f"{where}quasi-identifier '{absent[0]}' is not a column of the data")
    if missing not in ("wildcard", "category"):
        raise ConfigError(f"missing must be wildcard or category, got {missing!r}")
    if sampling_fraction is not None and population_size is not None:
        raise ConfigError("give sampling_fraction or population_size, not both")
    if sampling_fraction is not None and not 0 < sampling_fraction <= 1:
        raise ConfigError(f"sampling_fraction must be in (0, 1], got {sampling_fraction:g}")
    if population_size is not None and not population_size >= n:
        raise ConfigError(
            f"population_size must be at least the number of records ({n:,}), got {population_size:g}"
        )
    households = [attribute.name for attribute in table.schema.with_role(Role.HOUSEHOLD)]
    if len(households) > 1:
        raise ConfigError(f"at most one attribute may have role household, got {', '.join(households)}")
    return households[0] if households else None


def _weight_values(
    table: Table, weights: str | None, weight_sums: np.ndarray | None, where: str
) -> np.ndarray | None:
    """The sampling weight of every row: from the column ``weights``, else ``weight_sums``; None
    without weights."""
    if weights is not None:
        if weights not in table.data.columns:
            raise ConfigError(f"{where}weights column '{weights}' is not a column of the data")
        column = table.column(weights).cast(pl.Float64, strict=False).to_numpy()
        return check_weights(column, table.n_records, f"{where}weights column '{weights}'")
    if weight_sums is not None:
        return np.asarray(weight_sums, dtype=np.float64)
    return None


@dataclass(frozen=True)
class _KeyFrequencies:
    """The key patterns of a table as released: each row's pattern (``pattern_of``), the patterns'
    integer codes and the cardinalities of the keys, the records of each pattern (``counts``) and its
    sample and population frequencies ``f`` and ``F`` (with wildcard nulls: of the patterns it
    matches); ``wildcard``: some null is a wildcard."""

    pattern_of: np.ndarray
    patterns: np.ndarray
    cardinalities: list[int]
    counts: np.ndarray
    f: np.ndarray
    F: np.ndarray  # noqa: N815
    wildcard: bool

    @classmethod
    def of(
        cls,
        table: Table,
        keys: list[str],
        missing: str,
        multiplicity: np.ndarray | None,
        weight_values: np.ndarray | None,
        alpha: float | None = None,
    ) -> _KeyFrequencies:
        # The records' value patterns (nulls as values), then the integer codes of one record per
        # pattern: the records are grouped once and only the patterns are encoded.
        grouping = group_records(table.data, keys)
        pattern_of, n_patterns = grouping.keys, grouping.n_groups
        encoding = encode(table.data.select(keys)[grouping.first], keys)
        patterns = (
            np.stack(encoding.codes, axis=1) if n_patterns else np.zeros((0, len(keys)), dtype=np.int32)
        )
        if multiplicity is None:
            counts = grouping.sizes.astype(np.float64)
        else:
            counts = np.bincount(pattern_of, weights=multiplicity, minlength=n_patterns).astype(np.float64)
        sums = group_sizes(pattern_of, n_patterns, weight_values) if weight_values is not None else counts
        cardinalities = list(encoding.cardinalities)
        wildcard = missing == "wildcard" and any(encoding.has_missing)
        if wildcard and alpha is not None and alpha != 1:
            both = alpha_wildcard_pattern_sizes(
                patterns, np.stack([counts, sums], axis=1), cardinalities, alpha
            )
            f_pattern, F_pattern = both[:, 0], both[:, 1]  # noqa: N806
        elif wildcard:
            both = wildcard_pattern_sizes(patterns, np.stack([counts, sums], axis=1), cardinalities)
            f_pattern, F_pattern = both[:, 0], both[:, 1]  # noqa: N806
        else:
            f_pattern, F_pattern = counts, np.asarray(sums, dtype=np.float64)  # noqa: N806
        return cls(pattern_of, patterns, cardinalities, counts, f_pattern, F_pattern, wildcard)


def _diversities(
    table: Table, key: _KeyFrequencies, c: float, multiplicity: np.ndarray | None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Distinct, entropy and recursive (c) l-diversity of every sensitive attribute, per record, over
    the records matching its key (one pass for all attributes)."""
    names = [attribute.name for attribute in table.schema.with_role(Role.SENSITIVE)]
    distinct: dict[str, np.ndarray] = {}
    entropy: dict[str, np.ndarray] = {}
    recursive: dict[str, np.ndarray] = {}
    if not names:
        return distinct, entropy, recursive
    figures = l_diversities_of_many(
        key.patterns,
        key.pattern_of,
        key.cardinalities,
        [encode(table.data, [name]).codes[0] for name in names],
        key.wildcard,
        c,
        multiplicity,
    )
    for name, (d, e, r) in zip(names, figures, strict=True):
        distinct[name], entropy[name], recursive[name] = d, e, r
    return distinct, entropy, recursive


def _household_figures(
    table: Table, household: str, risk: np.ndarray, n: int, where: str
) -> tuple[np.ndarray, int]:
    """The household risk of every record and the number of households."""
    codes = encode(table.data, [household]).codes[0]
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise InputError(f"{where}record {row + 1}: household attribute '{household}' has no value")
    n_households = int(codes.max()) + 1 if n else 0
    return household_risk(risk, codes.astype(np.int64)), n_households


def _covered_frequencies(
    release: Table,
    original: Table,
    keys: list[str],
    missing: str,
    weights: np.ndarray | None,
    hierarchies: dict[str, Hierarchy] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """f_k and F_k by coverage (see :func:`reidentification_risk`): each record's pattern (its
    released and original key values), and per pattern f, F and the number of records."""
    from sdckit.coverage import attribute_covers
    from sdckit.risk.combined import schema_hierarchies

    where = f"{release.source}: " if release.source else ""
    if original.n_records != release.n_records:
        raise InputError(
            f"{where}the release has {release.n_records:,} records and the original {original.n_records:,}: "
            "coverage needs the original's records, in the same order"
        )
    covers = attribute_covers(
        original.data,
        release.data,
        keys,
        hierarchies=schema_hierarchies(original) if hierarchies is None else hierarchies,
        missing=missing,
        where=where,
    )
    n = release.n_records
    t_keys, t_sizes = initial_keys(n)
    r_keys, r_sizes = initial_keys(n)
    for cover in covers:
        t_keys, t_sizes = extend_keys(t_keys, t_sizes, cover.target_slots, cover.n_slots)
        r_keys, r_sizes = extend_keys(r_keys, r_sizes, cover.released_labels, len(cover.labels))
    ones = np.ones(n, dtype=np.float64)
    sizes = np.stack([ones, weights if weights is not None else ones], axis=1)
    per_target, _ = coverage_group_sizes(
        t_keys,
        len(t_sizes),
        [cover.target_slots for cover in covers],
        r_keys,
        len(r_sizes),
        [cover.released_labels for cover in covers],
        sizes,
        [(cover.pointer, cover.covering) for cover in covers],
    )
    if np.any(per_target[:, 0] <= 0):
        bad = int(np.flatnonzero(per_target[t_keys, 0] <= 0)[0])
        described = ", ".join(f"{name}={original.column(name)[bad]}" for name in keys)
        raise InputError(
            f"{where}record {bad + 1} ({described}): no released record covers its original key values "
            "(the release is not truthful: coverage measures generalization and suppression only)"
        )
    if weights is not None and np.any(per_target[:, 1] <= 0):
        bad = int(np.flatnonzero(per_target[t_keys, 1] <= 0)[0])
        raise InputError(
            f"{where}record {bad + 1}: estimated population frequency F = 0, all released records "
            "covering its key values have weight 0"
        )
    # A record's pattern: its released key values and its original ones.
    combined = r_keys.astype(np.int64) * len(t_sizes) + t_keys
    pattern_of, counts = dense_keys(combined)
    first = first_of_groups(pattern_of.astype(np.int64), len(counts))
    f_pattern = per_target[t_keys[first], 0]
    F_pattern = per_target[t_keys[first], 1]  # noqa: N806
    return pattern_of, f_pattern, F_pattern, counts.astype(np.float64)


class ReidentificationParams(MethodParams):
    """Parameters of the re-identification risk (``sdckit risk reidentification``)."""

    missing: Annotated[
        Literal["wildcard", "category"] | None,
        Field(
            description="Missing key values: wildcard (sdcMicro) or category (default: the configuration's)."
        ),
    ] = None
    method: Annotated[
        Literal["approx", "exact"],
        Field(description="Individual risk for f >= 3: approx (sdcMicro's) or exact."),
    ] = "approx"
    qual: Annotated[Finite, Field(gt=0, description="Final correction factor of the individual risk.")] = 1.0
    threshold: Annotated[
        Finite, Field(ge=0, le=1, description="Records at risk: 1/class size above it (ARX's default 0.2).")
    ] = 0.2
    top: Annotated[Whole, Field(ge=0, description="How many records of highest risk to list.")] = 10
    sampling_fraction: Annotated[
        Finite | None, Field(gt=0, le=1, description="Sampling fraction, for population uniqueness.")
    ] = None
    population_size: Annotated[
        Finite | None, Field(gt=0, description="Population size, for population uniqueness.")
    ] = None
    l_recursive_c: Annotated[
        Finite, Field(gt=0, description="c of the recursive (c, l)-diversity of the sensitive attributes.")
    ] = 2.0
    alpha: Annotated[
        Finite | None,
        Field(
            ge=0,
            le=1,
            description="sdcMicro freqCalc's alpha: weight of a match through another key with a missing "
            "value (wildcard only; default 1).",
        ),
    ] = None
    max_global_risk: Annotated[
        Finite | None,
        Field(
            gt=0,
            lt=1,
            description="sdcMicro measure_risk's max_global_risk (its default 0.01): report global_threshold "
            "and the records above it.",
        ),
    ] = None

    def to_recipe(self) -> dict[str, Any]:
        """Every parameter but alpha and max_global_risk when not given (the documents written
        before they existed stay as they were)."""
        recipe = super().to_recipe()
        for name in ("alpha", "max_global_risk"):
            if recipe.get(name) is None:
                recipe.pop(name, None)
        return recipe

    @model_validator(mode="after")
    def _one_population(self) -> Self:
        if self.sampling_fraction is not None and self.population_size is not None:
            raise ValueError("takes {sampling_fraction} or {population_size}, not both")
        return self


def _summary(result: ReidentificationRisk) -> dict[str, Any]:
    return result.summary()


def _records(result: ReidentificationRisk) -> pl.DataFrame:
    return result.records()


@register_measure(
    "reidentification",
    "risk",
    ReidentificationParams,
    summary=_summary,
    help="Re-identification risk: fk/Fk, individual and global risk, k-anonymity, household, l-diversity, "
    "prosecutor/journalist/marketer and population uniqueness (sdcMicro measure_risk, ARX).",
    report=report,
    records=_records,
    headline="global_risk",
    original=True,
)
def _run(table: Table, params: ReidentificationParams, context: Context) -> ReidentificationRisk:
    config = context.config
    weights = config.data.weights if config is not None else table.weights
    missing = params.missing or (config.risk.missing if config is not None else "wildcard")
    return reidentification_risk(
        table,
        weights=weights,
        missing=missing,
        method=params.method,
        qual=params.qual,
        threshold=params.threshold,
        top=params.top,
        sampling_fraction=params.sampling_fraction,
        population_size=params.population_size,
        original=context.original,
        l_recursive_c=params.l_recursive_c,
        alpha=params.alpha,
        max_global_risk=params.max_global_risk,
    )
