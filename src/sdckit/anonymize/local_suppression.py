"""Local suppression to k-anonymity, as sdcMicro's ``localSuppression``.

Value suppression replaces single quasi-identifier cells by a real null (never a whole record), so
that the released table satisfies a privacy model while most of its values stay exact.

:func:`local_suppression` reaches k-anonymity the way sdcMicro's ``localSuppression`` does
(Templ, Kowarik & Meindl 2015; Templ 2017): greedily, suppressing values of the attributes the user
ranks least important first, until every record matches at least ``k`` records when a null matches
every value (sdcMicro's wildcard semantics, :mod:`sdckit.frequency`); with ``strict_importance`` a
record loses a more important value only when its less important ones alone cannot reach ``k``.
The compiled greedy lives in :mod:`sdckit.anonymize._suppression_kernels`.

The greedy rule
---------------
Records are collapsed to their distinct quasi-identifier patterns (integer codes) with their
counts (or weight sums); all records of a pattern receive the same suppressions. The patterns
whose wildcard frequency is below ``k`` are visited once each, in increasing order of that
frequency (sdcMicro visits records by decreasing individual risk, which is the same order without
weights), ties in order of first appearance. For the visited pattern ``p``, with frequencies
computed afresh against the current (partly suppressed) patterns, and while its frequency
``f(p)`` is below ``k``:

1. if nulling a single value of ``p`` brings ``f`` to ``k`` or more, null the least important
   such attribute (one cell per record, the fewest possible);
2. otherwise apply sdcMicro's rule: among the patterns at the smallest positive distance from
   ``p`` (distance = number of attributes on which both are non-null and differ), null the least
   important attribute on which ``p`` differs from one of them.

With ``strict_importance`` steps 1 and 2 consider only the allowed attributes (see above).

Suppression only adds matches, so no frequency ever decreases: a pattern that reaches ``k`` keeps
it, and the search ends after one visit per violating pattern. It terminates because each step
nulls a value and a pattern of nulls matches every record (whose total is at least ``k``).

With ``missing="category"`` a null matches only nulls, so a pattern visited alone finds no
partner (nothing else holds its nulls) and would end all null. The violating patterns therefore
move together, in rounds: round t nulls the t-th least important attribute in every pattern
still violating, then re-counts the classes; patterns whose class reaches ``k`` stop (their class
is never broken up later: its members stop, others can only join it). As the all-null class may
end up below ``k`` (but not empty), whole records are then moved into it, cheapest first (spare
records of classes above ``k``, then whole classes, fewest values first):
``filled_records`` of :class:`LocalSuppressionFigures` counts them. If that costs more cells than
suppressing every value of every violating record and that simple release is k-anonymous (its
all-null class reaches ``k``), the simple release is returned instead
(``fell_back_to_violating_records``).
So the category release exceeds the "suppress every violating record" bound only when that
bound's release is not k-anonymous itself.

Deviations from sdcMicro
------------------------
* Frequencies are recomputed after every suppression, not once per round: a violating pattern
  fixed as a side effect of earlier suppressions is left alone, and each visited pattern is
  suppressed only until it reaches ``k`` (sdcMicro suppresses one value in every record that was
  violating at the start of a round, then re-counts).
* Step 1 (a single suppression reaching ``k`` is taken first) is ours; sdcMicro always applies
  the nearest-pattern rule. So a record may lose one important value where sdcMicro takes two
  less important ones (on sdcMicro's ``testdata`` with the usual keys and importance urbrur, sex,
  walls, electcon, roof, water, relat, k = 3, record 2879 in R's 1-based numbering loses
  ``urbrur``, the most important key, where sdcMicro suppresses ``roof`` and ``relat``).
* ``strict_importance`` is an addition (sdcMicro's rule, too, may null an important attribute:
  the least important one on which ``p`` differs from a nearest pattern). On that record it
  suppresses ``water`` and ``relat``: relat alone cannot reach 3, relat and water can, so roof
  is not allowed.
* Work is on distinct patterns, not records, so identical records get identical suppressions;
  sdcMicro's reduction of large groups to ``k`` records is unnecessary here.
* ``strata`` and ``combs`` as sdcMicro's (:mod:`sdckit.anonymize._suppression_strata` states the
  differences); no ``alpha`` (missing values count fully, sdcMicro's default alpha=1).
* Sampling weights and the category treatment of nulls (with its own rounds, above) are
  additions.
* The greedy itself is exact but its data structure is not sdcMicro's: the patterns are kept in
  a trie (see the comments of the compiled kernels), so the cost of a visit grows with the number
  of trie nodes (pattern prefixes) that match it, not with the number of records or null masks.

References
----------
Templ, M., Kowarik, A. and Meindl, B. (2015). Statistical Disclosure Control for Micro-Data Using the
R Package sdcMicro. *Journal of Statistical Software* 67(4), 1-36.

Templ, M. (2017). *Statistical Disclosure Control for Microdata: Methods and Applications in R*.
Springer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field, model_validator

from sdckit.anonymize import _suppression_kernels as kernels
from sdckit.anonymize import _suppression_strata as steps_module
from sdckit.anonymize.base import (
    Context,
    achieved_report,
    cells_report,
    check_k_at_most_records,
    register_method,
)
from sdckit.anonymize.release import Figures, Release
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError
from sdckit.frequency import (
    Encoding,
    check_weights,
    encode,
    group_keys,
    group_sizes,
    pattern_codes,
    wildcard_pattern_sizes,
)
from sdckit.params import MethodParams, Whole, names_list
from sdckit.scale import methods as scaled
from sdckit.table import Role, Table

# Violating patterns handed to one compiled call between two progress reports.
_CHUNK = 512


@dataclass(frozen=True)
class LocalSuppressionFigures(Figures):
    """What a local suppression found: the quasi-identifiers from most to least important as used
    (``importance``), whether records were weighted, the distinct ``patterns``, those violating ``k``
    at the start and their records, the records moved into the all-null class (category treatment)
    and whether it fell back to suppressing every violating record (see the module's docstring)."""

    importance: list[str]
    weighted: bool
    violating_patterns: int
    violating_records: int
    patterns: int
    filled_records: int
    fell_back_to_violating_records: bool
    #: With ``strata`` or ``combs``: the strata (1 without strata) and the steps (key subsets) treated
    #: in each; 0 and 0 otherwise.
    strata: int = 0
    steps: int = 0


# ----------------------------------------------------------------------------------------------
# The category treatment's rounds (numpy: every violating pattern moves at once).


def _category_rounds(
    patterns: np.ndarray,
    counts: np.ndarray,
    active: np.ndarray,
    k: float,
    suppressed: np.ndarray,
    progress: ProgressCallback | None,
) -> None:
    """Category treatment: in round t, null attribute t (suppression order) in every pattern still
    violating, then re-count the classes; patterns whose class reaches ``k`` stop. The violating
    patterns move together, so they find partners among each other (a pattern visited alone would
    find none: nothing else holds its nulls). Classes that reach ``k`` are never broken up later:
    their members stop, and others can only join them."""
    q = patterns.shape[1]
    for t in range(q):
        if not active.any():
            break
        rows = np.flatnonzero(active)
        suppressed[rows, t] |= patterns[rows, t] >= 0
        patterns[rows, t] = -1
        classes = np.unique(patterns, axis=0, return_inverse=True)[1].reshape(-1)
        weight = np.bincount(classes, weights=counts)
        active &= weight[classes] < k
        if progress is not None:
            progress(t + 1, q)


# ----------------------------------------------------------------------------------------------
# Validation.


def _resolve_quasi_identifiers(table: Table, quasi_identifiers: Sequence[str] | None) -> list[str]:
    if quasi_identifiers is None:
        names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
        if not names:
            raise ConfigError(
                "no quasi-identifiers: give role quasi-identifier to some attributes or pass "
                "quasi_identifiers"
            )
    else:
        if isinstance(quasi_identifiers, str):
            raise ConfigError("quasi_identifiers must be a sequence of attribute names, not one string")
        names = list(quasi_identifiers)
        if not names:
            raise ConfigError("quasi_identifiers is empty: give at least one attribute")
    seen: set[str] = set()
    for name in names:
        if name not in table.data.columns:
            raise ConfigError(
                f"quasi-identifier '{name}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
        if name in seen:
            raise ConfigError(f"quasi-identifier '{name}' is given twice")
        seen.add(name)
    identifiers = [n for n in names if n in table.schema and table.schema[n].role is Role.IDENTIFIER]
    if identifiers:
        raise ConfigError(
            f"'{identifiers[0]}' is an identifier (dropped from every release), not a quasi-identifier"
        )
    return names


def _importance_order(
    names: Sequence[str],
    importance: Sequence[str] | Mapping[str, int] | None,
    cardinalities: Sequence[int],
) -> list[str]:
    """The quasi-identifiers in suppression order: least important (suppressed first) to most important.

    As sdcMicro: by default the attributes with more distinct (non-missing) values are less important,
    ties in column order (the earlier one more important). A mapping gives ranks 1 (most important) to
    q (least); equal ranks are allowed, as in sdcMicro, and tied attributes are then suppressed in
    column order.
    """
    q = len(names)
    if importance is None:
        # sdcMicro: importance <- match(names, names(sort(categories))): rank 1 = fewest categories.
        most_first = sorted(range(q), key=lambda j: (cardinalities[j], j))
        return [names[j] for j in reversed(most_first)]
    if isinstance(importance, Mapping):
        for name in importance:
            if name not in names:
                raise ConfigError(
                    f"importance: unknown attribute '{name}' (quasi-identifiers: {', '.join(names)})"
                )
        absent = [name for name in names if name not in importance]
        if absent:
            raise ConfigError(
                f"importance: no rank for quasi-identifier '{absent[0]}' (give every one a rank)"
            )
        for name, rank in importance.items():
            if isinstance(rank, bool) or not isinstance(rank, int | np.integer) or not 1 <= int(rank) <= q:
                raise ConfigError(
                    f"importance: rank of '{name}' must be an integer from 1 (most important) "
                    f"to {q}, got {rank!r}"
                )
        # sdcMicro orders the columns by (q + 1 - importance), stably: highest rank suppressed first.
        return sorted(names, key=lambda name: (-int(importance[name]), names.index(name)))
    if isinstance(importance, str):
        raise ConfigError(
            "importance must be a sequence of attribute names or a mapping name -> rank, not a string"
        )
    listed = list(importance)
    seen: set[str] = set()
    for name in listed:
        if name not in names:
            raise ConfigError(
                f"importance: unknown attribute '{name}' (quasi-identifiers: {', '.join(names)})"
            )
        if name in seen:
            raise ConfigError(f"importance: attribute '{name}' is listed twice")
        seen.add(name)
    absent = [name for name in names if name not in seen]
    if absent:
        raise ConfigError(
            f"importance: quasi-identifier '{absent[0]}' is not listed (list every quasi-identifier, "
            "most important first)"
        )
    return list(reversed(listed))


# ----------------------------------------------------------------------------------------------
# The category treatment's last step.


def _fill_all_null(codes: np.ndarray, weights: np.ndarray, k: float, suppressed: np.ndarray) -> int:
    """Category treatment only: when the all-null class weighs more than 0 but less than ``k``, move
    whole records into it (suppress all their values), cheapest first: the records that each class
    of weight above ``k`` can spare (records with the fewest values left first), then whole classes,
    again cheapest first. Returns the number of records moved. ``codes`` and ``suppressed`` are the
    record-level (n x q) current codes and suppression mask, updated in place."""
    observed = codes >= 0
    all_null = ~observed.any(axis=1)
    have = float(weights[all_null].sum())
    if not all_null.any() or have >= k:
        return 0
    need = k - have
    # Classes of the remaining records (category semantics), and their cost per record.
    keys = np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1)
    n_classes = int(keys.max()) + 1
    class_weight = np.bincount(keys, weights=weights, minlength=n_classes)
    class_cost = np.zeros(n_classes, dtype=np.int64)
    class_cost[keys] = observed.sum(axis=1)
    candidates = [c for c in np.argsort(class_cost, kind="stable") if class_cost[c] > 0]
    moved = np.zeros(len(weights), dtype=bool)
    for c in candidates:  # spare records first
        if need <= 0:
            break
        members = np.flatnonzero(keys == c)
        spare = class_weight[c] - k
        cumulative = np.cumsum(weights[members])
        take = members[(cumulative <= spare) & (cumulative - weights[members] < need)]
        moved[take] = True
        need -= float(weights[take].sum())
        class_weight[c] -= float(weights[take].sum())
    for c in candidates:  # then whole classes
        if need <= 0:
            break
        members = np.flatnonzero((keys == c) & ~moved)
        if not len(members):
            continue
        moved[members] = True
        need -= float(weights[members].sum())
    suppressed[moved] |= observed[moved]
    codes[moved] = -1
    return int(moved.sum())


# ----------------------------------------------------------------------------------------------
# The public function.


def local_suppression(
    table: Table,
    k: int,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    importance: Sequence[str] | Mapping[str, int] | None = None,
    missing: str = "wildcard",
    weights: np.ndarray | None = None,
    progress: ProgressCallback | None = None,
    strict_importance: bool = False,
    strata: Sequence[str] | None = None,
    combs: Sequence[int] | None = None,
    combs_k: Sequence[int] | None = None,
) -> Release:
    """Suppress single quasi-identifier values until every record is in a class of at least ``k``.

    The approach of sdcMicro's ``localSuppression`` (Templ, Kowarik & Meindl 2015): a greedy search
    that suppresses values (writes nulls), attributes of low importance first, and re-counts with the
    exact wildcard frequencies of :mod:`sdckit.frequency` until every record's frequency reaches
    ``k``. Only cells of records that violate k-anonymity in the original data are ever suppressed, so
    (with the default wildcard treatment) the release never has more suppressed cells than suppressing
    every quasi-identifier of every violating record.

    Parameters
    ----------
    k
        Every record must match at least ``k`` records (itself included) on the quasi-identifiers.
    quasi_identifiers
        Default: the attributes with role quasi-identifier.
    importance
        The quasi-identifiers from most important to least important, or a mapping name -> rank with
        1 the most important (sdcMicro's ``importance`` vector; equal ranks allowed, ties suppressed
        in column order). Default (sdcMicro's): attributes with more distinct non-missing values are
        less important; ties in column order, the earlier attribute counted more important. By
        default the order is a preference, not a guarantee: among the suppressions the greedy rule
        below considers, the least important attribute is taken, but a single suppression of an
        important attribute that reaches ``k`` is preferred to two of less important ones (see
        ``strict_importance``).
    missing
        ``"wildcard"`` (default, sdcMicro): a null matches every value, so a record whose
        quasi-identifiers are all null matches every record. ``"category"``: a null is a value of its
        own, so the release is k-anonymous in the usual sense with nulls as a category.
    weights
        Sampling weights: the condition becomes "the weights of the matching records sum to at least
        ``k``" (an estimated population frequency). sdcMicro uses sample counts here.
    progress
        Called as ``progress(done, total)`` with the violating patterns visited so far (wildcard) or
        the rounds done (category).
    strict_importance
        ``True``: a record never loses the value of an attribute while suppressing values of less
        important attributes alone could still bring it to ``k``. The rule, for the visited pattern
        ``p`` (attributes in suppression order a_1, the least important, ..., a_q): take the
        smallest t such that nulling every value of ``p`` among a_1..a_t (the other patterns as they
        are at that moment) would bring its frequency to ``k``; then apply the greedy rule below
        with only a_1..a_t allowed (in step 2 only the patterns that match ``p`` on a_t+1..a_q count).
        So the most important attribute a record loses is a_t, and nulling all of a_1..a_t-1 would not
        have reached ``k`` when it was visited (nor, as frequencies only grow, in the original data).
        The record need not lose all of a_1..a_t: the greedy may reach ``k`` with fewer cells, so a
        less important value can survive a more important suppression. It may cost more cells than
        the default. No effect with ``missing="category"``, whose rounds already suppress in
        importance order (round t nulls a_t). ``False`` (default): the greedy rule as below.
    strata
        Attributes (not quasi-identifiers) whose value combinations are strata: k-anonymity is reached
        inside each stratum separately, a record matching only records of its stratum (sdcMicro's
        ``strataVar``; a missing value is a stratum value of its own). Each stratum must hold at least
        ``k`` records (weight).
    combs
        Subset sizes (sdcMicro's ``combs``): k-anonymity for every subset of the quasi-identifiers of
        each size, the sizes in the order given, the subsets of a size in the order of
        :func:`itertools.combinations` over the quasi-identifiers as listed; each subset is treated
        by a run of the greedy on those keys, starting from the suppressions of the earlier ones.
        The full key set is then k-anonymous only when its size is among them.
    combs_k
        One ``k`` per size of ``combs`` (default ``k`` for every size).

    With ``strata`` or ``combs``, :mod:`sdckit.anonymize._suppression_strata` describes the order of
    the steps and the category treatment's repeated passes.

    The greedy rule, the category treatment's rounds and the deviations from sdcMicro are
    described in the module's docstring (:mod:`sdckit.anonymize.local_suppression`).

    Returns
    -------
    Release
        ``method="local-suppression"``; ``suppressed_cells`` / ``cell_penalty`` mark the cells
        suppressed here (nulls already in the data are not counted); ``suppressed_records`` is all
        False; ``classes`` is -1 for the wildcard treatment (wildcard matches do not partition the
        records) and each record's equivalence class for the category treatment; ``params`` the
        :class:`LocalSuppressionParams` (which validates ``k``, ``importance`` as a list, ``missing``
        and ``strict_importance``); ``figures`` the :class:`LocalSuppressionFigures` (``importance``
        as used, most important first, ``weighted``, the violating patterns and records, ...).
        ``quasi_identifiers``, ``importance`` as a mapping and ``weights`` are checked against the
        data.
    """
    params = LocalSuppressionParams.parse(
        {
            "k": k,
            "importance": None if isinstance(importance, Mapping) else importance,
            "missing": missing,
            "strict_importance": strict_importance,
            "strata": None if strata is None else list(strata),
            "combs": None if combs is None else list(combs),
            "combs_k": None if combs_k is None else list(combs_k),
        },
        method="local-suppression",
    )
    return _suppress(
        table,
        params,
        quasi_identifiers=quasi_identifiers,
        ranks=importance if isinstance(importance, Mapping) else None,
        weights=weights,
        progress=progress,
    )


def _suppress(
    table: Table,
    params: LocalSuppressionParams,
    *,
    quasi_identifiers: Sequence[str] | None,
    ranks: Mapping[str, int] | None,
    weights: np.ndarray | None,
    progress: ProgressCallback | None,
) -> Release:
    """The method, on resolved parameters (``missing`` given); ``ranks``: the importance as a mapping
    name -> rank, which the parameters object does not hold."""
    k, strict_importance = params.k, params.strict_importance
    missing = params.missing
    if missing is None:  # a run takes the configuration's, the keyword function has a default
        raise ConfigError("missing must be given: wildcard or category")
    importance: Sequence[str] | Mapping[str, int] | None = ranks if ranks is not None else params.importance
    n = table.n_records
    if n == 0:
        raise ConfigError("the data has no records")
    names = _resolve_quasi_identifiers(table, quasi_identifiers)
    weights = check_weights(weights, n)
    record_weights = np.ones(n, dtype=np.float64) if weights is None else weights
    total = float(record_weights.sum())
    if weights is None:
        check_k_at_most_records(k, n)
    elif k > total:
        raise ConfigError(
            f"k = {k} is larger than the sum of the weights ({total:g}): no suppression can reach it"
        )
    if len(names) > 62 and missing == "wildcard":
        raise ConfigError(f"wildcard counting supports at most 62 quasi-identifiers, got {len(names)}")

    encoding = encode(table.data, names)
    order = _importance_order(names, importance, encoding.cardinalities)
    columns = [encoding.index(name) for name in order]  # suppression order
    keys, n_patterns = group_keys(encoding, columns)
    patterns = np.ascontiguousarray(pattern_codes(encoding, columns, keys, n_patterns), dtype=np.int32)
    counts = group_sizes(keys, n_patterns, record_weights).astype(np.float64)
    cardinalities = [encoding.cardinalities[j] for j in columns]
    # Tolerance for weight sums that should equal k but carry rounding error.
    threshold = k - 1e-9 * max(1.0, k)
    if params.strata is not None or params.combs is not None:
        return _suppress_in_steps(
            table, params, names, order, encoding, patterns[keys], record_weights, weights is not None
        )
    before = patterns.copy() if missing == "category" else patterns
    violating, pattern_suppressed = _suppress_patterns(
        patterns, counts, cardinalities, threshold, missing, strict_importance, progress
    )
    suppressed = pattern_suppressed[keys]  # (n x q) in suppression order
    filled = 0
    if missing == "category":
        suppressed, classes, filled = _category_classes(
            patterns, keys, before, violating, record_weights, threshold, suppressed
        )
    else:
        classes = np.full(n, -1, dtype=np.int64)
    # Back to the order of `names`.
    position = [order.index(name) for name in names]
    suppressed = np.ascontiguousarray(suppressed[:, position])
    figures = LocalSuppressionFigures(
        importance=list(reversed(order)),
        weighted=weights is not None,
        violating_patterns=int(len(violating)),
        violating_records=int(np.isin(keys, violating).sum()) if len(violating) else 0,
        patterns=int(n_patterns),
        filled_records=max(filled, 0),
        fell_back_to_violating_records=filled < 0,
    )
    return _suppressed_release(table, names, suppressed, classes, params, figures)


def _suppress_in_steps(
    table: Table,
    params: LocalSuppressionParams,
    names: list[str],
    order: list[str],
    encoding: Encoding,
    codes: np.ndarray,
    record_weights: np.ndarray,
    weighted: bool,
) -> Release:
    """The method with ``strata`` or ``combs`` (:mod:`sdckit.anonymize._suppression_strata`): ``codes``
    are the records' key codes in suppression order (``order``), ``names`` the keys as listed."""
    missing = str(params.missing)
    strata = _stratum_keys(table, params.strata, names)
    sizes = params.combs or [len(names)]
    ks = params.combs_k or [params.k] * len(sizes)
    too_large = [size for size in sizes if size > len(names)]
    if too_large:
        raise ConfigError(
            f"combs: a subset size must be at most the number of quasi-identifiers ({len(names)}), "
            f"got {too_large[0]}"
        )
    stratum_weight = np.bincount(strata, weights=record_weights)
    smallest = int(np.argmin(stratum_weight))
    if stratum_weight[smallest] < max(ks) - 1e-9 * max(ks):
        raise ConfigError(
            f"k = {max(ks)} is larger than the {'weight' if weighted else 'number of records'} of stratum "
            f"{smallest + 1} ({stratum_weight[smallest]:g}): no suppression can reach it there"
        )
    thresholds = [k - 1e-9 * max(1.0, k) for k in ks]
    steps = steps_module.combination_steps(names, order, sizes, thresholds)
    cardinalities = [encoding.cardinalities[encoding.index(name)] for name in order]
    strict = params.strict_importance

    def search(patterns: np.ndarray, counts: np.ndarray, cards: list[int], threshold: float) -> Any:
        return _suppress_patterns(patterns, counts, cards, threshold, missing, strict, None)

    outcome = steps_module.suppress_in_steps(
        np.ascontiguousarray(codes, dtype=np.int32),
        cardinalities,
        record_weights,
        strata,
        steps,
        search,
        _category_classes if missing == "category" else None,
        repeat=missing == "category" and len(steps) > 1,
    )
    position = [order.index(name) for name in names]
    figures = LocalSuppressionFigures(
        importance=list(reversed(order)),
        weighted=weighted,
        violating_patterns=outcome.violating_patterns,
        violating_records=int(outcome.violating_records.sum()),
        patterns=outcome.patterns,
        filled_records=outcome.filled_records,
        fell_back_to_violating_records=False,
        strata=int(strata.max()) + 1,
        steps=len(steps),
    )
    suppressed = np.ascontiguousarray(outcome.suppressed[:, position])
    return _suppressed_release(table, names, suppressed, outcome.classes, params, figures)


def _stratum_keys(table: Table, strata: list[str] | None, names: list[str]) -> np.ndarray:
    """Each record's stratum (dense, in order of first appearance; all 0 without ``strata``): the
    combinations of the strata attributes' values, a missing value one of its own."""
    if not strata:
        return np.zeros(table.n_records, dtype=np.int64)
    for name in strata:
        if name not in table.data.columns:
            raise ConfigError(
                f"strata: '{name}' is not a column of the data (columns: {', '.join(table.data.columns)})"
            )
        if name in names:
            raise ConfigError(
                f"strata: '{name}' is a quasi-identifier; stratify by an attribute that is not suppressed"
            )
        if name in table.schema and table.schema[name].role is Role.IDENTIFIER:
            raise ConfigError(f"strata: '{name}' is an identifier (dropped from every release)")
    encoding = encode(table.data, strata)
    keys, _ = group_keys(encoding, list(range(len(strata))))
    return keys.astype(np.int64)


def _suppress_patterns(
    patterns: np.ndarray,
    counts: np.ndarray,
    cardinalities: list[int],
    threshold: float,
    missing: str,
    strict_importance: bool,
    progress: ProgressCallback | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Run the search over the distinct patterns (columns in suppression order, edited in place).

    Returns the patterns that violated ``threshold`` at the start and the (patterns x q) mask of the
    values suppressed: the compiled greedy for the wildcard treatment, the rounds for the category
    treatment (see the module's docstring).
    """
    n_patterns = len(patterns)
    if missing == "wildcard":
        frequency = wildcard_pattern_sizes(patterns, counts, cardinalities)
    else:
        frequency = counts.copy()
    violating = np.flatnonzero(frequency < threshold)
    visit = violating[np.argsort(frequency[violating], kind="stable")].astype(np.int64)
    pattern_suppressed = np.zeros(patterns.shape, dtype=np.bool_)
    if missing == "wildcard":
        arrays = kernels.trie_new(patterns, counts, kernels.CAPACITY) if len(visit) else None
        for start in range(0, len(visit), _CHUNK):
            chunk = visit[start : start + _CHUNK]
            kernels.wildcard_greedy(
                patterns,
                counts,
                chunk,
                threshold,
                pattern_suppressed,
                arrays,
                n_patterns // 4,
                strict_importance,
            )
            if progress is not None:
                progress(min(start + _CHUNK, len(visit)), len(visit))
    else:
        active = np.zeros(n_patterns, dtype=bool)
        active[violating] = True
        _category_rounds(patterns, counts, active, threshold, pattern_suppressed, progress)
    return violating, pattern_suppressed


def _category_classes(
    patterns: np.ndarray,
    keys: np.ndarray,
    before: np.ndarray,
    violating: np.ndarray,
    record_weights: np.ndarray,
    threshold: float,
    suppressed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The category treatment's last step: fill the all-null class, or fall back to suppressing
    every value of every violating record when that costs fewer cells and is k-anonymous itself.

    ``patterns`` are the distinct patterns after the rounds (in suppression order) and ``before``
    the same patterns before them, ``keys`` each record's pattern, ``violating`` the patterns that violated
    before them and ``suppressed`` the records' mask after them. Returns the records' mask, each
    record's equivalence class, and the records moved into the all-null class (-1: the fallback was
    taken).
    """
    record_codes = patterns[keys]
    filled = _fill_all_null(record_codes, record_weights, threshold, suppressed)
    if not filled:
        classes = np.unique(patterns, axis=0, return_inverse=True)[1].reshape(-1)[keys]
        return suppressed, classes.astype(np.int64), 0
    # The fill may cost more than suppressing every value of every violating record; when that
    # simple release is k-anonymous itself (its all-null class reaches k), take it.
    original = before[keys]
    violating_record = np.isin(keys, violating)
    simple = violating_record | (original < 0).all(axis=1)
    simple_cells = int(np.count_nonzero(original[violating_record] >= 0))
    if record_weights[simple].sum() >= threshold and simple_cells < int(suppressed.sum()):
        suppressed = violating_record[:, None] & (original >= 0)
        record_codes = np.where(violating_record[:, None], -1, original)
        filled = -1
    classes = np.unique(record_codes, axis=0, return_inverse=True)[1].reshape(-1)
    return suppressed, classes.astype(np.int64), filled


def _suppressed_release(
    table: Table,
    names: list[str],
    suppressed: np.ndarray,
    classes: np.ndarray,
    params: LocalSuppressionParams,
    figures: LocalSuppressionFigures,
) -> Release:
    """The release: the suppressed cells (n x q, in the order of ``names``) written as nulls and the
    identifiers dropped."""
    n = table.n_records
    replaced = [
        pl.when(pl.Series(suppressed[:, j])).then(None).otherwise(pl.col(name)).alias(name)
        for j, name in enumerate(names)
        if suppressed[:, j].any()
    ]
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER) if a.name in table.data.columns]
    released = (table.data.with_columns(replaced) if replaced else table.data).drop(identifiers)
    kept_weights = table.weights if table.weights in released.columns else None
    return Release(
        table=Table(released, table.schema.without_identifiers(), source=table.source, weights=kept_weights),
        original=table,
        method="local-suppression",
        params=params,
        quasi_identifiers=tuple(names),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=classes,
        figures=figures,
        cell_penalty=suppressed.astype(np.float64),
        suppressed_cells=suppressed,
    )


# Registered methods ---------------------------------------------------------------------------

Missing = Literal["wildcard", "category"]


def _whole_numbers(value: Any) -> Any:
    """``"3,5"`` -> ``[3, 5]`` (the command line's comma-separated whole numbers); a part that is not
    written in digits is passed on as text, which the field refuses."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",") if part.strip()]
        return [int(part) if part.isdigit() else part for part in parts]
    return value


class LocalSuppressionParams(MethodParams):
    """Parameters of local suppression (``sdckit anonymize local-suppression``)."""

    k: Annotated[Whole, Field(ge=1, description="Every record must match at least k records.")]
    importance: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(description="Quasi-identifiers, most important (suppressed last) first, comma-separated."),
    ] = None
    missing: Annotated[
        Missing | None,
        Field(description="How a null matches: wildcard (sdcMicro) or category (default: the config's)."),
    ] = None
    strict_importance: Annotated[
        bool,
        Field(
            description="Never suppress a more important key of a record while its less important keys "
            "can still make it safe."
        ),
    ] = False
    strata: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(
            description="Attributes whose value combinations are strata: k-anonymity is reached inside "
            "each stratum separately (sdcMicro's strataVar), comma-separated."
        ),
    ] = None
    combs: Annotated[
        list[Annotated[Whole, Field(ge=1)]] | None,
        BeforeValidator(_whole_numbers),
        Field(
            description="Subset sizes: k-anonymity for every subset of the quasi-identifiers of each size, "
            "sizes in turn (sdcMicro's combs), comma-separated."
        ),
    ] = None
    combs_k: Annotated[
        list[Annotated[Whole, Field(ge=1)]] | None,
        BeforeValidator(_whole_numbers),
        Field(description="k for each size of combs, in its order (default: k for every size)."),
    ] = None

    @model_validator(mode="after")
    def _one_k_per_size(self) -> LocalSuppressionParams:
        if self.combs_k is not None:
            if self.combs is None:
                raise ValueError("takes {combs_k} only with {combs} (one k per subset size)")
            if len(self.combs_k) != len(self.combs):
                raise ValueError(
                    f"{{combs_k}} must give one k per size of {{combs}} ({len(self.combs)}), "
                    f"got {len(self.combs_k)}"
                )
        for name in ("strata", "combs"):
            if getattr(self, name) == []:
                raise ValueError(f"{{{name}}} is empty: give at least one value or leave it out")
        return self


def _local_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import cell_figures
    from sdckit.utility import release_ncp

    return {
        "k": release.params.k,
        "missing": release.params.missing,
        "importance": release.figures_as(LocalSuppressionFigures).importance,
        "strict_importance": release.params.strict_importance,
        **{
            name: getattr(release.params, name)
            for name in ("strata", "combs", "combs_k")
            if getattr(release.params, name) is not None
        },
        **cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }


@register_method(
    "local-suppression",
    LocalSuppressionParams,
    summary=_local_summary,
    help="Suppress single values until k-anonymity, least important attributes first (sdcMicro).",
    report=lambda figures: [*cells_report(figures), *achieved_report(figures)],
    progress_label="suppression",
    not_reapplicable=(
        "which cells it suppresses depends on how rare each combination is in the whole data, not on "
        "each record's own values"
    ),
    partitioned=scaled.local_suppression,
    examples={
        "minimal": {"k": 2},
        "replay": {"k": 3},
    },
)
def _run_local_suppression(table: Table, params: LocalSuppressionParams, context: Context) -> Release:
    from sdckit.anonymize.base import config_value, quasi_identifiers

    params = params.model_copy(
        update={"missing": config_value(params.missing, context, "risk", "missing", "wildcard")}
    )
    return _suppress(
        table,
        params,
        quasi_identifiers=quasi_identifiers(table),
        ranks=None,
        weights=None,
        progress=context.progress,
    )
