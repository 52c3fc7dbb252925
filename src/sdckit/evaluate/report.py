"""One self-contained HTML report of an evaluation: inline CSS, images as data URIs, no script and
no network access needed to view it (a data steward mails it or opens it offline).

Sections: what was measured and what each axis of the R-U map says; the overview (each release's
headline risk and loss, its combined score and whether it is on the Pareto front); the R-U map; the
attacks run on each release, when any were (rates, risk with its interval, verdict: ``--attack``); the
risk figures of the original and each release, with a histogram of the individual re-identification
risk; the information-loss figures; the original's riskiest records beside what each release shows of
them; the recipe of each release that has one; what was skipped and why.

It is meant to be read: the figures of each measure and the recipes are folded (``<details>``) under
a one-line summary, figures are named in words with their key in a tooltip (``title``), so that three
releases fit in a few screens (the JSON summary holds every figure).
"""

from __future__ import annotations

import base64
import html
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from sdckit.evaluate.evaluation import Evaluation, Measured, figure_at, headline
from sdckit.evaluate.figure_names import axis_explanation, figure_label
from sdckit.io import atomic_write

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem;
       color: #222; line-height: 1.45; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem;
     border-bottom: 1px solid #ddd; padding-bottom: .2rem; } h3 { font-size: 1.05rem; margin-top: 1.4rem; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .25rem .6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f3f5f8; }
