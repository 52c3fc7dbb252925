"""A protected table as a self-contained HTML page: the released grid with primary and secondary cells
coloured, a legend and the method's figures.

:func:`write_html` lays a table out as a person reads it: the first dimension down the rows, the
second across the columns, a third as one grid per category (its total last); a one-dimensional
table is a single column. Categories of a hierarchy come as children, then their subtotal, the total
last; flat categories in their natural order (numbers as numbers), the total last. A cell shows its
released value — ``✕`` where it is suppressed — coloured by its status: primary (red), secondary
(orange), published (white); a published value that differs from the original (rounding, controlled
adjustment) is marked as perturbed. Original values are never written into the page: it shows only
what would be released. Combinations without a cell (no record) show ``·``. The page has no external
resource (inline CSS, no script) and escapes every label.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sdckit.errors import ConfigError
from sdckit.tabular.base import TableResult
from sdckit.tabular.model import PRIMARY, PUBLISHED, SECONDARY, TOTAL

SUPPRESSED_MARK = "✕"
EMPTY_MARK = "·"

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; }
h2 { font-size: 1.1em; margin-top: 1.5em; }
table.grid { border-collapse: collapse; margin: 0.5em 0 1em 0; }
table.grid th, table.grid td { border: 1px solid #bbb; padding: 0.25em 0.6em; }
table.grid td { text-align: right; font-variant-numeric: tabular-nums; }
table.grid th { background: #f2f2f2; font-weight: 600; }
td.published { background: #ffffff; }
td.primary { background: #e53935; color: #fff; font-weight: 600; }
td.secondary { background: #fb8c00; color: #fff; }
td.perturbed { background: #e3f2fd; font-style: italic; }
td.perturbed::after { content: " *"; color: #1565c0; }
td.empty { color: #999; text-align: center; }
.total { font-weight: 700; }
.legend span { display: inline-block; padding: 0.2em 0.6em; margin-right: 0.5em; border: 1px solid #bbb; }
.legend .primary { background: #e53935; color: #fff; }
.legend .secondary { background: #fb8c00; color: #fff; }
.legend .published { background: #fff; }
.legend .perturbed { background: #e3f2fd; font-style: italic; }
table.figures { border-collapse: collapse; }
table.figures th, table.figures td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; }
"""


def write_html(result: TableResult, path: Path, title: str) -> None:
    """Write the protected table ``result`` as a self-contained HTML page at ``path``."""
    Path(path).write_text(render_html(result, title), encoding="utf-8")


