"""QS (c,l)-diversity and QS t-closeness over beliefs of linking records to sensitive labels.

Shi, Xiong & Fung (2010) protect *quasi-sensitive* set-valued attributes: items that are harmless
alone but, matched with public external knowledge E (label -> item set), reveal a sensitive label. A
record ``t`` links to the labels K(t) whose item sets contain all of its items
(:func:`sdckit.setvalued.linked_labels`). With P(t -> L) = 1 / |K(t)| for L in K(t) and 0 otherwise
(section 2.1; a record that links to no label contributes nothing):

* the *posterior* belief of a QI group G is beta_(G,L) = (1/|G|) sum over t in G of P(t -> L);
* the *prior* belief alpha_L is what the adversary expects before seeing the release: "each label's
  frequencies in the microdata by counting the labels' accumulated frequencies in the mapped knowledge
  sets". We read this as the mean of P(t -> L) over *all* records of the table (records of every
  group, and suppressed records too), i.e. the posterior of the whole table taken as one group, so that
  a table with a single group has beta = alpha exactly. A caller can pass its own prior.

Both are computed for every group at once: the group-indicator matrix (scaled by 1/|G|) times the
sparse P matrix.

The models judge each group from its beliefs and answer with the package's
:class:`~sdckit.models.base.ModelResult` (``passes`` and ``achieved`` per group); they read
:class:`Beliefs` instead of :class:`~sdckit.models.base.ClassStatistics`, so they derive from the
small :class:`QSModel` base rather than :class:`~sdckit.models.base.PrivacyModel`. Both are monotonic:
the beliefs of the union of two groups are the size-weighted mean of theirs, and both conditions
survive such means (the recursive-diversity argument of Machanavajjhala et al. applies to any
non-negative weights; the Euclidean distance is convex).

References
----------
Shi, P., Xiong, L. & Fung, B. C. M. (2010). Anonymizing data with quasi-sensitive attribute values.
CIKM 2010, 1389-1392.
Machanavajjhala, A., Kifer, D., Gehrke, J. & Venkitasubramaniam, M. (2007). l-diversity: privacy beyond
k-anonymity. ACM TKDD 1(1), 3.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from pydantic import Field

from sdckit._numba import njit
from sdckit.errors import ConfigError
from sdckit.models.base import TOLERANCE, ModelResult, number_text
from sdckit.params import (
    C_BOUNDS,
    L_BOUNDS,
    QS_MAX_DISTANCE,
    QS_T_BOUNDS,
    Argument,
    Finite,
    QSDistance,
    Whole,
)
from sdckit.setvalued import ItemSets, Knowledge, linked_labels

__all__ = [
    "Beliefs",
    "QSCLDiversity",
    "QSCheck",
    "QSModel",
    "QSTCloseness",
    "beliefs",
    "link_probabilities",
    "qs_check",
]

#: Largest Euclidean distance between two probability vectors (point masses on different labels).
MAX_DISTANCE = QS_MAX_DISTANCE

_C = Argument("c", Finite, C_BOUNDS, option="--c")
_L = Argument("l", Whole, L_BOUNDS)
_T = Argument("t", QSDistance, QS_T_BOUNDS)
_N_GROUPS = Argument("n_groups", Whole, Field(ge=0))


@dataclass(frozen=True)
class Beliefs:
    """Prior and posterior beliefs of linking to each label of E.

    ``prior``: alpha, shape ``(|E|,)``. ``posterior``: beta, a ``groups x |E|`` CSR matrix whose stored
    entries are exactly the labels of K(G) (every stored value is positive, indices sorted).
    ``group_sizes``: records per group. ``label_counts``: |K(t)| of every record (0 for a record linking
    to no label).
    """

    prior: np.ndarray
    posterior: sp.csr_matrix
    group_sizes: np.ndarray
    label_counts: np.ndarray

    @property
    def n_groups(self) -> int:
        return self.posterior.shape[0]

    @property
    def n_labels(self) -> int:
        return self.posterior.shape[1]

    def group(self, g: int) -> np.ndarray:
        """The dense posterior of group ``g`` over all labels."""
        return self.posterior[g].toarray().ravel()


def link_probabilities(linked: sp.spmatrix) -> sp.csr_matrix:
    """P(t -> L) = 1/|K(t)| for L in K(t), else 0: the linked matrix with each row scaled by 1/|K(t)|."""
    linked = sp.csr_matrix(linked, dtype=bool)
    linked.eliminate_zeros()
    linked.sum_duplicates()
    counts = np.diff(linked.indptr)
    data = np.repeat(1.0 / np.maximum(counts, 1), counts)
    return sp.csr_matrix((data, linked.indices, linked.indptr), shape=linked.shape)


def beliefs(
    groups: np.ndarray,
    n_groups: int,
    linked: sp.spmatrix,
    prior: np.ndarray | None = None,
) -> Beliefs:
    """Prior and posterior beliefs of every QI group (Shi et al. 2010, section 2.1).

    ``groups[t]`` is the group of record ``t`` in ``0 .. n_groups-1``, or ``-1`` for a record in no
    group (suppressed): it is left out of the posteriors but counts in the prior. ``linked`` is the
    ``n x |E|`` matrix of :func:`~sdckit.setvalued.linked_labels`. ``prior`` defaults to the mean of
    P(t -> L) over all ``n`` records (see the module docstring). A group without records gets an
    all-zero posterior.
    """
    groups = np.asarray(groups)
    n_groups = _N_GROUPS(n_groups)
    if groups.ndim != 1 or groups.shape[0] != linked.shape[0]:
        raise ValueError(
            f"groups must hold one group per record ({linked.shape[0]}), got shape {groups.shape}"
        )
    if groups.size and (groups.min() < -1 or groups.max() >= n_groups):
        raise ValueError(f"groups must lie in -1 .. {n_groups - 1}")
    groups = groups.astype(np.int64, copy=False)
    probabilities = link_probabilities(linked)
    n, n_labels = probabilities.shape
    label_counts = np.diff(probabilities.indptr)
    if prior is None:
        prior = np.asarray(probabilities.sum(axis=0), dtype=np.float64).ravel() / max(n, 1)
    else:
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        if prior.shape != (n_labels,):
            raise ValueError(f"prior must hold one belief per label ({n_labels}), got shape {prior.shape}")
    kept = groups >= 0
    sizes = np.bincount(groups[kept], minlength=n_groups).astype(np.int64)
    members = np.flatnonzero(kept)
    weights = 1.0 / sizes[groups[members]]
    indicator = sp.csr_matrix((weights, (groups[members], members)), shape=(n_groups, n))
    posterior = (indicator @ probabilities).tocsr()
    posterior.eliminate_zeros()
    posterior.sort_indices()
    return Beliefs(prior=prior, posterior=posterior, group_sizes=sizes, label_counts=label_counts)


# Models ----------------------------------------------------------------------------------------------


class QSModel(ABC):
    """A QS privacy model evaluated over all QI groups at once, from their :class:`Beliefs`."""

    name: str
    monotonic: bool = True
    higher_is_better: bool = True

    @abstractmethod
    def evaluate(self, beliefs: Beliefs) -> ModelResult:
        """Whether each group passes, and what it achieves."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@njit(cache=True, nogil=True)