tr.front td { font-weight: 600; }
.note { color: #666; font-size: .9rem; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #eee; }
pre { background: #f7f7f7; padding: .8rem; overflow-x: auto; font-size: .8rem; }
details { margin: .4rem 0; } summary { cursor: pointer; }
tbody.record tr:first-child td { border-top: 2px solid #bbb; }
td.changed { background: #fff4d6; }
"""


def write_report(
    evaluation: Evaluation, path: str | os.PathLike, *, title: str = "Disclosure risk and utility"
) -> None:
    """Write the report of ``evaluation`` to ``path`` (atomically)."""
    text = render_report(evaluation, title=title)
    with atomic_write(path) as temporary:
        Path(temporary).write_text(text, encoding="utf-8")


def render_report(evaluation: Evaluation, *, title: str = "Disclosure risk and utility") -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="note">Original <b>{_e(evaluation.original.source)}</b> '
        f"({evaluation.original.records:,} records) and {len(evaluation.releases)} release(s). "
        f"Score = {evaluation.weight:g}·IL + {1 - evaluation.weight:g}·DR (percent, lower is better).</p>",
        _axes_note(evaluation),
        *_overview(evaluation),
        *_map(evaluation),
        *_attacks(evaluation),
        *_risk(evaluation),
        *_utility(evaluation),
        *_riskiest(evaluation),
        *_recipes(evaluation),
        *_skipped(evaluation),
        "</body></html>",
    ]
    return "\n".join(parts)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _axis(evaluation: Evaluation, group: str) -> str:
    name = evaluation.risk_axis if group == "risk" else evaluation.loss_axis
    return f"{name}.{headline(name, group)}"


def _axis_label(evaluation: Evaluation, group: str) -> str:
    """The words of an axis: its figure's label (the key is in the tooltip)."""
    return figure_label(_axis(evaluation, group))


def _named(key: str) -> str:
    """A figure's words with its key in a tooltip."""
    return f'<span title="{_e(key)}">{_e(figure_label(key))}</span>'


def _axes_note(evaluation: Evaluation) -> str:
    """What each axis of the R-U map measures, so that a reader can tell a high loss from a
    measure's quirk."""
    items = []
    for group, name, word in (
        ("risk", evaluation.risk_axis, "Risk (x)"),
        ("utility", evaluation.loss_axis, "Loss (y)"),
    ):
        explained = _e(axis_explanation(name))
        items.append(f"<li><b>{word}</b>: {_named(_axis(evaluation, group))}, {explained}.</li>")
    return f'<ul class="note" id="axes">{"".join(items)}</ul>'


def _format(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if np.isnan(value):
            return "–"
        return f"{value:.4g}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{classes[i]}"' if classes and classes[i] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{_e(_format(v))}</td>" for v in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _overview(evaluation: Evaluation) -> list[str]:
    rows, classes = [], []
    for i, (item, point, score) in enumerate(
        zip(evaluation.releases, evaluation.points, evaluation.scores, strict=True)
    ):
        front = i in evaluation.front
        rows.append([item.name, item.records, point.risk, point.loss, score, front])
        classes.append("front" if front else "")
    header = [
        "release",
        "records",
        f"risk ({_axis_label(evaluation, 'risk')})",
        f"loss ({_axis_label(evaluation, 'utility')})",
        "score",
        "Pareto front",
    ]
    return ["<h2>Overview</h2>", _table(header, rows, classes)]


def _image(draw: Any) -> str:
    """A PNG drawn by ``draw(path)`` as a data URI."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "figure.png"
        draw(path)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:image/png;base64,{data}"


def _map(evaluation: Evaluation) -> list[str]:
    from sdckit.evaluate.rumap import RUPoint, ru_map_plot

    reference = None
    original = evaluation.original
    risk_name = evaluation.risk_axis
    if risk_name in original.risk:
        reference = RUPoint("original", figure_at(original.risk[risk_name], headline(risk_name, "risk")), 0.0)
    uri = _image(
        lambda path: ru_map_plot(
            evaluation.points,
            path,
            risk_label=_axis_label(evaluation, "risk"),
            loss_label=_axis_label(evaluation, "utility"),
            reference=reference,
        )
    )
    return [
        "<h2>R-U map</h2>",
        f'<figure><img id="ru-map" alt="R-U map of the releases" src="{uri}">'
        '<figcaption class="note">Each release at its risk (x) and information loss (y); the Pareto '
        "front joins the releases no other beats on both.</figcaption></figure>",
    ]


def _attacks(evaluation: Evaluation) -> list[str]:
    """Beside the map: per release and attack, the attack, baseline and control rates, the risk with
    its interval, the threshold and the verdict (as ``sdckit attack --report`` words them); then the
    attacks that did not apply to a release, with the reason."""
    from sdckit.attack._html import _VERDICT_WORDS, _rate, _risk

    reports = [(item.name, item.attacks) for item in evaluation.releases if item.attacks is not None]
    if not reports:
        return []
    header = ["release", "attack", "attack rate", "baseline", "control", "risk", "max risk", "verdict"]
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    rows = []
    for name, report in reports:
        for result in report.results:
            threshold = "–" if result.max_risk is None else f"{result.max_risk:g}"
            cells = [
                name,
                result.name,
                _rate(result.attack),
                _rate(result.baseline),
                _rate(result.control),
                _risk(result),
                threshold,
            ]
            verdict = (
                f'<td class="verdict" title="{_e(_VERDICT_WORDS[result.verdict])}">{_e(result.verdict)}</td>'
            )
            rows.append("<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in cells) + verdict + "</tr>")
    skipped = [
        f"<li><b>{_e(name)}</b>: {_e(attack)} — {_e(why)}</li>"
        for name, report in reports
        for attack, why in report.skipped.items()
    ]
    assumed = {result.name: result.assumes for _, report in reports for result in report.results}
    assumes = [f"<li><b>{_e(attack)}</b> assumes {_e(text)}</li>" for attack, text in assumed.items()]
    return [
        '<h2 id="attacks">Attacks</h2>',
        '<p class="note">Each attack counts how often an adversary succeeds with the release (attack rate), '
        "how often one without it succeeds (baseline), and how often it succeeds on original records held "
        "out of the release (control). The risk is (attack − control) / (1 − control), or the attack rate "
        "without a control; intervals are Wilson's. A release holds when the risk's whole interval lies at "
        "or below the threshold (sdckit attack, docs/attack.md).</p>",
        f'<table id="attack-results"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>',
        *([f'<ul class="note" id="attacks-assume">{"".join(assumes)}</ul>'] if assumes else []),
        *([f'<p>Not run:</p><ul id="attacks-skipped">{"".join(skipped)}</ul>'] if skipped else []),
    ]


def flatten(figures: Mapping[str, Any], prefix: str = "", depth: int = 2) -> Iterator[tuple[str, Any]]:
    """The scalar figures of a summary as (dotted name, value), nested mappings down to ``depth``;
    lists (per-record listings, per-table details) are left out."""
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if depth > 1:
                yield from flatten(value, f"{name}.", depth - 1)
        elif (
            value is None
            or isinstance(value, bool | int | float)
            or (isinstance(value, str) and len(value) <= 60)
        ):
            yield name, value


def _figures_table(items: list[Measured], group: str, measure: str) -> str:
    """The figures of one measure, one row per figure (named in words, its key in a tooltip), one
    column per file, folded under a summary line."""
    columns = [dict(flatten(getattr(item, group).get(measure, {}))) for item in items]
    names = list(dict.fromkeys(name for column in columns for name in column))
    head = "".join(f"<th>{_e(h)}</th>" for h in ["figure", *(item.name for item in items)])
    body = "".join(
        f"<tr><td>{_named(name)}</td>"
        + "".join(f"<td>{_e(_format(column.get(name)))}</td>" for column in columns)
        + "</tr>"
        for name in names
    )
    return (
        f'<details class="figures" id="{_e(group)}-{_e(measure)}"><summary>{_named(measure)}: '
        f"{len(names)} figures of {len(items)} file(s)</summary>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></details>"
    )


def _risk(evaluation: Evaluation) -> list[str]:
    items = [evaluation.original, *evaluation.releases]
    measures = list(dict.fromkeys(name for item in items for name in item.risk))
    parts = ["<h2>Disclosure risk</h2>"]
    for measure in measures:
        shown = [item for item in items if measure in item.risk]
        parts.append(_figures_table(shown, "risk", measure))
    series = {item.name: item.individual_risk for item in items if item.individual_risk is not None}
    if series:
        from sdckit.evaluate.plots import risk_histogram

        uri = _image(
            lambda path: risk_histogram(
                series,
                path,
                title="Individual re-identification risk",
                axis_label="individual re-identification risk (log scale)",
            )
        )
        parts.append(
            f'<figure><img id="risk-histogram" alt="Histogram of individual risk" src="{uri}">'
            '<figcaption class="note">Individual risk of every record (Benedetti &amp; Franconi), original '
            "and releases overlaid, on logarithmic axes.</figcaption></figure>"
        )
    return parts


def _utility(evaluation: Evaluation) -> list[str]:
    items = evaluation.releases
    measures = list(dict.fromkeys(name for item in items for name in item.utility))
    parts = ["<h2>Information loss</h2>"]
    for measure in measures:
        shown = [item for item in items if measure in item.utility]
        parts.append(_figures_table(shown, "utility", measure))
    return parts


def _riskiest(evaluation: Evaluation) -> list[str]:
    """The original's riskiest records beside each release's values of them (a changed value
    marked)."""
    frame = evaluation.riskiest
    if frame is None or frame.is_empty():
        return []
    values = [c for c in frame.columns if c not in ("record", "identifier", "file", "left_out")]
    identified = "identifier" in frame.columns
    header = ["record", *(["identifier"] if identified else []), "file", *values]
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    bodies = []
    for _, group in frame.group_by("record", maintain_order=True):
        rows = group.rows(named=True)
        original = rows[0]
        lines = []
        for row in rows:
            texts = [row["record"], *([row["identifier"] or "–"] if identified else []), row["file"]]
            cells = [f"<td>{_e(text)}</td>" for text in texts]
            for name in values:
                changed = row is not original and row[name] != original[name]
                css = ' class="changed"' if changed else ""
                cells.append(f"<td{css}>{_e('–' if row[name] is None else row[name])}</td>")
            lines.append(f"<tr>{''.join(cells)}</tr>")
        bodies.append(f'<tbody class="record">{"".join(lines)}</tbody>')
    left_out = frame.get_column("left_out")[0]
    note = (
        f" Not shown beside them (their records are not the original's, row for row): {_e(left_out)}."
        if left_out
        else ""
    )
    return [
        "<h2>The riskiest records</h2>",
        f'<p class="note">The {frame.get_column("record").n_unique()} records of highest individual '
        "re-identification risk in the original, their quasi-identifiers as they are and as each "
        f"release shows them (a changed value is shaded; – is a missing value).{note}</p>",
        f'<table id="riskiest"><thead><tr>{head}</tr></thead>{"".join(bodies)}</table>',
    ]


def _recipes(evaluation: Evaluation) -> list[str]:
    with_recipe = [item for item in evaluation.releases if item.recipe is not None]
    if not with_recipe:
        return []
    parts = ["<h2>Recipes</h2>"]
    for item in with_recipe:
        text = json.dumps(item.recipe, indent=2, ensure_ascii=False, default=str)
        steps = item.recipe.get("steps") if isinstance(item.recipe, Mapping) else None
        methods = " → ".join(str(step.get("method")) for step in steps or [] if isinstance(step, Mapping))
        parts.append(
            f'<details class="recipe"><summary><b>{_e(item.name)}</b>'
            f"{': ' + _e(methods) if methods else ''}</summary><pre>{_e(text)}</pre></details>"
        )
    return parts


def _skipped(evaluation: Evaluation) -> list[str]:
    skipped = evaluation.original.skipped
    if not skipped:
        return []
    rows = [[name, why] for name, why in skipped.items()]
    return ["<h2>Not measured</h2>", _table(["measure", "why"], rows)]


__all__ = ["flatten", "render_report", "write_report"]
