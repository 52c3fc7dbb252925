"""The HTML report of ``sdckit attack --report``: one self-contained page (the evaluation report's
style, no script, no network) with every attack's rates, risk, verdict, what it assumes the adversary
knows, and its own figures folded underneath."""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path
from typing import Any

from sdckit.attack.base import AttackReport, AttackResult, Rate
from sdckit.evaluate.report import STYLE
from sdckit.io import atomic_write

_VERDICT_WORDS = {
    "holds": "holds: the risk's interval lies at or below the threshold",
    "fails": "fails: the risk's interval lies above the threshold",
    "undecided": "not shown to hold: the threshold lies inside the risk's interval (more trials decide)",
    "no threshold": "no threshold set (--set ATTACK.max_risk=R)",
}


def write_attack_report(report: AttackReport, path: str | os.PathLike, *, title: str) -> None:
    """Write the report of ``report`` to ``path`` (atomically)."""
    text = render_attack_report(report, title=title)
    with atomic_write(path) as temporary:
        Path(temporary).write_text(text, encoding="utf-8")


def render_attack_report(report: AttackReport, *, title: str) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        "<p>Each attack counts how often an adversary succeeds with the release (attack rate), how often "
        "one without it succeeds (baseline), and how often the same attack succeeds on original records "
        "held out of the release (control). The risk is (attack − control) / (1 − control), or the attack "
        "rate without a control; intervals are Wilson's at the stated confidence.</p>",
        f"<p><strong>{'The release holds' if report.holds else 'The release is not shown to hold'}"
        "</strong> against the attacks with a threshold.</p>",
        _overview(report),
    ]
    for result in report.results:
        parts.append(_section(result))
    if report.skipped:
        parts.append("<h2>Not run</h2><ul>")
        parts += [
            f"<li><strong>{_e(name)}</strong>: {_e(reason)}</li>" for name, reason in report.skipped.items()
        ]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _e(text: Any) -> str:
    return html.escape(str(text))


def _rate(rate: Rate | None) -> str:
    if rate is None:
        return "—"
    low, high = rate.ci
    return f"{rate.value:.4f} [{low:.4f}, {high:.4f}] ({rate.successes:,} of {rate.trials:,})"


def _risk(result: AttackResult) -> str:
    risk = result.risk
    if math.isnan(risk.value):
        return "undefined (the control attack always succeeds)"
    return f"{risk.value:.4f} [{risk.low:.4f}, {risk.high:.4f}]"


def _overview(report: AttackReport) -> str:
    rows = []
    for result in report.results:
        threshold = "—" if result.max_risk is None else f"{result.max_risk:g}"
        rows.append(
            f"<tr><td>{_e(result.name)}</td><td>{_e(_rate(result.attack))}</td>"
            f"<td>{_e(_rate(result.baseline))}</td><td>{_e(_rate(result.control))}</td>"
            f"<td>{_e(_risk(result))}</td><td>{_e(threshold)}</td><td>{_e(result.verdict)}</td></tr>"
        )
    header = "".join(
        f"<th>{name}</th>"
        for name in ("attack", "attack rate", "baseline", "control", "risk", "max risk", "verdict")
    )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _section(result: AttackResult) -> str:
    details = json.dumps(result.details, indent=2, default=str) if result.details else ""
    folded = f"<details><summary>figures</summary><pre>{_e(details)}</pre></details>" if details else ""
    return (
        f"<h2>{_e(result.name)}</h2>"
        f"<p><em>The adversary:</em> {_e(result.assumes)}</p>"
        f"<p>Risk {_e(_risk(result))}; {_e(_VERDICT_WORDS[result.verdict])}.</p>{folded}"
    )