def _levels(indptr, data, c_parameter, tolerance):  # pragma: no cover - compiled
    """Per group, the number of l >= 1 with p_1 <= c (p_l + ... + p_m) + tolerance (inf if m = 0)."""
    n_groups = indptr.shape[0] - 1
    result = np.empty(n_groups)
    for g in range(n_groups):
        start = indptr[g]
        stop = indptr[g + 1]
        m = stop - start
        if m == 0:
            result[g] = np.inf
            continue
        ranked = np.sort(data[start:stop])  # ascending: ranked[m - l] is p_l
        first = ranked[m - 1]
        # The tails p_l + ... + p_m grow as l decreases: add the smallest p first; the first (smallest)
        # tail large enough gives l' (every smaller l passes too).
        level = 0
        tail = 0.0
        for i in range(m):
            tail += ranked[i]  # = p_(m-i) + ... + p_m
            if first <= c_parameter * tail + tolerance:
                level = m - i
                break
        result[g] = level
    return result


class QSCLDiversity(QSModel):
    """QS (c,l)-diversity (Shi et al. 2010, Definition 3).

    With the posteriors of a group's labels K(G) sorted p_1 >= p_2 >= ... >= p_m (m = |K(G)|, and p_i = 0
    for i > m), the group passes iff ``p_1 <= c (p_l + p_{l+1} + ... + p_m)``.

    Deviation (typo correction): the paper prints ``p_1 <= c (p_1 + p_{l+1} + ... + p_m)``, which with
    its default c = 1 always holds; we use the recursive (c,l) form of Machanavajjhala et al. that the
    paper says it builds on. The comparison is the paper's ``<=``, with tolerance 1e-12.

    Achieved value l': the largest l >= 1 satisfying the inequality (the satisfying l form a prefix
    1 .. l' since the tails shrink as l grows); l' <= m, since for l > m the tail is 0 < p_1; l' = 0 when
    even l = 1 fails (p_1 > c (p_1 + ... + p_m), possible only for c < 1). A group whose records link to
    no label (m = 0) reveals nothing: it passes with l' = inf. A group passes iff l' >= l.
    """

    monotonic = True
    higher_is_better = True

    def __init__(self, c: float = 1.0, l: int = 30) -> None:  # noqa: E741 (the literature's name)
        self.c: float = _C(c)
        self.l: int = _L(l)
        self.name = f"QS ({number_text(self.c)},{self.l})-diversity"

    def levels(self, beliefs: Beliefs) -> np.ndarray:
        """l' of every group."""
        posterior = beliefs.posterior
        return _levels(
            np.ascontiguousarray(posterior.indptr, dtype=np.int64),
            np.ascontiguousarray(posterior.data, dtype=np.float64),
            self.c,
            TOLERANCE,
        )

    def evaluate(self, beliefs: Beliefs) -> ModelResult:
        levels = self.levels(beliefs)
        return ModelResult(model=self.name, passes=levels >= self.l, achieved=levels, higher_is_better=True)


