"""Query restriction with a simulatable audit: exact answers, refused when they would disclose.

Threshold k = ``min_query_set``, N records. Each analyst is audited alone, on each data source
(every dataset entry over one data file shares the analyst's audit).

Public and confidential attributes
    An attribute is *confidential* when its role is sensitive or quasi-sensitive
    (:attr:`Engine.confidential <sdckit.query.engine.Engine.confidential>`, or a list the caller
    gives); the others (the quasi-identifiers) are *public*: the analyst is assumed to know them
    for every record, as in Kenthapadi, Mishra & Nissim (2005), where a query set is a set of
    record indices. The audit reads the public attributes and the queries, never a confidential
    value and never the answer about to be given.

Why the audit must not look at the data (Kenthapadi, Mishra & Nissim, "Simulatable auditing",
PODS 2005)
    A refusal is itself an answer. With k = 10 and a target T described by public attributes (a
    unique school and birth year), ``count(T and dropout = Yes or ethnicity = White)`` followed by
    ``count(ethnicity = White)``: an audit on the real query sets refuses the second exactly when
    T's dropout is Yes (the two sets then differ by one record). Here the decision to answer or
    refuse depends only on the queries and the public attributes, so it is the same for every
    dataset with the same public attributes: the analyst could have computed it, and it tells
    nothing. That query is refused at once, for every dataset (its exposure, below, is {T}).

The rows of a query
    For each group of a query (the query set itself without group-by; each group of a group-by;
    each bin of a histogram), the filters and the group's key (or bin) are evaluated in Kleene's
    three-valued logic (:meth:`Engine.envelope <sdckit.query.engine.Engine.envelope>`): a comparison
    on a confidential attribute is *unknown* for every record (missing values included), a
    comparison on a public attribute is exact (a comparison with a missing value is false, as in
    the answers). A group key or bin on a confidential column is an unknown comparison too.
    C = the records surely in the group, V = those possibly but not surely in it.

    - the *envelope* C ∪ V: every record that may be in the group. It carries the classic
      query-set-size control and the classic audit of what the answers tell about who is in which
      set (for a query on public attributes only, V is empty and the envelope is the query set);
    - the *exposure*: the records whose confidential values enter the answer. V for a count or a
      histogram, and for a sum, mean or quantile of a public column; C ∪ V for a sum or mean of a
      confidential column. For a sum, mean or quantile of a public column, a query that compares
      or groups by a confidential column is audited as the same query restricted to the records
      whose value of that column is present (the answers are the same for every dataset; those
      records add nothing whatever their confidential values): all its rows leave them out;
    - the *function classes* of the exposure (an addition to the design, see "Deviations"): its
      records split by the function of the record's confidential values through which the record
      enters the answer. That function is determined by the query and the record's public
      attributes: the filters with every public comparison replaced by its value for the record
      and simplified (constants propagated, ``and``/``or`` flattened, sorted, without repeats),
      and for a sum, mean or quantile of a public column, the record's value of that column.
      When the exposure is one class, no row is added.

The checks, in order (all on these rows, none on the data's confidential values)
    1. Query-set-size control: refused (reason ``query_set_size``) when a row R, among the
       envelopes, the non-empty exposures and the function classes, has |R| < k or N − |R| < k.
    2. Pairwise audit: refused (reason ``audit``) when a new row and one answered before differ
       by 0 < |A \\ B| < k records either way (the differencing attack count(all) − count(all but
       the victim) and the overlap of two nearly equal sets).
    3. Exact linear audit (Chin & Özsoyoglu 1982; Dobkin, Jones & Lipton 1979): the rows answered
       before, the new rows and the whole dataset (N and the totals over all records are taken as
       known) are the rows of a 0/1 matrix; records with the same membership in every row form an
       atom. The total over an atom is determined by the answers iff the atom's unit vector e_a
       lies in the row space of the atom-level matrix, i.e. iff its leverage (squared norm of its
       column of the right singular vectors of the non-zero singular values) is 1. Refused
       (reason ``audit``) when an atom of fewer than k records is determined. This covers every
       linear combination of answers: differences, intersections with complements, trackers
       (Denning's general tracker q(C) = q(C ∨ T) + q(C ∨ ¬T) − q(T) − q(¬T)).
    4. A quantile of a confidential column is refused (reason ``not_supported``): its answer is
       one record's exact value. This depends on the query only.

Why one merged audit suffices although the answers are different functions of the records
    Envelopes, exposures and classes are rows of the same atom matrix. Each answer A_j is a public
    constant plus Σ_R Σ_{i ∈ R} f_R(y_i) over its function classes R (its exposure when that is
    one class), y_i being record i's confidential values and f_R one function for the whole
    class. A combination Σ_j λ_j A_j is then a constant plus Σ_i F_i(y_i), F_i = Σ_{R ∋ i} λ_R f_R
    (λ_R = λ_j for the classes of answer j). Suppose it were a non-constant function of the
    records of one atom a alone: F_i is constant for i outside a, and F_i = F_{i'} for i, i' in a
    (same membership in every row). Take two points u, v of the confidential domain with
    F_{i*}(u) ≠ F_{i*}(v) for an i* in a: the combination of rows Σ_R λ_R (f_R(u) − f_R(v)) R has
    entry F_i(u) − F_i(v) at record i, 0 outside a and one non-zero number on a. So e_a lies in
    the row space of the rows: what the leverage test checks. The argument needs one function per
    row, hence the function classes. Without them, with S a public set of 10 or more records
    holding T: ``count(S and dropout = Yes)`` and ``count(S and (dropout = Yes and not T or
    dropout = No and T))`` have the same envelope and exposure S and differ by ±1 according to
    T's dropout; ``count(S and dropout = Yes)`` and ``sum(birth_year where S and dropout = Yes)``,
    S holding records born in 1990 and T born in 1991, give T's dropout as sum − 1990 · count;
    and the group ``No`` of ``count(S and (dropout = Yes and not T or dropout = No and T))``
    grouped by dropout counts T's ``dropout = No`` alone. With the classes all three are refused.

Why the audit is simulatable
    The rows are functions of the query, the keys of the groups and the public attributes only:
    :func:`audit_rows` reads the data only through :class:`_Public`, which evaluates comparisons
    on public columns (through ``Engine.envelope``) and reads the values of a public aggregated
    column, and refuses a confidential one. The auditor's state is the rows it answered. So two
    datasets with the same public attributes, asked the same queries, get the same refusals.

What it does not cover (tell the analysts' supervisor)
    - collusion between analysts: each analyst is audited alone;
    - a total over a union of several small atoms that is determined while none of them is;
    - non-linear inference: means are audited as their sums and counts, quantiles of a public
      column as the counts of its classes; a count of 0 or of the whole exposure, or a bound on
      a value, still tells something about every record of the exposure;
    - answers to queries on public attributes only reveal those public attributes exactly
      (assumed known anyway);
    - the public attributes are assumed known to the analyst: if a quasi-identifier is in fact
      secret, declare it sensitive (or quasi-sensitive);
    - which keys a group-by or histogram has: the rows do not depend on the values of keys of a
      confidential column, but an empty list of keys gives no rows. Take the keys of a
      confidential column from a declared domain (the attribute configuration's ``values`` or the
      server's ``domains``), not from the data.

Consequences to expect (both conservative, from the envelope's classic audit): a query whose
filters are all on confidential attributes has the whole dataset as envelope and is refused by
size control (N − N < k), as ``count(all)`` is: restrict it by a public filter (``gender = F and
dropout = Yes``). And records that are surely in a group of a count (C) add a public constant
only, but when there are fewer than k of them beside a non-empty exposure they form an atom the
rows determine (envelope − exposure), and the query is refused.

Cost, on 1,000,000 generated records (``python -m examples.generate --records 1000000 --seed 1``,
one analyst, one query after the other): ``count(gender = F and dropout = Yes)`` 0.1 s for the
rows, 0.03 s for the audit; a sum of birth_year over ``gender = F and (dropout = Yes or retained
= Yes)`` (27 classes) 0.7 s and 0.06 s; a count grouped by parish (64 groups, 128 classes) 0.6 s
and 0.4 s; then a count of ``dropout = Yes`` grouped by school (1,899 groups) 11 s and 113 s
(the singular value decomposition of about 2,000 rows over the atoms), 6 GB at the peak.

Deviations from the design of issue 30
    - the function classes (above), needed for the proof and against the two attacks it names;
      they are size-controlled and audited like exposures;
    - the rows of an aggregate of a public column with a confidential comparison leave out the
      records whose value of that column is missing (above): otherwise, with the classes, fewer
      than k such records would form an atom that the rows determine, and the query would be
      refused for nothing;
    - the filters' envelope is evaluated once per query and intersected with each group's key
      envelope (the same result: Kleene's ``and`` is associative and commutative);
    - :meth:`Auditor.check` also takes a plain list of sets, treated as envelopes (the tests and
      callers of the former ``protection.Auditor``).

In memory, per analyst and dataset, the auditor keeps one atom number per record and the answered
rows as a 0/1 matrix over the atoms.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from sdckit.query.engine import Engine
from sdckit.query.errors import Refused
from sdckit.query.language import And, Filter, Not, Query

LEVERAGE_TOLERANCE = 1e-8

_FALSE, _TRUE = 0, 1


def check_restricted_query(query: Query, confidential: Iterable[str]) -> None:
    """Refuse (``not_supported``) what restriction does not answer whatever the data: a quantile
    of a confidential column (its answer is one record's exact value)."""
    if query.aggregate == "quantile" and query.column in set(confidential):
        raise Refused(
            f"a quantile of the confidential column '{query.column}' is one record's exact value: "
            "it is not answered under query restriction",
            reason="not_supported",
        )


@dataclass(frozen=True)
class AuditRows:
    """The rows of one query (boolean arrays over the records): per group, its envelope and its
    exposure (possibly empty), and the function classes of the exposures that hold more than
    one (see the module docstring). Groups may share one array, some read-only: do not modify
    them."""

    envelopes: list[np.ndarray]
    exposures: list[np.ndarray]
    classes: list[np.ndarray] = field(default_factory=list)

    def sized(self) -> list[tuple[str, np.ndarray]]:
        """The rows that are size-controlled and audited, with their kind: every envelope, the
        non-empty exposures, the classes."""
        return (
            [("envelope", row) for row in self.envelopes]
            + [("exposure", row) for row in self.exposures if row.any()]
            + [("class", row) for row in self.classes]
        )


# --- the rows of a query, from public information only -----------------------------------------


def _leaf_key(node: Filter) -> tuple[Any, ...]:
    value = tuple(node.value) if isinstance(node.value, list) else node.value
    return (node.column, node.op, value)


class _Public:
    """The only access of :func:`audit_rows` to the data: exact comparisons on public columns (through
    ``Engine.envelope``) and the values of a public column; a confidential column is refused."""

    def __init__(self, engine: Engine, confidential: Iterable[str]) -> None:
        self.engine = engine
        self.confidential = frozenset(confidential)
        self._exact: dict[tuple[Any, ...], np.ndarray] = {}
        surely = np.zeros(engine.records, dtype=bool)
        possibly = np.ones(engine.records, dtype=bool)
        surely.setflags(write=False)
        possibly.setflags(write=False)
        self.unknown = (surely, possibly)

    def _public(self, column: str) -> None:
        if column in self.confidential:
            raise AssertionError(f"the audit may not read the confidential column '{column}'")

    def exact(self, node: Filter) -> np.ndarray:
        """The records for which a comparison on a public column holds."""
        key = _leaf_key(node)
        if key not in self._exact:
            self._public(node.column)
            member, _ = self.engine.envelope([node], lambda _: None)
            member.setflags(write=False)
            self._exact[key] = member
        return self._exact[key]

    def leaf(self, node: Filter) -> tuple[np.ndarray, np.ndarray]:
        """``Engine.envelope``'s leaf: unknown on a confidential column, exact on a public one."""
        if node.column in self.confidential:
            return self.unknown
        member = self.exact(node)
        return member, member

    def values(self, column: str) -> np.ndarray:
        """A public column's values as floats (NaN where missing)."""
        self._public(column)
        return self.engine.frame.get_column(column).cast(pl.Float64).to_numpy()

    def envelope(self, nodes: list[Any], keep: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``Engine.envelope`` of ``nodes`` with :meth:`leaf`; ``keep=False``: the exact comparisons
        are evaluated without being kept (they are all on public columns)."""
        if keep:
            return self.engine.envelope(nodes, self.leaf)
        for node in nodes:
            self._public(node.column)
        return self.engine.envelope(nodes, lambda _: None)


class _Formulas:
    """Residual formulas over the confidential comparisons, hash-consed: 0 is false, 1 true, and
    each other formula an integer. Built only by constant propagation, flattening, sorting and
    removing repeats, so a formula is constant exactly when Kleene's evaluation is known."""

    def __init__(self) -> None:
        self.table: list[tuple[Any, ...]] = [("false",), ("true",)]
        self.ids: dict[tuple[Any, ...], int] = {}

    def comparison(self, node: Filter) -> int:
        return self.intern(("comparison", _leaf_key(node)))

    def intern(self, formula: tuple[Any, ...]) -> int:
        if formula not in self.ids:
            self.ids[formula] = len(self.table)
            self.table.append(formula)
        return self.ids[formula]

    def negate(self, a: int) -> int:
        if a in (_FALSE, _TRUE):
            return _TRUE - a
        formula = self.table[a]
        return formula[1] if formula[0] == "not" else self.intern(("not", a))

    def combine(self, op: str, a: int, b: int) -> int:
        absorbing, neutral = (_FALSE, _TRUE) if op == "and" else (_TRUE, _FALSE)
        if absorbing in (a, b):
            return absorbing
        if a == neutral:
            return b
        if b == neutral:
            return a
        parts = sorted(set(self._parts(op, a)) | set(self._parts(op, b)))
        return parts[0] if len(parts) == 1 else self.intern((op, tuple(parts)))

    def _parts(self, op: str, a: int) -> tuple[int, ...]:
        formula = self.table[a]
        return formula[1] if formula[0] == op else (a,)

    def unary(self, function: Callable[[int], int], a: np.ndarray) -> np.ndarray:
        distinct, inverse = np.unique(a, return_inverse=True)
        return np.array([function(int(x)) for x in distinct], dtype=np.int64)[inverse]

    def binary(self, op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        size = len(self.table)
        distinct, inverse = np.unique(a * size + b, return_inverse=True)
        mapped = [self.combine(op, int(x) // size, int(x) % size) for x in distinct]
        return np.array(mapped, dtype=np.int64)[inverse]


def _residuals(public: _Public, formulas: _Formulas, nodes: list[Any], index: np.ndarray) -> np.ndarray:
    """The residual formula of the conjunction of ``nodes`` for each record of ``index``."""

    def walk(node: Any) -> np.ndarray:
        if isinstance(node, Filter):
            if node.column in public.confidential:
                return np.full(len(index), formulas.comparison(node), dtype=np.int64)
            return public.exact(node)[index].astype(np.int64)
        if isinstance(node, Not):
            return formulas.unary(formulas.negate, walk(node.not_))
        op, children = ("and", node.and_) if isinstance(node, And) else ("or", node.or_)
        out = walk(children[0])
        for child in children[1:]:
            out = formulas.binary(op, out, walk(child))
        return out

    out = np.full(len(index), _TRUE, dtype=np.int64)
    for node in nodes:
        out = formulas.binary("and", out, walk(node))
    return out


def _mentions(query: Query, confidential: frozenset[str]) -> bool:
    """Whether the query compares or groups by a confidential column."""

    def walk(node: Any) -> bool:
        if isinstance(node, Filter):
            return node.column in confidential
        if isinstance(node, Not):
            return walk(node.not_)
        return any(walk(child) for child in (node.and_ if isinstance(node, And) else node.or_))

    return any(walk(node) for node in query.filters) or any(name in confidential for name in query.group_by)


def _key_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else value


def _groups(query: Query, keys: list[tuple] | None, edges: list[float] | None) -> list[list[Filter]]:
    """The key predicate of each group, as comparisons (none without group-by)."""
    if edges is not None:
        column = query.column
        last = len(edges) - 2
        return [
            [
                Filter.model_construct(column=column, op=">=", value=float(edges[b])),
                Filter.model_construct(
                    column=column, op="<=" if b == last else "<", value=float(edges[b + 1])
                ),
            ]
            for b in range(len(edges) - 1)
        ]
    if keys is None:
        return [[]]
    by = [query.column] if query.aggregate == "histogram" else list(query.group_by)
    return [
        [
            Filter.model_construct(column=name, op="=", value=_key_value(value))
            for name, value in zip(by, key, strict=True)
        ]
        for key in keys
    ]


def audit_rows(
    engine: Engine,
    query: Query,
    keys: list[tuple] | None,
    edges: list[float] | None,
    confidential: Iterable[str] | None = None,
) -> AuditRows:
    """The rows the audit decides on, for ``query`` on ``engine`` (module docstring), computed from
    the query and the public attributes only.

    ``keys`` are the group keys of the effective query (a categorical histogram is a count grouped
    by its column), in the order of its group-by, or None; ``edges`` the bin edges of a numeric
    histogram, or None (as ``QueryService._keys`` and ``_edges`` give them). ``confidential``
    defaults to ``engine.confidential``. Raises :class:`Refused` for a quantile of a confidential
    column.
    """
    confidential = list(engine.confidential if confidential is None else confidential)
    check_restricted_query(query, confidential)
    public = _Public(engine, confidential)
    formulas = _Formulas()
    histogram = query.aggregate == "histogram"
    column = None if histogram else query.column
    weighted = column is not None and column not in public.confidential  # an aggregate of a public column
    x = public.values(column) if weighted else None  # type: ignore[arg-type]

    filter_surely, filter_possibly = public.envelope(list(query.filters))
    if weighted and _mentions(query, public.confidential):
        # the answer is that of the same query restricted to the records whose value is present
        present = ~np.isnan(x)  # type: ignore[arg-type]
        filter_surely &= present
        filter_possibly &= present
    candidates = np.flatnonzero(filter_possibly)
    filter_residual = np.zeros(engine.records, dtype=np.int64)
    filter_residual[candidates] = _residuals(public, formulas, list(query.filters), candidates)

    nothing = np.zeros(engine.records, dtype=bool)
    nothing.setflags(write=False)
    envelopes, exposures, classes = [], [], []
    for key_nodes in _groups(query, keys, edges):
        # the key's envelope: exact on its public comparisons (not kept: a group-by may have
        # thousands of keys), unknown on its confidential ones, whose conjunction is `secret`
        exact = [node for node in key_nodes if node.column not in public.confidential]
        secret = _TRUE
        for node in key_nodes:
            if node.column in public.confidential:
                secret = formulas.combine("and", secret, formulas.comparison(node))
        if exact:
            member, _ = public.envelope(exact, keep=False)
            surely = filter_surely & member if secret == _TRUE else nothing
            possibly = filter_possibly & member
        else:
            surely = filter_surely if secret == _TRUE else nothing
            possibly = filter_possibly  # shared by the groups: one array in memory
        index = np.flatnonzero(possibly)
        residual = formulas.unary(
            functools.partial(formulas.combine, "and", b=secret), filter_residual[index]
        )
        if not (
            np.array_equal(residual == _TRUE, surely[index]) and np.all(residual != _FALSE)
        ):  # the formulas agree with Kleene's evaluation
            raise AssertionError("residual formulas disagree with the three-valued envelope")
        envelopes.append(possibly)
        if column is not None and not weighted or not surely.any():
            exposed = possibly  # C ∪ V
        elif not (possibly & ~surely).any():
            exposed = nothing
        else:
            exposed = possibly & ~surely
        exposures.append(exposed)
        # function classes of the exposure
        inside = exposed[index]
        members, codes = index[inside], residual[inside]
        if weighted and len(members):  # the values are present (see above): one class per value
            pairs = np.column_stack([codes.astype(float), x[members]])  # type: ignore[index]
            codes = np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1)
        distinct, inverse = np.unique(codes, return_inverse=True)
        if len(distinct) > 1:
            for c in range(len(distinct)):
                row = np.zeros(engine.records, dtype=bool)
                row[members[inverse == c]] = True
                classes.append(row)
    return AuditRows(envelopes, exposures, _distinct(classes))


def _distinct(rows: list[np.ndarray]) -> list[np.ndarray]:
    return list({np.packbits(row).tobytes(): row for row in rows}.values())


# --- the auditor -------------------------------------------------------------------------------

_SIZE_MESSAGES = {
    "envelope": "the records that may be in the query set (or in a group or bin of it), or the others",
    "exposure": "the records whose confidential values this answer depends on (in the query set or a "
    "group or bin of it), or the others",
    "class": "the records whose confidential values enter this answer through the same function (the "
    "same confidential comparisons and value of the aggregated column), or the others",
}


def _sized(rows: AuditRows | Sequence[np.ndarray]) -> list[tuple[str, np.ndarray]]:
    if isinstance(rows, AuditRows):
        return rows.sized()
    return [("envelope", np.asarray(row, dtype=bool)) for row in rows]


class Auditor:
    """The answered rows of one analyst on one dataset, and the audit of a new query.

    The records are partitioned into atoms (records with the same membership in every answered
    row); the auditor keeps each record's atom (one integer per record) and the answered rows as a
    0/1 matrix over the atoms, so that its memory does not grow with the records per query and
    the pairwise and linear audits run on the atoms. :meth:`check` and :meth:`add` take the
    :class:`AuditRows` of a query (:func:`audit_rows`) or a plain list of sets (envelopes).
    """

    def __init__(self, records: int, k: int) -> None:
        self.records = records
        self.k = k
        self.labels = np.zeros(records, dtype=np.int64)
        self.sizes = np.array([records], dtype=np.int64)
        self.rows = np.zeros((0, 1), dtype=bool)
        self.last_id = 0

    def _combine(self, sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The atoms with ``sets`` added: (labels, sizes, old rows and new rows over the new atoms)."""
        labels = self.labels
        atoms = len(self.sizes)
        for start in range(0, len(sets), 4):
            chunk = sets[start : start + 4]
            code = np.zeros(self.records, dtype=np.int64)
            for bit, member in enumerate(chunk):
                code |= member.astype(np.int64) << bit
            combined = (labels << len(chunk)) | code  # labels < records < 2**40: fits in an int64
            if atoms << len(chunk) <= 1 << 22:  # dense relabelling through a table (no sort)
                present = np.zeros(atoms << len(chunk), dtype=bool)
                present[combined] = True
                ids = np.cumsum(present) - 1
                labels, atoms = ids[combined], int(ids[-1]) + 1
            else:
                _, labels = np.unique(combined, return_inverse=True)
                atoms = int(labels.max()) + 1
        sizes = np.bincount(labels, minlength=atoms)
        first = np.empty(atoms, dtype=np.int64)
        first[labels[::-1]] = np.arange(self.records - 1, -1, -1)
        parent = self.labels[first]
        new = np.array([member[first] for member in sets], dtype=bool).reshape(len(sets), len(first))
        return labels, sizes, self.rows[:, parent], new

    def check(self, rows: AuditRows | Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Refuse (:class:`Refused`) or return the state :meth:`commit` records once answered."""
        k, n = self.k, self.records
        sized = _sized(rows)
        for kind, member in sized:
            size = int(np.count_nonzero(member))
            if size < k or n - size < k:
                raise Refused(
                    f"query set size control: {_SIZE_MESSAGES[kind]} are fewer than {k}",
                    reason="query_set_size",
                )
        labels, sizes, old, new = self._combine(_distinct([member for _, member in sized]))
        if len(old):
            # |new \ old| and |old \ new| for every pair, through |new ∩ old| (exact in floats)
            weight = sizes.astype(float)
            both = (new * weight) @ old.T.astype(float)
            only_new = (new @ weight)[:, None] - both
            only_old = (old @ weight)[None, :] - both
            if np.any(((only_new > 0) & (only_new < k)) | ((only_old > 0) & (only_old < k))):
                raise Refused(
                    f"audit: this query set differs from one answered before by fewer than {k} records "
                    "(a differencing attack would isolate them)",
                    reason="audit",
                )
        small = sizes < k
        if small.any():
            matrix = np.vstack([np.ones((1, len(sizes))), old, new]).astype(float)
            _, singular, vt = np.linalg.svd(matrix, full_matrices=False)
            rank = int(np.sum(singular > singular[0] * 1e-10))
            leverage = np.sum(vt[:rank] ** 2, axis=0)
            if np.any(small & (leverage > 1 - LEVERAGE_TOLERANCE)):
                raise Refused(
                    "audit: with the answers you were given before, this answer would determine the total "
                    f"of fewer than {k} records",
                    reason="audit",
                )
        return labels, sizes, np.vstack([old, new])

    def commit(self, state: tuple[np.ndarray, np.ndarray, np.ndarray], answer_id: int = 0) -> None:
        self.labels, self.sizes, rows = state
        self.rows = np.unique(rows, axis=0) if len(rows) else rows
        self.last_id = max(self.last_id, answer_id)

    def add(self, rows: AuditRows | Sequence[np.ndarray], answer_id: int = 0) -> None:
        """Record rows answered before (read back from the ledger), without checking them."""
        labels, sizes, old, new = self._combine(_distinct([member for _, member in _sized(rows)]))
        self.commit((labels, sizes, np.vstack([old, new])), answer_id)


__all__ = ["LEVERAGE_TOLERANCE", "AuditRows", "Auditor", "audit_rows", "check_restricted_query"]
