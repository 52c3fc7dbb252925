"""``sdckit attack``: run the attacks a release claims to withstand (:mod:`sdckit.attack`).

Four ways in:

* ``sdckit attack ORIGINAL RELEASE -c C [--attack NAME ...] [--control CONTROL]``: attacks on a release
  of ORIGINAL (every attack that applies, or those named), with CONTROL the original records held out
  of the release before it was protected;
* ``sdckit attack DATA --split FRACTION -o TO_PROTECT --control-output CONTROL``: hold a share of the
  records out before protecting (they become CONTROL);
* ``sdckit attack ORIGINAL --server URL --key K -c C``: the attacks on a running query server;
* ``sdckit attack ORIGINAL TABLE -c C --attack table-intervals --set table-intervals.dimensions=A,B``:
  the table attacks on a published table (read as written), when every named attack attacks tables.

Exit status 3 when an attack with a threshold (``--set NAME.max_risk=R``) does not show that the
release holds. Parse, call the library, print, write; no computation here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.cli._common import (
    ConfigOption,
    InlineRoles,
    QuasiIdentifiersOption,
    QuietOption,
    Report,
    SensitiveOption,
    SummaryOption,
    finish,
    load_settings,
    progress_bar,
    stage_json,
    stage_messages,
    stage_table,
    user_errors,
)
from sdckit.cli._outputs import Outputs

FilesArgument = Annotated[
    list[Path],
    typer.Argument(
        help="ORIGINAL RELEASE (the original microdata and a release of it); ORIGINAL alone with --server; "
        "DATA alone with --split."
    ),
]
AttackOption = Annotated[
    list[str] | None,
    typer.Option("--attack", "-a", help="An attack to run (repeat) [default: every attack that applies]."),
]
ControlOption = Annotated[
    Path | None,
    typer.Option(help="Original records held out of the release before it was protected (CSV or Parquet)."),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set", help="An attack's parameter, ATTACK.PARAMETER=VALUE (repeat), e.g. inference.secret=income."
    ),
]
ReportOption = Annotated[Path | None, typer.Option("--report", help="Self-contained HTML report (.html).")]
SplitOption = Annotated[
    float | None,
    typer.Option(
        help="Hold this share of DATA's records out (write them to --control-output), the rest to -o."
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="With --split: the records to protect (.csv or .parquet)."),
]
ControlOutputOption = Annotated[
    Path | None, typer.Option(help="With --split: the held-out control records (.csv or .parquet).")
]
SeedOption = Annotated[int, typer.Option(help="With --split: the seed of the draw.")]
ServerOption = Annotated[str | None, typer.Option(help="Attack a running query server at this URL.")]
KeyOption = Annotated[
    str | None, typer.Option(help="With --server: the analyst's API key the attacker holds.")
]

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")


def attack(
    files: FilesArgument,
    config: ConfigOption = None,
    qi: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    attack_: AttackOption = None,
    control: ControlOption = None,
    set_: SetOption = None,
    report_path: ReportOption = None,
    summary: SummaryOption = None,
    split: SplitOption = None,
    output: OutputOption = None,
    control_output: ControlOutputOption = None,
    seed: SeedOption = 0,
    server: ServerOption = None,
    key: KeyOption = None,
    quiet: QuietOption = False,
) -> None:
    """Attack a release as an adversary would: each attack's success rate, the rate of an adversary
    without the release, the rate on held-out records, the risk with its 95% interval, and whether the
    release holds."""
    with user_errors():
        roles = InlineRoles(qi, sensitive)
        if split is not None:
            _split(files, config, roles, split, output, control_output, seed, quiet)
            return
        _refuse_split_options(output, control_output)
        _attack(files, config, roles, attack_, control, set_, report_path, summary, server, key, quiet)


def _split(
    files: list[Path],
    config: Path | None,
    roles: InlineRoles,
    fraction: float,
    output: Path | None,
    control_output: Path | None,
    seed: int,
    quiet: bool,
) -> None:
    from sdckit.attack._split import hold_out
    from sdckit.config import Config, load_config
    from sdckit.errors import ConfigError

    if len(files) != 1:
        raise ConfigError(f"--split takes one file, DATA (the records to split), got {len(files)}")
    if output is None or control_output is None:
        raise ConfigError("--split writes two files: give -o/--output and --control-output")
    outputs = Outputs([files[0], config])
    outputs.file(output, "--output", TABLE_SUFFIXES)
    outputs.file(control_output, "--control-output", TABLE_SUFFIXES)
    if roles != InlineRoles():
        raise ConfigError("--split copies records as they are: --qi and --sensitive do not apply to it")
    # Every column as read (text as written, Parquet types kept): the data settings of -c (delimiter,
    # missing values, weights) apply, its attribute descriptions do not.
    reader = Config(data=load_config(config).data) if config is not None else Config()
    table = reader.read(files[0])
    kept, held = hold_out(table, fraction, seed)
    stage_table(outputs, output, kept)
    stage_table(outputs, control_output, held)
    report = Report()
    report.line(
        f"[bold]{files[0].name}[/]: {table.n_records:,} records — {kept.n_records:,} to protect, "
        f"{held.n_records:,} held out as control (seed {seed})"
    )
    finish(outputs, report)


def _refuse_split_options(output: Path | None, control_output: Path | None) -> None:
    from sdckit.errors import ConfigError

    for value, option in ((output, "--output"), (control_output, "--control-output")):
        if value is not None:
            raise ConfigError(f"{option} is written by --split only; attacks write --summary and --report")


def _attack(
    files: list[Path],
    config: Path | None,
    roles: InlineRoles,
    names: list[str] | None,
    control: Path | None,
    set_: list[str] | None,
    report_path: Path | None,
    summary: Path | None,
    server: str | None,
    key: str | None,
    quiet: bool,
) -> None:
    from sdckit.attack.base import run_attacks
    from sdckit.context import Context
    from sdckit.errors import ConfigError
    from sdckit.evaluate.evaluation import parse_settings

    wanted = 1 if server is not None else 2
    if len(files) != wanted:
        shape = "ORIGINAL with --server" if server is not None else "ORIGINAL RELEASE"
        raise ConfigError(f"attack takes {shape}, got {len(files)} file(s)")
    if (server is None) != (key is None) and server is not None:
        raise ConfigError("--server needs --key, the analyst's API key the attacker holds")
    if key is not None and server is None:
        raise ConfigError("--key is the API key of a query server: give --server URL too")
    settings_given = parse_settings(
        set_ or [], what="ATTACK.PARAMETER=VALUE", example="inference.secret=income"
    )
    outputs = Outputs([*files, config, control])
    outputs.file(report_path, "--report", (".html", ".htm"))
    outputs.file(summary, "--summary", (".json",))
    started = time.perf_counter()
    settings = load_settings(config, roles)
    original = settings.read(files[0])
    release, inputs = _release(files, settings, names, server, key)
    held = settings.read(control) if control is not None else None
    with progress_bar(not quiet, "attack") as progress:
        context = Context(config=settings, progress=progress, stage=stage_messages(quiet, started))
        result = run_attacks(
            original, release, held, attacks=names, settings=settings_given, inputs=inputs, context=context
        )
    elapsed = time.perf_counter() - started
    target = server if server is not None else files[1].name
    document = {
        "original": str(files[0]),
        "release": server if server is not None else str(files[1]),
        "control": None if control is None else str(control),
        **result.summary(),
        "elapsed_seconds": round(elapsed, 3),
    }
    stage_json(outputs, summary, document)
    if report_path is not None:
        from sdckit.attack._html import write_attack_report

        title = f"Attacks on {target} (release of {files[0].name})"
        outputs.stage(report_path, lambda path: write_attack_report(result, path, title=title))
    report = _terminal_report(result, files[0].name, target, original.n_records, elapsed)
    failing = result.failing()
    violation = None if not failing else f"the release is not shown to hold against: {', '.join(failing)}"
    finish(outputs, report, violation=violation, allowed=True)


def _release(
    files: list[Path], settings: Any, names: list[str] | None, server: str | None, key: str | None
) -> tuple[Any, str]:
    """What is attacked and its kind: a running server; a published table, read as written (labels
    and released values), when every named attack attacks tables; else the release microdata."""
    from sdckit.attack.base import ServerTarget, attack_spec

    if server is not None:
        return ServerTarget(url=server.rstrip("/"), key=key or ""), "server"
    if names and all(attack_spec(name).inputs == "table" for name in names):
        from sdckit.io import read_table

        return read_table(files[1]), "table"
    return settings.read_release(files[1]), "microdata"


def _terminal_report(result: Any, original: str, target: str, records: int, elapsed: float) -> Report:
    from rich import box
    from rich.table import Table as RichTable

    report = Report()
    report.line(f"[bold]{target}[/] (release of {original}, {records:,} records): attacks — {elapsed:.2f} s")
    table = RichTable(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("attack", no_wrap=True)
    for heading in ("rate", "base", "ctrl"):
        table.add_column(heading, justify="right", no_wrap=True)
    table.add_column("risk [interval]", no_wrap=True)
    table.add_column("verdict", no_wrap=True)

    def rate(value: Any) -> str:
        return "—" if value is None else f"{value.value:.3f}"

    for item in result.results:
        risk = item.risk
        shown = "—" if risk.value != risk.value else f"{risk.value:.3f} [{risk.low:.3f}, {risk.high:.3f}]"
        verdict = "—" if item.verdict == "no threshold" else item.verdict
        table.add_row(item.name, rate(item.attack), rate(item.baseline), rate(item.control), shown, verdict)
    report.add(table)
    if any(item.verdict == "no threshold" for item in result.results):
        report.line(
            "base: an adversary without the release; ctrl: the attack on held-out records; "
            "verdict —: no threshold (--set ATTACK.max_risk=R)"
        )
    for name, reason in result.skipped.items():
        report.line(f"not run: {name} — {reason}")
    return report
