"""Export a table protection problem to τ-Argus (tabular input and a batch file), so that an office can
cross-check sdckit's pattern with the tool it already runs.

:func:`write_argus` writes, into one directory:

* ``<name>.tab`` — one line per cell: the code of every explanatory variable (the total code ``Total``
  on a margin, the hierarchy node on a subtotal), the response value, the frequency (contributors),
  the largest contributions (``MAXSCORE`` columns, tables built from microdata only) and, when a
  pattern is given, the status (``S`` safe, ``U`` unsafe) with the protection levels of the unsafe
  cells (``LOWERPL``/``UPPERPL`` columns). Fields are separated by ``;``.
* ``<name>.rda`` — the metadata of the tabular input: ``<SEPARATOR>``, the status markers ``<SAFE>``,
  ``<UNSAFE>``, ``<PROTECT>``, and per column ``<RECODEABLE>``/``<TOTCODE>`` (+ ``<HIERARCHICAL>``,
  ``<HIERCODELIST>``, ``<HIERLEADSTRING>`` for a hierarchy), ``<NUMERIC>`` with ``<DECIMALS>`` for the
  response, ``<FREQUENCY>``, ``<MAXSCORE>``, ``<STATUS>``, ``<NUMERIC> <LOWERPL>``/``<UPPERPL>``.
* ``<name>_<dimension>.hrc`` — the hierarchy of every hierarchical dimension: every node below the
  total, a child after its parent, indented with the lead string ``@`` once per level below the top
  (the total itself is the ``<TOTCODE>`` and is not listed).
* ``<name>.hst`` — only with a pattern that has secondary cells: an a-priori file that marks them
  ``m`` (secondary unsafe, manual), so τ-Argus starts from the whole pattern.
* ``<name>.arb`` — the batch: ``<OPENTABLEDATA>``/``<OPENMETADATA>``, ``<SPECIFYTABLE>`` and
  ``<SAFETYRULE>`` per table, ``<READTABLE> 1``, ``<APRIORI>``, ``<SUPPRESS>`` and ``<WRITETABLE>``
  (CSV for pivot table with the status, ``AS+``). Run it with ``TauArgus.exe <name>.arb``.

Linked tables (several tables in the specification) get one ``.tab`` and ``.rda`` per table
(``<name>_1.tab``, ...: the cells of that table, those whose other dimensions are at their total), one
``<SPECIFYTABLE>`` each, and a linked suppression ``<SUPPRESS> MOD(0, ...)`` (τ-Argus protects linked
tables with the modular or hypercube method only).

The rules are translated as τ-Argus's batch reader reads them (``readSafetyRuleBatch``): p%-rule
``P(p,1)``, pq-rule ``P(p,q,1)``, (n,k)-dominance ``NK(n,k)``, minimum frequency ``FREQ(n,range)``
with ``range`` = ratio × 100. τ-Argus takes integers only, at most two P and two NK rules and one
FREQ rule at the individual level: anything else is refused. With a given pattern the primary cells
come from the status column and the levels from the ``LOWERPL``/``UPPERPL`` columns, so the safety
rule is ``MAN(0)`` and the rules are recorded in a comment.

Codes and names: τ-Argus splits a ``.tab`` line at the separator and strips the quotes around a field,
and its metadata tokenizer splits at spaces unless a token is quoted and has no escape for a quote.
So a code or attribute name with a space is written quoted; one with the separator ``;``, a double
quote, leading or trailing spaces, or (in a hierarchy) starting with the lead string ``@`` is refused
with a message naming it, as is an empty code.

Followed: τ-Argus's own readers, which are what decides (sdcTools/tauargus ``Metadata.readTableMetadata``
for the ``.rda`` keywords, ``batch.readSafetyRuleBatch`` for ``P(p[,q],n)``/``NK``/``FREQ``/``MAN`` and
their limits, ``batch.suppressBatch`` for ``OPT``/``MOD``/``GH``/``RND``/``CTA`` and table 0 = linked,
``batch.writeTableBatch`` for ``<WRITETABLE>``, ``APriori`` for the a-priori status codes, and the
argus library's ``Tokenizer`` for quoting); the rtauargus R package (``tab_rda``, ``tab_arb``,
``write_hrc2`` and its example files ``vignettes/example_1/tab1.{tab,rda,arb}`` and
``hrc/hrc_tab_cj.hrc``: the total is the ``<TOTCODE>`` and not a line of the ``.hrc``). The τ-Argus
manual (https://julienjamme.github.io/manual_tau_argus_to_quarto/, chapters on the metadata file and
the batch command file) describes the same syntax. Not checked against a running τ-Argus: how its
tabular-data reader treats a quoted code (we assume it strips the quotes, as the argus tokenizer's
``nextField`` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sdckit.errors import ConfigError, InputError
from sdckit.params import spell
from sdckit.tabular.base import TableProblem
from sdckit.tabular.model import PRIMARY, SECONDARY, TOTAL
from sdckit.tabular.rules import Rule

SEPARATOR = ";"
LEAD = "@"
SAFE, UNSAFE, PROTECT = "S", "U", "P"
#: sdckit's method -> the τ-Argus suppression command (``{tab}`` is the table number, 0 = linked).
METHODS = ("suppress", "modular", "hypercube", "cta", "round")
_MAX_DECIMALS = 10


def write_argus(
    problem: TableProblem,
    rules: Sequence[Rule],
    directory: Path,
    name: str = "table",
    *,
    method: str = "suppress",
    status: np.ndarray | None = None,
    time_limit: int = 600,
    round_base: int | None = None,
) -> list[Path]:
    """Write τ-Argus's tabular input and a batch file for ``problem`` into ``directory``; return the
    paths written (``.tab``/``.rda`` per table, ``.hrc`` per hierarchy, ``.hst`` if any, ``.arb`` last).

    ``rules``: the primary rules (translated into ``<SAFETYRULE>``); ``method``: ``suppress`` (optimal
    ``OPT``, or modular ``MOD`` for linked tables), ``modular``, ``hypercube`` (``GH``), ``cta``, or
    ``round`` (``RND``, needs ``round_base``); ``status``: a pattern (``published``/``primary``/
    ``secondary`` per cell) to hand over instead of letting τ-Argus find the primary cells;
    ``time_limit``: seconds for ``OPT``/``MOD``.
    """
    table = problem.table
    if not name or any(c in name for c in '/\\:"') or name != name.strip():
        raise ConfigError(f"τ-Argus file name {name!r}: use letters, digits, '-' and '_'")
    if method not in METHODS:
        raise ConfigError(f"unknown τ-Argus method {method!r}: choose one of {', '.join(METHODS)}")
    if status is not None:
        status = np.asarray(status).astype(str)
        if status.shape != (table.n_cells,):
            raise ValueError(f"status needs one entry per cell ({table.n_cells}), got shape {status.shape}")
    spec = problem.spec
    tables = tuple(spec.tables) if spec is not None else (tuple(table.dimensions),)
    hierarchies = dict(spec.hierarchies) if spec is not None else {}
    linked = len(tables) > 1
    safety = _safety_rule(rules, table.kind) if status is None else "MAN(0)"
    command = _suppress_command(method, linked, time_limit, round_base)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    codes = {dim: _codes(table, dim) for dim in table.dimensions}
    written: list[Path] = []
    hrc_files: dict[str, str] = {}
    for dim in dict.fromkeys(d for dims in tables for d in dims):
        if dim in hierarchies:
            path = directory / f"{name}_{_file_part(dim)}.hrc"
            path.write_text(_hrc_text(dim, hierarchies[dim]), encoding="utf-8")
            hrc_files[dim] = path.name
            written.append(path)

    with_top = problem.source is not None and table.top is not None and table.kind == "magnitude"
    batch = ["// tau-Argus batch written by sdckit", f"// run: TauArgus.exe {name}.arb"]
    apriori: dict[int, list[str]] = {}
    for number, dims in enumerate(tables, start=1):
        stem = f"{name}_{number}" if linked else name
        cells = _cells_of(table, dims)
        columns = _Columns(
            dims,
            table.kind,
            table.value_name,
            table.top.shape[1] if with_top and table.top is not None else 0,
        )
        tab = directory / f"{stem}.tab"
        rda = directory / f"{stem}.rda"
        tab.write_text(
            _tab_text(problem, cells, dims, codes, with_top, status), encoding="utf-8", newline="\n"
        )
        levels = None if status is None else _level_decimals(problem.protection, cells, status)
        rda.write_text(_rda_text(table, cells, columns, hrc_files, levels), encoding="utf-8")
        written += [tab, rda]
        batch += [
            f'<OPENTABLEDATA> "{tab.name}"',
            f'<OPENMETADATA> "{rda.name}"',
            "<SPECIFYTABLE> " + "".join(f'"{d}"' for d in dims) + f'|"{columns.response}"||',
            f"<SAFETYRULE> {safety}",
        ]
        if status is not None:
            batch.append(f"// sdckit's pattern; its primary rules were: {_rule_text(rules) or 'none'}")
            secondary = cells[status[cells] == SECONDARY]
            if secondary.size:
                apriori[number] = [
                    SEPARATOR.join([*(_field(codes[d][i], d) for d in dims), "m"]) for i in secondary
                ]
    batch.append("<READTABLE> 1")
    for number, lines in apriori.items():
        hst = directory / f"{name}_{number}.hst" if linked else directory / f"{name}.hst"
        hst.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(hst)
        batch.append(f'<APRIORI> "{hst.name}",{number},"{SEPARATOR}",0,0')
    batch.append(f"<SUPPRESS> {command}")
    for number in range(1, len(tables) + 1):
        stem = f"{name}_{number}" if linked else name
        batch.append(f'<WRITETABLE> ({number},2,AS+,"{stem}_safe.csv")')
    arb = directory / f"{name}.arb"
    arb.write_text("\n".join(batch) + "\n", encoding="utf-8")
    written.append(arb)
    return written


# Rules and methods ---------------------------------------------------------------------------------


def _integer(value: float, what: str, rule: Rule) -> int:
    if float(value) != round(float(value)):
        raise ConfigError(f"rule {rule.name}: τ-Argus takes whole numbers only, and {what} is {value:g}")
    return int(round(float(value)))


def _rule_text(rules: Sequence[Rule]) -> str:
    parts = []
    for rule in rules:
        if rule.kind == "p%":
            parts.append(f"P({_integer(rule.p, 'p', rule)},1)")
        elif rule.kind == "pq":
            parts.append(f"P({_integer(rule.p, 'p', rule)},{_integer(rule.q, 'q', rule)},1)")
        elif rule.kind == "nk":
            parts.append(f"NK({rule.n},{_integer(rule.k, 'k', rule)})")
        elif rule.kind == "freq":
            parts.append(f"FREQ({rule.n},{_integer(rule.ratio * 100, 'ratio × 100', rule)})")
        else:  # pragma: no cover - Rule.parse admits no other kind
            raise ConfigError(f"rule {rule.name} has no τ-Argus equivalent")
    return "|".join(parts)


def _safety_rule(rules: Sequence[Rule], kind: str) -> str:
    if not rules:
        raise ConfigError(
            f"τ-Argus needs at least one primary rule ({spell('rules', '--rule')}) or a pattern to "
            "cross-check"
        )
    counts = {kind_: sum(rule.kind == kind_ for rule in rules) for kind_ in ("p%", "pq", "nk", "freq")}
    if counts["p%"] + counts["pq"] > 2 or counts["nk"] > 2 or counts["freq"] > 1:
        raise ConfigError(
            "τ-Argus applies at most two p%/pq rules, two (n,k) rules and one frequency rule to a table "
            f"(got {_names(rules)})"
        )
    if kind != "magnitude" and any(rule.kind != "freq" for rule in rules):
        raise ConfigError(f"rules {_names(rules)}: τ-Argus applies dominance rules to magnitude tables only")
    return _rule_text(rules)


def _names(rules: Sequence[Rule]) -> str:
    return ", ".join(rule.name for rule in rules)


def _suppress_command(method: str, linked: bool, time_limit: int, round_base: int | None) -> str:
    if method in ("cta", "round") and linked:
        raise ConfigError(f"τ-Argus cannot apply {method} to linked tables (only modular and hypercube)")
    if method == "suppress":
        return f"MOD(0,{time_limit},1,1,1)" if linked else f"OPT(1,{time_limit})"
    if method == "modular":
        return f"MOD({0 if linked else 1},{time_limit},1,1,1)"
    if method == "hypercube":
        return f"GH({0 if linked else 1},0,1)"
    if method == "cta":
        return "CTA(1)"
    if round_base is None or round_base < 1:
        raise ConfigError("τ-Argus rounding needs a rounding base of at least 1 (round_base)")
    return f"RND(1,{int(round_base)})"


# Cells, codes and columns ---------------------------------------------------------------------------


class _Columns:
    """The columns of one ``.tab`` file, named apart from the dimensions."""

    def __init__(self, dims: Sequence[str], kind: str, value_name: str, top: int) -> None:
        taken = set(dims)

        def fresh(wanted: str) -> str:
            name = wanted
            while name in taken:
                name = "_" + name
            taken.add(name)
            return name

        self.dims = tuple(dims)
        self.response = fresh("count" if kind == "frequency" else value_name)
        self.frequency = fresh("freq")
        self.top = [fresh(f"top{k + 1}") for k in range(top)]
        self.status = fresh("status")
        self.lower = fresh("lpl")
        self.upper = fresh("upl")


def _cells_of(table, dims: Sequence[str]) -> np.ndarray:
    """The cells of one table of a (possibly linked) set: those at the total of every other dimension."""
    inside = np.ones(table.n_cells, dtype=bool)
    for dim in table.dimensions:
        if dim not in dims:
            inside &= table.cells.get_column(dim).to_numpy() == TOTAL
    return np.flatnonzero(inside)


def _codes(table, dim: str) -> np.ndarray:
    labels = table.cells.get_column(dim).cast(str).to_numpy().astype(object)
    for code in np.unique(labels):
        _check_code(str(code), dim)
    return labels


def _check_code(code: str, dim: str, hierarchy: bool = False) -> None:
    reason = None
    if code == "":
        reason = "is empty"
    elif SEPARATOR in code:
        reason = f"contains the separator '{SEPARATOR}'"
    elif '"' in code:
        reason = "contains a double quote"
    elif code != code.strip():
        reason = "begins or ends with a space (τ-Argus strips them)"
    elif hierarchy and code.startswith(LEAD):
        reason = f"begins with the hierarchy lead string '{LEAD}'"
    if reason:
        raise InputError(f"dimension '{dim}': code {code!r} {reason}; τ-Argus cannot read it — recode it")


def _field(code: str, dim: str) -> str:
    return f'"{code}"' if " " in code else code


def _name_token(name: str) -> str:
    if '"' in name or name.startswith("<") or name != name.strip() or not name:
        raise ConfigError(f"attribute name {name!r}: τ-Argus cannot read it in a metadata file — rename it")
    return f'"{name}"' if " " in name else name


def _file_part(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def _decimals(values: np.ndarray) -> int:
    for decimals in range(_MAX_DECIMALS + 1):
        if np.allclose(values, np.round(values, decimals), rtol=0, atol=10.0 ** -(_MAX_DECIMALS + 2)):
            return decimals
    return _MAX_DECIMALS


def _numbers(values: np.ndarray, decimals: int) -> list[str]:
    return [f"{v:.{decimals}f}" for v in np.asarray(values, dtype=np.float64)]


def _sorted_top(table) -> np.ndarray:
    """The largest contributions of every cell in decreasing order, as τ-Argus's MAXSCORE columns must
    be (the table's own ``top`` is not guaranteed sorted: polars' ``top_k`` does not order)."""
    return -np.sort(-np.asarray(table.top, dtype=np.float64), axis=1)


def _frequency(table) -> np.ndarray:
    counts = table.contributors if table.contributors is not None else table.frequency
    if counts is None:
        counts = table.values
    counts = np.asarray(counts, dtype=np.float64)
    bad = np.flatnonzero(counts != np.round(counts))
    if bad.size:
        raise InputError(
            f"cell {table.label(int(bad[0]))} has frequency {counts[bad[0]]:g}: τ-Argus needs whole "
            "frequencies (a weighted count cannot be its frequency)"
        )
    return counts.astype(np.int64)


def _tab_text(problem, cells, dims, codes, with_top: bool, status) -> str:
    table, protection = problem.table, problem.protection
    decimals = _decimals(table.values[cells])
    columns = [[_field(str(code), dim) for code in codes[dim][cells]] for dim in dims]
    columns.append(_numbers(table.values[cells], decimals))
    columns.append([str(v) for v in _frequency(table)[cells]])
    if with_top:
        tops = _sorted_top(table)[cells]
        for k in range(tops.shape[1]):
            columns.append(_numbers(tops[:, k], _decimals(tops[:, k])))
    if status is not None:
        unsafe = status[cells] == PRIMARY
        columns.append([UNSAFE if u else SAFE for u in unsafe])
        decimals = _level_decimals(protection, cells, status)
        for levels in (protection.lower, protection.upper):
            columns.append(_numbers(np.where(unsafe, levels[cells], 0.0), decimals))
    return "".join(SEPARATOR.join(row) + "\n" for row in zip(*columns, strict=True))


def _level_decimals(protection, cells: np.ndarray, status: np.ndarray) -> int:
    unsafe = status[cells] == PRIMARY
    shown = np.concatenate([protection.lower[cells][unsafe], protection.upper[cells][unsafe]])
    return _decimals(shown)


def _rda_text(table, cells, columns: _Columns, hrc_files, level_decimals: int | None) -> str:
    lines = [
        f'<SEPARATOR> "{SEPARATOR}"',
        f'<SAFE> "{SAFE}"',
        f'<UNSAFE> "{UNSAFE}"',
        f'<PROTECT> "{PROTECT}"',
    ]
    for dim in columns.dims:
        lines += [_name_token(dim), "  <RECODEABLE>", f'  <TOTCODE> "{TOTAL}"']
        if dim in hrc_files:
            lines += ["  <HIERARCHICAL>", f'  <HIERCODELIST> "{hrc_files[dim]}"']
            lines.append(f'  <HIERLEADSTRING> "{LEAD}"')
    decimals = _decimals(table.values[cells])
    lines += [_name_token(columns.response), "  <NUMERIC>", f"  <DECIMALS> {decimals}"]
    lines += [_name_token(columns.frequency), "  <FREQUENCY>"]
    for k, top in enumerate(columns.top):
        lines += [_name_token(top), "  <MAXSCORE>", f"  <DECIMALS> {_decimals(_sorted_top(table)[cells, k])}"]
    if level_decimals is not None:
        lines += [_name_token(columns.status), "  <STATUS>"]
        lines += [_name_token(columns.lower), "  <NUMERIC> <LOWERPL>", f"  <DECIMALS> {level_decimals}"]
        lines += [_name_token(columns.upper), "  <NUMERIC> <UPPERPL>", f"  <DECIMALS> {level_decimals}"]
    return "\n".join(lines) + "\n"


def _hrc_text(dim: str, hierarchy) -> str:
    """The nodes below the total, depth-first (a parent before its children), ``@`` once per level
    below the top."""
    from sdckit.tabular.build import _tree

    tree = _tree(dim, hierarchy)
    labels, parent = tree.labels, tree.parent
    children: dict[int, list[int]] = {}
    for node in range(len(labels)):
        if parent[node] >= 0:
            children.setdefault(int(parent[node]), []).append(node)
    seen: set[str] = set()
    lines: list[str] = []
    stack = [(child, 0) for child in reversed(children.get(tree.root, []))]
    while stack:
        node, depth = stack.pop()
        code = labels[node]
        _check_code(code, dim, hierarchy=True)
        if code in seen or code == TOTAL:
            raise InputError(
                f"dimension '{dim}': code {code!r} is two nodes of the hierarchy; τ-Argus needs every code "
                "once (and none equal to the total code)"
            )
        seen.add(code)
        lines.append(LEAD * depth + code)
        stack += [(child, depth + 1) for child in reversed(children.get(node, []))]
    return "\n".join(lines) + "\n"