class QSTCloseness(QSModel):
    """QS t-closeness (Shi et al. 2010, Definition 4) with the paper's Euclidean distance.

    d(beta_G, alpha) = sqrt(sum over ALL labels L of E of (beta_(G,L) - alpha_L)^2); labels outside K(G)
    contribute alpha_L^2. A group passes iff d <= t (tolerance 1e-12). Achieved value: d. ``t`` lies in
    [0, sqrt 2], the largest distance between two probability vectors.
    """

    monotonic = True
    higher_is_better = False

    def __init__(self, t: float = 0.4) -> None:
        self.t: float = _T(t)
        self.name = f"QS {number_text(self.t)}-closeness"

    @staticmethod
    def distances(beliefs: Beliefs) -> np.ndarray:
        """The Euclidean distance between every group's posterior and the prior."""
        posterior, prior = beliefs.posterior, beliefs.prior
        n_groups = posterior.shape[0]
        rows = np.repeat(np.arange(n_groups, dtype=np.int64), np.diff(posterior.indptr))
        at = prior[posterior.indices]
        inside = np.bincount(rows, weights=(posterior.data - at) ** 2, minlength=n_groups)
        # Labels outside K(G) add alpha_L^2: all of sum alpha^2 minus the part inside K(G). When K(G)
        # covers every label with alpha > 0 that remainder is exactly 0 (no cancellation near d = 0).
        positive = prior > 0
        total = float(np.square(prior).sum())
        covered = np.bincount(rows, weights=np.square(at), minlength=n_groups)
        covered_count = np.bincount(rows, weights=positive[posterior.indices], minlength=n_groups)
        outside = np.where(covered_count >= np.count_nonzero(positive), 0.0, np.maximum(total - covered, 0.0))
        return np.sqrt(inside + outside)

    def evaluate(self, beliefs: Beliefs) -> ModelResult:
        distance = self.distances(beliefs)
        return ModelResult(
            model=self.name, passes=distance <= self.t + TOLERANCE, achieved=distance, higher_is_better=False
        )


# Convenience -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QSCheck:
    """What :func:`qs_check` found: the linking, the beliefs, each model's result, and the groups
    passing every model."""

    linked: sp.csr_matrix
    beliefs: Beliefs
    results: tuple[ModelResult, ...]
    passes: np.ndarray

    @property
    def n_violating(self) -> int:
        return int(np.count_nonzero(~self.passes))

    def summary(self) -> dict[str, object]:
        return {
            "groups": int(self.passes.size),
            "violating_groups": self.n_violating,
            "models": {
                result.model: {"violating_groups": result.n_violating, "worst": result.worst()}
                for result in self.results
            },
        }


def qs_check(
    groups: np.ndarray,
    n_groups: int,
    records: ItemSets,
    knowledge: Knowledge,
    models: Sequence[QSModel] | QSModel,
) -> QSCheck:
    """Link ``records`` to ``knowledge``, compute the beliefs of every group and evaluate ``models``."""
    if isinstance(models, QSModel):
        models = [models]
    models = list(models)
    for model in models:
        if not isinstance(model, QSModel):
            raise ConfigError(f"expected QS models (QSCLDiversity, QSTCloseness), got {model!r}")
    if records.n_records != np.asarray(groups).shape[0]:
        raise ValueError(f"groups must hold one group per record ({records.n_records})")
    linked = linked_labels(records, knowledge)
    found = beliefs(groups, n_groups, linked)
    results = tuple(model.evaluate(found) for model in models)
    passes = np.ones(found.n_groups, dtype=bool)
    for result in results:
        passes &= result.passes
    return QSCheck(linked=linked, beliefs=found, results=results, passes=passes)
