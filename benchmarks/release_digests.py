"""Digests of what sdckit writes, to prove a refactoring changed no release, summary or figure.

Runs, in one process through the command line (typer's runner):

* every registered anonymization method on the small case of ``tests/test_recipes.py::RUNS``
  (its data, configuration and options), in CSV;
* the README tour's methods on the generated example data (``examples.generate --records 2000
  --seed 1``) with ``examples/release.yaml``: generalize, local suppression, Mondrian, MDAV,
  targeted suppression (repeated), noise, PRAM and a two-step ``protect`` plan;
* the risk measures (combined, reidentification, SUDA) and ``check`` on the example data;
* ``table suppress`` (heuristic) and ``table round`` on the generated firms.

and prints one SHA-256 per case: of the written release (or table) and of the ``--summary``
document with what varies between runs removed (times, paths, versions, dates). Usage::

    python benchmarks/release_digests.py -o before.json        # before the change
    python benchmarks/release_digests.py --compare before.json # after: lists every case that differs

Exit status 1 when ``--compare`` finds a difference. The digests depend on the machine's numeric
libraries as any byte comparison does: compare two runs on one machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

#: Summary keys whose values vary between two runs of the same release.
VARYING = re.compile(
    r"(seconds|elapsed|time|timing|duration|started|finished|created|version|path|file|cwd|date)",
    re.IGNORECASE,
)


def _stable(value):
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if not VARYING.search(str(k))}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str) and ("/" in value or "\\" in value):
        return Path(value).name  # a path: its name only (the folder is a temporary one)
    return value


def digest_file(path: Path) -> str:
    if not path.exists():
        return "missing"
    if path.is_dir():
        hasher = hashlib.sha256()
        for part in sorted(path.rglob("*")):
            if part.is_file():
                hasher.update(part.relative_to(path).as_posix().encode())
                hasher.update(part.read_bytes())
        return hasher.hexdigest()
    if path.suffix == ".json":
        document = _stable(json.loads(path.read_text(encoding="utf-8")))
        return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(arguments: list[str], outputs: list[Path]) -> dict[str, str]:
    from typer.testing import CliRunner

    from sdckit.cli import app

    result = CliRunner().invoke(app, [str(a) for a in arguments])
    digests = {"exit": str(result.exit_code)}
    for path in outputs:
        digests[path.name] = digest_file(path)
    return digests


def cases(folder: Path):
    """(name, arguments, outputs) of every case."""
    from examples.generate import main as generate

    from test_recipes import NOT_REPLAYABLE, RUNS, write_inputs

    for method in sorted(set(RUNS) - NOT_REPLAYABLE):  # dp-noise draws from OpenDP's secure generator
        case = folder / f"small-{method}"
        case.mkdir()
        data, config, options = write_inputs(case, method)
        out, summary = case / "release.csv", case / "release.json"
        yield (
            f"small {method}",
            ["anonymize", method, data, "-c", config, "-o", out, "--summary", summary, *options],
            [out, summary],
        )
    example, firms = folder / "example.csv", folder / "firms.csv"
    generate(["--records", "2000", "--seed", "1", "--output", str(example)])
    generate(["--kind", "firms", "--records", "3000", "--seed", "1", "--output", str(firms)])
    release_yaml, example_yaml = ROOT / "examples" / "release.yaml", ROOT / "examples" / "example.yaml"
    tour = {
        "generalize": ["-k", "5", "--suppression-limit", "0.05"],
        "local-suppression": ["-k", "3"],
        "mondrian": ["-k", "5"],
        "mdav": ["-k", "3", "--attributes", "birth_year,entry_school_year"],
        "targeted-suppression": ["--delta", "0.05", "--repeat"],
        "noise": ["--amount", "0.1", "--seed", "3"],
        "pram": ["--seed", "3"],
    }
    for method, options in tour.items():
        out, summary = folder / f"tour-{method}.csv", folder / f"tour-{method}.json"
        yield (
            f"example {method}",
            ["anonymize", method, example, "-c", release_yaml, "-o", out, "--summary", summary, *options],
            [out, summary],
        )
    out, summary = folder / "protected.csv", folder / "protected.json"
    yield (
        "example protect plan",
        ["protect", example, "-c", release_yaml, "--recipe", ROOT / "examples" / "plan.yaml", "-o", out,
         "--summary", summary],
        [out, summary],
    )  # fmt: skip
    for measure, extra in (("combined", []), ("reidentification", []), ("suda", [])):
        out, summary = folder / f"risk-{measure}.csv", folder / f"risk-{measure}.json"
        yield (
            f"example risk {measure}",
            ["risk", measure, example, "-c", example_yaml, "-o", out, "--summary", summary, *extra],
            [out, summary],
        )
    summary = folder / "check.json"
    yield "example check", ["check", folder / "tour-generalize.csv", "-c", release_yaml, "-k", "5",
                            "--summary", summary], [summary]  # fmt: skip
    firms_yaml = ROOT / "examples" / "firms.yaml"
    for method, options in (
        ("suppress", ["--value", "turnover", "--rule", "p=10", "--min-frequency", "3", "--algorithm",
                      "heuristic"]),
        ("round", ["--value", "employees", "--base", "5"]),
    ):  # fmt: skip
        out, summary = folder / f"table-{method}.csv", folder / f"table-{method}.json"
        yield (
            f"firms table {method}",
            ["table", method, firms, "-c", firms_yaml, "--rows", "activity", "--cols", "size", *options,
             "-o", out, "--summary", summary],
            [out, summary],
        )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, help="write the digests to this JSON file")
    parser.add_argument("--compare", type=Path, help="compare with the digests of an earlier run")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    digests: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, arguments, outputs in cases(Path(scratch)):
            digests[name] = run(arguments, outputs)
            print(f"{name:40s} " + " ".join(f"{k}={v[:12]}" for k, v in digests[name].items()), flush=True)
    print(f"{len(digests)} cases in {time.perf_counter() - started:.1f} s")
    if args.output:
        args.output.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.compare:
        before = json.loads(args.compare.read_text(encoding="utf-8"))
        differ = sorted(n for n in set(before) | set(digests) if before.get(n) != digests.get(n))
        for name in differ:
            print(f"DIFFERS: {name}: {before.get(name)} -> {digests.get(name)}")
        print(f"{len(differ)} of {len(digests)} cases differ")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
