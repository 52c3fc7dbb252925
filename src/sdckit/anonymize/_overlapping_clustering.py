"""Overlapping correlation clustering (Bonchi, Gionis & Ukkonen 2011, 2013) as used by improved slicing.

Every object ``v`` (in improved slicing: an attribute) receives a *set* of labels ``ℓ(v) ⊆ {0..k-1}``
with ``1 <= |ℓ(v)| <= p``; the labelling should make a set similarity ``H(ℓ(u), ℓ(v))`` agree with the
given similarity ``s(u, v)``. The cost minimized is

    C(ℓ) = Σ_{u<v} | H(ℓ(u), ℓ(v)) − s(u, v) |

over unordered pairs, with ``H`` the Jaccard coefficient ``|X∩Y| / |X∪Y|`` or the set-intersection
indicator ``[X∩Y ≠ ∅]``. With ``p = 1`` and 0/1 similarities this is ordinary correlation clustering.

Label ids are **0-based** (``0..n_labels-1``) everywhere in this module; SPEC §2.5's example labels
``{1}, {2}, {3}`` are ``{0}, {1}, {2}`` here.

Local search (SPEC §2.2)
    Every restart draws a random labelling, then makes passes over the objects in a random order. For
    object ``v`` with the others fixed, a subproblem proposes a new label set; it is accepted when it lowers
    ``cost_v(X) = Σ_{u≠v} |H(X, ℓ(u)) − s(v, u)|`` (which is exactly the change of ``C``) by more than
    ``tol``. A pass that improves nothing ends the restart; the restart of lowest cost is returned.

Jaccard subproblem (SPEC §2.3)
    ``J(X, S_u) = z_u`` is linear in the indicator ``x`` of ``X``:
    ``(1+z_u)·Σ_{l∈S_u} x_l − z_u·Σ_l x_l = z_u·|S_u|``. The stacked system is solved by non-negative
    least squares (:func:`scipy.optimize.nnls`). **Rounding rule** (library choice; the papers only say
    the NNLS solution is rounded): labels are ranked by decreasing ``x̂`` (ties: smaller label id); the
    candidates are the top-``q`` sets for ``q = 1..p``, the current set ``ℓ(v)``, and ``{the smallest label
    no other object uses}`` when there is one; the candidate of smallest exact ``cost_v`` wins (ties:
    first in that order).

Intersection subproblem (SPEC §2.4)
    Greedy: the best single label (an unused label hits nobody; ties: smaller id), then repeatedly the label
    whose addition lowers ``cost_v`` most, while ``|X| < p`` and the decrease exceeds ``tol``. The current
    set is returned instead when the greedy set is not better.

β, the minimum number of groups (Dhaigude & Kumar, Algorithm 1)
    A *group* is a connected component of the non-empty labels, two labels being connected when some
    object carries both (the seed's Figure 1). The initial labelling must have at least ``β`` groups (the
    random draw is repeated up to 100 times, then a random labelling with one label per object and ``β``
    distinct labels is used, which always qualifies). After an object's new label set is chosen, the move is
    reverted when the number of groups would fall below ``β``. With ``β = n_labels`` every label must be its
    own group, so labels never overlap.

Deviations and library choices
    * **Exhaustive check at convergence.** The NNLS rounding and the greedy are heuristics, so a pass in
      which they find nothing is followed by a check pass that, object by object, evaluates *every* label
      set of size ``1..p`` (vectorized; skipped when there are more than 4,096 such sets) and applies the
      best one that improves ``cost_v`` by more than ``tol`` and keeps at least ``β`` groups. The search
      continues with subproblem passes after any such move, so on return (unless ``max_iter`` ran out)
      the labelling is a local optimum for single-object moves. ``iterations`` counts both kinds of pass.
    * The papers sum over ordered pairs; this module sums over unordered pairs (half the papers' value,
      same minimizers).
    * The diagonal of ``similarity`` is ignored; it is symmetrized as ``(S + Sᵀ)/2`` after the symmetry
      check (tolerance 1e-9).

References
----------
Bonchi, F., Gionis, A. and Ukkonen, A. (2011). Overlapping correlation clustering. *Proceedings of the
11th IEEE International Conference on Data Mining (ICDM)*, 51-60.

Bonchi, F., Gionis, A. and Ukkonen, A. (2013). Overlapping correlation clustering. *Knowledge and
Information Systems* 35(1), 1-32.

Dhaigude, A. A. and Kumar, P. (2014). Improved slicing algorithm for greater utility in privacy
preserving data publishing. (Algorithm 1, "Overlapped Clustering", and the β rule.)
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import comb
from typing import NamedTuple, TypeGuard, cast

import numpy as np
from scipy.optimize import nnls

from sdckit.errors import ConfigError

__all__ = [
    "OverlappingClustering",
    "occ_columns",
    "occ_cost",
    "overlapping_correlation_clustering",
]

FUNCTIONS = ("jaccard", "intersection")

# Random initial labellings drawn before falling back to a constructed one when beta is given.
_INIT_TRIES = 100
# Largest number of label sets of size 1..p evaluated by the exhaustive check pass.
_EXHAUSTIVE_LIMIT = 4096
_SYMMETRY_TOL = 1e-9


@dataclass(frozen=True)
class OverlappingClustering:
    """Result of :func:`overlapping_correlation_clustering`.

    Attributes
    ----------
    labels:
        The label set of every object (0-based label ids), in object order.
    cost:
        ``C(ℓ)`` over unordered pairs, recomputed exactly from ``labels``.
    n_groups:
        Number of groups: connected components of the non-empty labels, two labels being connected when
        some object carries both.
    restarts:
        Number of restarts run.
    iterations:
        Passes over the objects made by every restart (subproblem passes and exhaustive check passes).
    """

    labels: tuple[frozenset[int], ...]
    cost: float
    n_groups: int
    restarts: int
    iterations: list[int]

    def clusters(self) -> list[tuple[int, ...]]:
        """The member sets of the non-empty labels, identical ones merged, as sorted tuples of object
        indices, ordered by smallest member, then size, then lexicographically."""
        members: dict[int, list[int]] = {}
        for obj, label_set in enumerate(self.labels):
            for label in label_set:
                members.setdefault(label, []).append(obj)
        distinct = {tuple(sorted(m)) for m in members.values() if m}
        return sorted(distinct, key=lambda c: (c[0], len(c), c))


# ----------------------------------------------------------------------------------------------
# Validation


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_similarity(similarity: object) -> np.ndarray:
    """Validated float copy of ``similarity``, symmetrized, with a zero diagonal."""
    try:
        s = np.array(similarity, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"similarity: not a numeric matrix ({exc})") from None
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] == 0:
        raise ConfigError(f"similarity: must be a non-empty square matrix, got shape {s.shape}")
    np.fill_diagonal(s, 0.0)
    if not np.all(np.isfinite(s)):
        raise ConfigError("similarity: contains NaN or infinite values")
    if s.min() < 0.0 or s.max() > 1.0:
        raise ConfigError(
            f"similarity: off-diagonal values must lie in [0, 1], found {s.min():g}..{s.max():g}"
        )
    if not np.allclose(s, s.T, rtol=0.0, atol=_SYMMETRY_TOL):
        raise ConfigError("similarity: must be symmetric")
    return (s + s.T) / 2.0


def _check_function(function: object) -> str:
    if function not in FUNCTIONS:
        raise ConfigError(f"function: must be one of {', '.join(map(repr, FUNCTIONS))}, got {function!r}")
    return str(function)


# ----------------------------------------------------------------------------------------------
# Costs. Label sets are boolean indicator rows over the k labels.


def _set_costs(candidates: np.ndarray, others: np.ndarray, targets: np.ndarray, function: str) -> np.ndarray:
    """``cost_v`` of every candidate row: ``Σ_u |H(X, S_u) − z_u|`` over the rows ``S_u`` of ``others``.

    ``candidates`` is (c × k), ``others`` (M × k), ``targets`` (M,); returns (c,)."""
    c = np.asarray(candidates, dtype=np.float64)
    o = np.asarray(others, dtype=np.float64)
    inter = c @ o.T
    if function == "jaccard":
        union = c.sum(axis=1)[:, None] + o.sum(axis=1)[None, :] - inter
        h = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    else:
        h = (inter > 0).astype(np.float64)
    return np.abs(h - targets[None, :]).sum(axis=1)


def _total_cost(labels: np.ndarray, similarity: np.ndarray, function: str) -> float:
    """``C(ℓ)`` over unordered pairs for an (N × k) indicator matrix."""
    b = labels.astype(np.float64)
    inter = b @ b.T
    if function == "jaccard":
        sizes = b.sum(axis=1)
        union = sizes[:, None] + sizes[None, :] - inter
        h = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    else:
        h = (inter > 0).astype(np.float64)
    iu = np.triu_indices(labels.shape[0], k=1)
    return float(np.abs(h[iu] - similarity[iu]).sum())


def _count_groups(labels: np.ndarray) -> int:
    """Connected components of the non-empty labels (two labels connected when an object carries both)."""
    k = labels.shape[1]
    parent = list(range(k))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for row in labels:
        carried = np.flatnonzero(row)
        first = find(int(carried[0])) if carried.size else -1
        for label in carried[1:]:
            root = find(int(label))
            if root != first:
                parent[root] = first
    used = np.flatnonzero(labels.any(axis=0))
    return len({find(int(label)) for label in used})


def occ_cost(labels: Sequence[Collection[int]], similarity: np.ndarray, function: str = "jaccard") -> float:
    """Cost ``C(ℓ) = Σ_{u<v} |H(ℓ(u), ℓ(v)) − s(u, v)|`` of a labelling (Bonchi et al. 2011).

    ``labels[v]`` is the non-empty label set of object ``v`` (any integer ids); ``similarity`` is the
    symmetric (N × N) matrix with off-diagonal values in [0, 1] (diagonal ignored); ``function`` is
    ``"jaccard"`` or ``"intersection"``. Sums over unordered pairs (the papers' ordered sum is twice this).
    """
    s = _check_similarity(similarity)
    function = _check_function(function)
    if len(labels) != s.shape[0]:
        raise ConfigError(f"labels: {len(labels)} label sets for {s.shape[0]} objects")
    ids: set[int] = set()
    for v, label_set in enumerate(labels):
        if len(label_set) == 0:
            raise ConfigError(f"labels: object {v} has an empty label set")
        if not all(_is_int(label) for label in label_set):
            raise ConfigError(f"labels: object {v} has a non-integer label in {label_set!r}")
        ids.update(int(label) for label in label_set)
    column = {label: j for j, label in enumerate(sorted(ids))}
    matrix = np.zeros((s.shape[0], len(column)), dtype=bool)
    for v, label_set in enumerate(labels):
        matrix[v, [column[int(label)] for label in label_set]] = True
    return _total_cost(matrix, s, function)


# ----------------------------------------------------------------------------------------------
# Subproblems: the best label set of one object, the others fixed.


class _Subproblem(NamedTuple):
    best: np.ndarray  # (k,) bool: the chosen label set
    cost: float  # its exact cost_v
    candidates: np.ndarray  # (c, k) bool: the sets compared
    costs: np.ndarray  # (c,) their exact cost_v
    x_hat: np.ndarray | None  # NNLS solution (Jaccard only)
    residual: float | None  # NNLS residual norm ||A x̂ − b|| (Jaccard only)


def _jaccard_system(others: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The linear system ``A x = b`` whose 0/1 solutions are the sets X with ``J(X, S_u) = z_u`` for all u:
    ``row_u = (1+z_u)·1[S_u] − z_u·1``, ``b_u = z_u·|S_u|``."""
    o = np.asarray(others, dtype=np.float64)
    z = np.asarray(targets, dtype=np.float64)
    return (1.0 + z)[:, None] * o - z[:, None], z * o.sum(axis=1)


def _jaccard_subproblem(
    others: np.ndarray, targets: np.ndarray, max_labels: int, current: np.ndarray
) -> _Subproblem:
    """NNLS relaxation plus the candidate rounding described in the module docstring."""
    k = others.shape[1]
    a, b = _jaccard_system(others, targets)
    try:
        x_hat, residual = nnls(a, b)
    except RuntimeError:  # iteration limit: rank labels by id only
        x_hat, residual = np.zeros(k), float(np.linalg.norm(b))
    order = np.lexsort((np.arange(k), -x_hat))
    rows = np.zeros((max_labels + 2, k), dtype=bool)
    for q in range(1, max_labels + 1):
        rows[q - 1, order[:q]] = True
    rows[max_labels] = current
    n_rows = max_labels + 1
    unused = np.flatnonzero(~others.any(axis=0))
    if unused.size:
        rows[n_rows, unused[0]] = True
        n_rows += 1
    rows = rows[:n_rows]
    costs = _set_costs(rows, others, targets, "jaccard")
    i = int(np.argmin(costs))
    return _Subproblem(rows[i].copy(), float(costs[i]), rows, costs, x_hat, float(residual))


def _intersection_subproblem(
    others: np.ndarray, targets: np.ndarray, max_labels: int, current: np.ndarray, tol: float
) -> _Subproblem:
    """Greedy for ``H = intersection``: ``cost_v(X) = Σ_z + Σ_{u hit by X} (1 − 2 z_u)``.

    ``candidates``/``costs`` of the result are the greedy's successive sets and their costs."""
    k = others.shape[1]
    o = others.astype(np.float64)
    z = np.asarray(targets, dtype=np.float64)
    gain = 1.0 - 2.0 * z  # change of cost_v when u becomes hit
    singles = z.sum() + o.T @ gain
    label = int(np.argmin(singles))
    chosen = np.zeros(k, dtype=bool)
    chosen[label] = True
    hit = others[:, label].copy()
    cost = float(singles[label])
    steps = [chosen.copy()]
    step_costs = [cost]
    while chosen.sum() < max_labels:
        delta = (others & ~hit[:, None]).astype(np.float64).T @ gain
        delta[chosen] = np.inf
        label = int(np.argmin(delta))
        if not delta[label] < -tol:
            break
        chosen[label] = True
        hit |= others[:, label]
        cost += float(delta[label])
        steps.append(chosen.copy())
        step_costs.append(cost)
    # The current set is kept when the greedy set is not better (never propose a worse set).
    rows = np.vstack([chosen[None, :], np.asarray(current, dtype=bool)[None, :]])
    exact = _set_costs(rows, others, z, "intersection")
    best = 0 if exact[0] <= exact[1] else 1
    return _Subproblem(
        rows[best].copy(), float(exact[best]), np.array(steps), np.array(step_costs), None, None
    )


@lru_cache(maxsize=64)
def _all_label_sets(k: int, max_labels: int) -> np.ndarray:
    """Every label set of size 1..max_labels as (c × k) boolean rows, by size then lexicographically."""
    rows = []
    for q in range(1, max_labels + 1):
        for combo in combinations(range(k), q):
            row = np.zeros(k, dtype=bool)
            row[list(combo)] = True
            rows.append(row)
    out = np.array(rows, dtype=bool).reshape(-1, k)
    out.flags.writeable = False
    return out


def _n_label_sets(k: int, max_labels: int) -> int:
    return sum(comb(k, q) for q in range(1, max_labels + 1))


# ----------------------------------------------------------------------------------------------
# Local search

MoveCallback = Callable[[np.ndarray, np.ndarray], None]


def _initial_labels(
    n: int, k: int, per_object: np.ndarray, beta: int | None, rng: np.random.Generator
) -> np.ndarray:
    """Random labelling (size ~ Uniform{1..p_v}, then a uniform subset); with ``beta`` redrawn until it has
    at least ``beta`` groups, falling back to one label per object with ``beta`` distinct labels."""
    for _ in range(_INIT_TRIES if beta is not None and beta > 1 else 1):
        labels = np.zeros((n, k), dtype=bool)
        for v in range(n):
            size = int(rng.integers(1, per_object[v] + 1))
            labels[v, rng.choice(k, size=size, replace=False)] = True
        if beta is None or beta <= 1 or _count_groups(labels) >= beta:
            return labels
    distinct = rng.choice(k, size=beta, replace=False)
    objects = rng.permutation(n)
    labels = np.zeros((n, k), dtype=bool)
    labels[objects[:beta], distinct] = True
    for v in objects[beta:]:
        labels[v, rng.integers(k)] = True
    return labels


def _local_search(
    similarity: np.ndarray,
    k: int,
    per_object: np.ndarray,
    function: str,
    beta: int | None,
    max_iter: int,
    tol: float,
    rng: np.random.Generator,
    on_move: MoveCallback | None = None,
) -> tuple[np.ndarray, int]:
    """One restart of the local search; returns the labelling and the number of passes made.

    ``on_move(before, after)`` (tests) receives copies of the labelling around every accepted move."""
    n = similarity.shape[0]
    labels = _initial_labels(n, k, per_object, beta, rng)
    if n < 2:
        return labels, 0
    others_of = [np.delete(np.arange(n), v) for v in range(n)]
    # The fewest groups a move must leave (None: any number).
    minimum_groups = beta if beta is not None and beta > 1 else None
    exhaustive_ok = all(_n_label_sets(k, int(p)) <= _EXHAUSTIVE_LIMIT for p in set(per_object.tolist()))

    def keeps_groups(v: int, new: np.ndarray) -> bool:
        if minimum_groups is None:
            return True
        trial = labels.copy()
        trial[v] = new
        return _count_groups(trial) >= minimum_groups

    def apply(v: int, new: np.ndarray) -> None:
        if on_move is None:
            labels[v] = new
            return
        before = labels.copy()
        labels[v] = new
        on_move(before, labels.copy())

    passes = 0
    exhaustive = False
    while passes < max_iter:
        passes += 1
        improved = False
        for v in rng.permutation(n):
            idx = others_of[v]
            others = labels[idx]
            z = similarity[v, idx]
            current = labels[v].copy()
            current_cost = float(_set_costs(current[None, :], others, z, function)[0])
            if exhaustive:
                sets = _all_label_sets(k, int(per_object[v]))
                costs = _set_costs(sets, others, z, function)
                for i in np.argsort(costs, kind="stable"):
                    if not costs[i] < current_cost - tol:
                        break
                    if keeps_groups(v, sets[i]):
                        apply(v, sets[i])
                        improved = True
                        break
                continue
            if function == "jaccard":
                sub = _jaccard_subproblem(others, z, int(per_object[v]), current)
            else:
                sub = _intersection_subproblem(others, z, int(per_object[v]), current, tol)
            # Seed Algorithm 1: take the subproblem's set, revert if fewer than beta groups remain.
            if sub.cost < current_cost - tol and keeps_groups(v, sub.best):
                apply(v, sub.best)
                improved = True
        if improved:
            exhaustive = False
        elif not exhaustive and exhaustive_ok:
            exhaustive = True
        else:
            break
    return labels, passes


def _validate(
    n: int,
    n_labels: object,
    max_labels: object,
    beta: object,
    single_label: object,
    max_iter: object,
    n_restarts: object,
    tol: object,
) -> tuple[int, ...]:
    if not _is_int(n_labels) or n_labels < 1:
        raise ConfigError(f"n_labels: must be an integer >= 1, got {n_labels!r}")
    if not _is_int(max_labels) or not 1 <= max_labels <= n_labels:
        raise ConfigError(f"max_labels: must be an integer in 1..n_labels={n_labels}, got {max_labels!r}")
    if beta is not None:
        if not _is_int(beta) or not 1 <= beta <= n_labels:
            raise ConfigError(f"beta: must be an integer in 1..n_labels={n_labels}, got {beta!r}")
        if beta > n:
            raise ConfigError(f"beta: {beta} groups are impossible with {n} objects")
    try:
        # Any iterable of indices; anything else raises TypeError, reported below.
        singles = tuple(cast(Iterable[object], single_label))
    except TypeError:
        raise ConfigError(
            f"single_label: must be a sequence of object indices, got {single_label!r}"
        ) from None
    indices: list[int] = []
    for index in singles:
        if not _is_int(index) or not 0 <= index < n:
            raise ConfigError(f"single_label: object index {index!r} out of range 0..{n - 1}")
        indices.append(int(index))
    if not _is_int(max_iter) or max_iter < 1:
        raise ConfigError(f"max_iter: must be an integer >= 1, got {max_iter!r}")
    if not _is_int(n_restarts) or n_restarts < 1:
        raise ConfigError(f"n_restarts: must be an integer >= 1, got {n_restarts!r}")
    if not isinstance(tol, numbers.Real) or isinstance(tol, bool) or not 0.0 <= float(tol) < np.inf:
        raise ConfigError(f"tol: must be a finite number >= 0, got {tol!r}")
    return tuple(indices)


def overlapping_correlation_clustering(
    similarity: np.ndarray,
    n_labels: int,
    *,
    max_labels: int = 2,
    function: str = "jaccard",
    beta: int | None = None,
    single_label: Sequence[int] = (),
    max_iter: int = 100,
    n_restarts: int = 10,
    tol: float = 1e-9,
    seed: int | None = 0,
) -> OverlappingClustering:
    """Overlapping correlation clustering by local search (Bonchi, Gionis & Ukkonen 2011).

    Finds label sets ``ℓ(v) ⊆ {0..n_labels-1}``, ``1 <= |ℓ(v)| <= max_labels``, minimizing
    ``C(ℓ) = Σ_{u<v} |H(ℓ(u), ℓ(v)) − s(u, v)|`` (see the module docstring for the subproblems, the NNLS
    rounding rule, the β rule and the deviations).

    Parameters
    ----------
    similarity:
        Symmetric (N × N) matrix, off-diagonal values in [0, 1]; the diagonal is ignored.
    n_labels:
        Number of labels k.
    max_labels:
        Maximum labels per object p, ``1 <= p <= n_labels``.
    function:
        ``"jaccard"`` (NNLS subproblem) or ``"intersection"`` (greedy subproblem).
    beta:
        Minimum number of groups (Dhaigude & Kumar, Algorithm 1), ``1..n_labels`` and at most N; None = no
        constraint.
    single_label:
        Objects restricted to exactly one label (improved slicing: the sensitive attribute).
    max_iter, n_restarts, tol:
        Passes per restart, number of random restarts, and the improvement a move must exceed.
    seed:
        Seed of the :class:`numpy.random.Generator` driving initializations and visiting orders.

    Returns
    -------
    OverlappingClustering
        The best restart's labelling (lowest cost; ties: the earliest restart).
    """
    s = _check_similarity(similarity)
    function = _check_function(function)
    n = s.shape[0]
    singles = _validate(n, n_labels, max_labels, beta, single_label, max_iter, n_restarts, tol)
    k, p = int(n_labels), int(max_labels)
    per_object = np.full(n, p, dtype=np.int64)
    per_object[list(singles)] = 1
    rng = np.random.default_rng(seed)

    best_labels: np.ndarray | None = None
    best_cost = np.inf
    iterations: list[int] = []
    for _ in range(int(n_restarts)):
        labels, passes = _local_search(
            s, k, per_object, function, None if beta is None else int(beta), int(max_iter), float(tol), rng
        )
        iterations.append(passes)
        cost = _total_cost(labels, s, function)
        if cost < best_cost:
            best_cost, best_labels = cost, labels
    assert best_labels is not None
    return OverlappingClustering(
        labels=tuple(frozenset(int(label) for label in np.flatnonzero(row)) for row in best_labels),
        cost=float(best_cost),
        n_groups=_count_groups(best_labels),
        restarts=int(n_restarts),
        iterations=iterations,
    )


def occ_columns(
    similarity: np.ndarray,
    names: Sequence[str],
    *,
    beta: int = 2,
    max_labels: int = 2,
    sensitive: str | None = None,
    function: str = "jaccard",
    n_restarts: int = 10,
    seed: int | None = 0,
    n_labels: int | None = None,
) -> list[tuple[str, ...]]:
    """Overlapping columns for improved slicing (SPEC §2.6; Dhaigude & Kumar, Section 2.1).

    Objects are attributes (``names``, in the order of ``similarity``'s rows; improved slicing uses
    ``s = φ²``). Runs :func:`overlapping_correlation_clustering` with ``beta`` (minimum number of groups),
    the sensitive attribute restricted to one label, starting with ``n_labels`` labels (default ``beta``)
    and adding one label at a time while fewer than ``beta`` distinct non-empty columns result (at most one
    label per attribute). Empty labels are dropped and labels with identical members merged.

    Note that with ``n_labels = beta`` the β rule makes every label its own group, so the columns cannot
    overlap; pass a larger ``n_labels`` (the seed varies the number of columns with β = 2) to allow overlap.
    ``n_labels`` is an addition to the interface of the brief (keyword, default = SPEC's start at ``beta``).

    Returns the columns as tuples of names (attribute order within a column follows ``names``), ordered as
    :meth:`OverlappingClustering.clusters`, except that the column holding ``sensitive`` comes last.
    """
    names = list(names)
    s = _check_similarity(similarity)
    n = s.shape[0]
    if len(names) != n:
        raise ConfigError(f"names: {len(names)} names for a {n} x {n} similarity matrix")
    if len(set(names)) != n:
        raise ConfigError("names: attribute names must be unique")
    if not _is_int(beta) or not 1 <= beta <= n:
        raise ConfigError(f"beta: must be an integer in 1..{n} (the number of attributes), got {beta!r}")
    if sensitive is not None and sensitive not in names:
        raise ConfigError(f"sensitive: {sensitive!r} is not one of the attribute names")
    if n_labels is None:
        n_labels = int(beta)
    if not _is_int(n_labels) or n_labels < beta:
        raise ConfigError(f"n_labels: must be an integer >= beta={beta}, got {n_labels!r}")
    if not _is_int(max_labels) or max_labels < 1:
        raise ConfigError(f"max_labels: must be an integer >= 1, got {max_labels!r}")
    singles = () if sensitive is None else (names.index(sensitive),)

    k = int(n_labels)
    while True:
        result = overlapping_correlation_clustering(
            s,
            k,
            max_labels=min(int(max_labels), k),
            function=function,
            beta=int(beta),
            single_label=singles,
            n_restarts=n_restarts,
            seed=seed,
        )
        clusters = result.clusters()
        if len(clusters) >= beta or k >= n:
            break
        k += 1
    columns = [tuple(names[i] for i in c) for c in clusters]
    if sensitive is not None:
        last = [c for c in columns if sensitive in c]
        columns = [c for c in columns if sensitive not in c] + last
    return columns
