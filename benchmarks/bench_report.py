"""Benchmark: the report of one protection run (``sdckit report``, sdcMicro's report(), issue 37)
against ``evaluate`` with its HTML report (``sdckit evaluate --report``) in the same process.

Data: the business survey of ``examples/firms.py`` (keys district, activity and size; numeric
employees and turnover), 10^5 and 10^6 records, protected once (untimed) by ``sdckit protect`` with a
two-step recipe: local suppression to 3-anonymity, then 15% additive noise on the numeric
attributes. Timed, best of ``--repeats``:

* ``report``: :func:`protection_report` (the re-identification risk of both files, the frequency
  tables and the numeric loss of the release, each attribute's changed and suppressed values, the
  numeric summaries) and both pages, internal and external;
* ``evaluate``: the baseline, :func:`sdckit.evaluate.evaluate` with the same measures and
  :func:`render_report` (what ``sdckit evaluate --report`` does with ``--risk reidentification
  --utility tables,numeric``).

The ratio is report / evaluate: what the words, the record-by-record comparison and the second page
cost on top of the measures and their page (whose two figures, drawn with matplotlib, the report does
not draw); the second ratio is report / the measures alone (``evaluate`` without its page). Peak
memory of the process after each size.

    python benchmarks/bench_report.py                  # 10^5 and 10^6 records
    python benchmarks/bench_report.py --records 100000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import cast

from _common import best_time, peak_rss_mib, print_header

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """
attributes:
  unit_id:    {role: identifier}
  enterprise: {role: identifier}
  district:   {role: quasi-identifier}
  activity:   {role: quasi-identifier}
  size:       {role: quasi-identifier, kind: ordinal}
  employees:  {role: insensitive, kind: numeric}
  turnover:   {role: insensitive, kind: numeric}
"""
RECIPE = """
steps:
  - {method: local-suppression, k: 3}
  - {method: noise, noise: additive, amount: 15, seed: 1, attributes: [employees, turnover]}
"""


def _protected(folder: Path, records: int) -> tuple[Path, Path, Path, Path]:
    """The original, its configuration, the release and the release's summary (sdckit protect)."""
    from examples.firms import generate_firms
    from typer.testing import CliRunner

    from sdckit.cli import app

    original, config, recipe = folder / "firms.csv", folder / "firms.yaml", folder / "recipe.yaml"
    release, summary = folder / "release.csv", folder / "release.json"
    generate_firms(records, seed=1).write_csv(original)
    config.write_text(CONFIG, encoding="utf-8")
    recipe.write_text(RECIPE, encoding="utf-8")
    arguments = ["protect", original, "-c", config, "-r", recipe, "-o", release, "--summary", summary, "-q"]
    done = CliRunner().invoke(app, [str(a) for a in arguments])
    if done.exit_code != 0:
        raise SystemExit(f"sdckit protect failed:\n{done.output}")
    return original, config, release, summary


def _size(records: int, repeats: int) -> tuple[float, float, float, int, int]:
    from sdckit.config import load_config
    from sdckit.evaluate import evaluate
    from sdckit.evaluate.protection_report import protection_report, render_protection_report
    from sdckit.evaluate.report import render_report

    with tempfile.TemporaryDirectory() as directory:
        original, config_path, release_path, summary_path = _protected(Path(directory), records)
        config = load_config(config_path)
        table, release = config.read(original), config.read_release(release_path)
        document = json.loads(summary_path.read_text(encoding="utf-8"))

    def ours() -> tuple[str, str]:
        report = protection_report(
            table,
            release,
            recipe=document,
            config=config,
            original_name="firms.csv",
            release_name="release.csv",
        )
        return render_protection_report(report, "internal"), render_protection_report(report, "external")

    def measures():
        return evaluate(
            table,
            [("release.csv", release)],
            config=config,
            risk=["reidentification"],
            utility=["tables", "numeric"],
            risk_axis="reidentification",
            loss_axis="tables",
            recipes=[document],
            original_name="firms.csv",
        )

    def baseline() -> str:
        return render_report(measures(), title="Evaluation of firms.csv")

    base, page = best_time(baseline, repeats)
    measured, _ = best_time(measures, repeats)
    time, pages = best_time(ours, repeats)
    internal, external = cast(tuple[str, str], pages)
    return time, base, measured, len(internal) + len(external), len(cast(str, page))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # examples.firms
    print_header(argv)
    print(
        f"{'records':>10} {'report s':>9} {'evaluate s':>11} {'ratio':>6} {'measures s':>11} {'ratio':>6} "
        f"{'report KiB':>11} {'evaluate KiB':>13} {'peak MiB':>9}"
    )
    for records in args.records:
        ours, base, measured, size, baseline_size = _size(records, args.repeats)
        print(
            f"{records:>10,} {ours:>9.3f} {base:>11.3f} {ours / base:>5.2f}x {measured:>11.3f} "
            f"{ours / measured:>5.2f}x {size / 1024:>11.0f} {baseline_size / 1024:>13.0f} "
            f"{peak_rss_mib():>9.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