def render_html(result: TableResult, title: str) -> str:
    """The HTML page :func:`write_html` writes."""
    table = result.table
    dims = tuple(table.dimensions)
    if not 1 <= len(dims) <= 3:
        raise ConfigError(
            f"an HTML rendering shows tables of 1 to 3 dimensions; this one has {len(dims)} "
            f"({', '.join(dims) or 'none'}): render a table of fewer dimensions"
        )
    frame = result.frame()
    labels = {dim: frame.get_column(dim).cast(str).to_list() for dim in dims}
    released = frame.get_column("released").to_numpy().astype(np.float64)
    status = frame.get_column("status").to_list()
    original = np.asarray(table.values, dtype=np.float64)
    decimals = _decimals(np.concatenate([original, released[np.isfinite(released)]]))
    orders = {dim: _order(result, dim, labels[dim]) for dim in dims}
    where = {key: i for i, key in enumerate(zip(*(labels[d] for d in dims), strict=True))}

    def cell(key: tuple[str, ...]) -> str:
        i = where.get(key)
        if i is None:
            return f'<td class="empty" title="no cell">{EMPTY_MARK}</td>'
        kind = status[i]
        classes = [kind if kind in (PRIMARY, SECONDARY, PUBLISHED) else PUBLISHED]
        value = released[i]
        if math.isnan(value):
            text = SUPPRESSED_MARK
        else:
            text = _number(value, decimals)
            if kind == PUBLISHED and not math.isclose(value, original[i], rel_tol=1e-12, abs_tol=1e-9):
                classes = ["perturbed"]
        if TOTAL in key:
            classes.append("total")
        label = ", ".join(f"{d}={v}" for d, v in zip(dims, key, strict=True))
        tip = html.escape(f"{label}: {kind}", quote=True)
        return f'<td class="{" ".join(classes)}" title="{tip}">{html.escape(text)}</td>'

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        _summary(result, status),
        _legend(),
    ]
    if len(dims) == 1:
        parts.append(_column(dims[0], orders[dims[0]], table.value_name, cell))
    elif len(dims) == 2:
        parts.append(_grid(dims[0], dims[1], orders[dims[0]], orders[dims[1]], cell, ()))
    else:
        for layer in orders[dims[2]]:
            parts.append(f"<h2>{html.escape(dims[2])} = {html.escape(layer)}</h2>")
            parts.append(_grid(dims[0], dims[1], orders[dims[0]], orders[dims[1]], cell, (layer,)))
    parts.append(_figures(result.figures))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _grid(row_dim, col_dim, rows: Sequence[str], cols: Sequence[str], cell, rest: tuple[str, ...]) -> str:
    corner = f"{html.escape(row_dim)} \\ {html.escape(col_dim)}"
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in cols)
    body = []
    for r in rows:
        cells = "".join(cell((r, c, *rest)) for c in cols)
        body.append(f'<tr><th scope="row">{html.escape(r)}</th>{cells}</tr>')
    return (
        f'<table class="grid"><thead><tr><th>{corner}</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _column(dim: str, rows: Sequence[str], value_name: str, cell) -> str:
    body = "".join(f'<tr><th scope="row">{html.escape(r)}</th>{cell((r,))}</tr>' for r in rows)
    return (
        f'<table class="grid"><thead><tr><th>{html.escape(dim)}</th>'
        f"<th>{html.escape(value_name)}</th></tr></thead><tbody>{body}</tbody></table>"
    )


def _summary(result: TableResult, status: list[str]) -> str:
    counts = {kind: sum(s == kind for s in status) for kind in (PRIMARY, SECONDARY)}
    return (
        f"<p>Method <b>{html.escape(result.method)}</b>: {len(status)} cells, "
        f"{counts[PRIMARY]} primary, {counts[SECONDARY]} secondary, "
        f"{int(np.isnan(result.released).sum())} suppressed.</p>"
    )


def _legend() -> str:
    return (
        '<p class="legend">'
        f'<span class="primary">primary (sensitive) {SUPPRESSED_MARK}</span>'
        '<span class="secondary">secondary (suppressed to protect a primary)</span>'
        '<span class="published">published</span>'
        '<span class="perturbed">published, value perturbed *</span>'
        f"<span>{EMPTY_MARK} no cell</span></p>"
    )


def _figures(figures: dict[str, Any]) -> str:
    if not figures:
        return ""
    rows = "".join(
        f"<tr><th>{html.escape(str(key))}</th><td>{html.escape(_figure(value))}</td></tr>"
        for key, value in figures.items()
    )
    return f'<h2>Figures</h2><table class="figures">{rows}</table>'


def _figure(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}"
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def _decimals(values: np.ndarray) -> int:
    values = values[np.isfinite(values)]
    for decimals in range(0, 3):
        if np.allclose(values, np.round(values, decimals), rtol=0, atol=1e-9):
            return decimals
    return 2


def _number(value: float, decimals: int) -> str:
    return f"{value:,.{decimals}f}"


def _order(result: TableResult, dim: str, labels: list[str]) -> list[str]:
    """The categories of ``dim`` in reading order: in a hierarchy children then their subtotal
    (depth-first), flat categories sorted (as numbers when all are numbers); the total last."""
    present = set(labels)
    spec = result.problem.spec
    hierarchy = None if spec is None else dict(spec.hierarchies).get(dim)
    if hierarchy is not None:
        from sdckit.tabular.build import _tree

        tree = _tree(dim, hierarchy)
        children: dict[int, list[int]] = {}
        for node in range(len(tree.labels)):
            if tree.parent[node] >= 0:
                children.setdefault(int(tree.parent[node]), []).append(node)
        order: list[str] = []
        stack: list[tuple[int, bool]] = [(tree.root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded or node not in children:
                order.append(tree.labels[node])
                continue
            stack.append((node, True))
            stack += [(child, False) for child in reversed(children[node])]
        ordered = [label for label in order if label in present]
        extra = sorted(present - set(ordered))
        return [*ordered[:-1], *extra, *ordered[-1:]] if ordered and ordered[-1] == TOTAL else ordered + extra
    others = sorted(present - {TOTAL}, key=_sort_key)
    return [*others, TOTAL] if TOTAL in present else others


def _sort_key(label: str) -> tuple[int, float, str]:
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)
