"""sdckit installed the way Python users install it: a lean core, the rest behind extras (issue 32).

- The extras of ``pyproject.toml`` and the modules :data:`sdckit._extras.EXTRAS` names for them agree,
  and the core is exactly the ten libraries of the issue.
- A missing extra is one :class:`~sdckit._extras.MissingExtraError` (an ``SdcError`` and an
  ``ImportError``) naming the extra and the pip command, from the library and from each command
  that needs it (exit 2, one line); the core commands run with every extra made uninstallable
  (``sys.modules[name] = None``: importlib then finds no such module, as when it is not installed).
- The wheel (``python -m build``) installed in a fresh virtual environment outside the source tree,
  with only the core dependencies, runs the README tour's risk and local-suppression commands and
  writes the same files as the source tree, then runs the whole README tour as written (evaluate
  leaves out the measures that need scikit-learn, saying so); ``sdckit serve`` there names its
  extra. Marked
  ``install`` (it builds, installs from the package registry and compiles the kernels cold: about
  two minutes; ``pytest -m "not install"`` leaves it out); skipped, with the reason, when the
  registry cannot be reached.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sdckit._extras import EXTRAS, MissingExtraError, install_command, missing_extra, require
from sdckit.errors import SdcError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_CONFIG = ROOT / "examples" / "example.yaml"
RELEASE_CONFIG = ROOT / "examples" / "students-release.yaml"  # the tour's out/release.yaml

#: The core of the issue: what `pip install sdckit` installs.
CORE = {"polars", "numpy", "numba", "scipy", "pyarrow", "pydantic", "pyyaml", "typer", "rich", "matplotlib"}

#: The import names of the distributions the extras install (a distribution's extras in brackets).
IMPORT_NAMES = {
    "fastapi": {"fastapi"},
    "uvicorn": {"uvicorn"},
    "httpx": {"httpx"},
    "opendp": {"opendp"},
    "jinja2": {"jinja2"},
    "scikit-learn": {"sklearn"},
    "dask[distributed]": {"dask", "distributed"},
    "highspy": {"highspy"},
}

#: Made uninstallable in the runs without extras: every extra's modules and what they bring along
#: that sdckit imports itself (starlette with fastapi, threadpoolctl with scikit-learn).
BLOCKED = sorted(
    {module for modules in EXTRAS.values() for module in modules} | {"starlette", "threadpoolctl"}
)


def _distribution(requirement: str) -> str:
    """``"dask[distributed]>=2024.8"`` -> ``"dask[distributed]"``: the name with its extras."""
    return re.match(r"[A-Za-z0-9_.\-]+(\[[^\]]*\])?", requirement).group(0).lower()


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


# The declared dependencies ------------------------------------------------------------------------


def test_core_dependencies_are_the_lean_core() -> None:
    assert {_distribution(requirement) for requirement in _project()["dependencies"]} == CORE


def test_extras_of_pyproject_install_the_modules_sdckit_names() -> None:
    optional = _project()["optional-dependencies"]
    assert set(optional) == {*EXTRAS, "all", "dev"}
    for extra, modules in EXTRAS.items():
        installed = set().union(*(IMPORT_NAMES[_distribution(item)] for item in optional[extra]))
        assert installed == set(modules), extra
    # [all] is every extra, requirement for requirement
    every = {requirement for extra in EXTRAS for requirement in optional[extra]}
    assert set(optional["all"]) == every
    assert len(optional["all"]) == len(every)


# The error and its message ------------------------------------------------------------------------


def test_require_names_the_extra_and_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "highspy", None)
    with pytest.raises(MissingExtraError) as caught:
        require("tables", feature="sdckit table suppress")
    error = caught.value
    assert str(error) == (
        "sdckit table suppress needs the 'tables' extra (highspy is not installed): "
        "pip install 'sdckit[tables]'"
    )
    assert isinstance(error, SdcError) and isinstance(error, ImportError)
    assert (error.extra, error.name) == ("tables", "highspy")


def test_require_checks_only_the_modules_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fastapi", None)
    require("server", "httpx", feature="sdckit query")  # httpx is there: no error
    with pytest.raises(MissingExtraError, match=r"^sdckit serve needs the 'server' extra \(fastapi is"):
        require("server", "httpx", "fastapi", feature="sdckit serve")


def test_require_refuses_an_unknown_extra_or_a_module_it_does_not_install() -> None:
    with pytest.raises(ValueError, match="unknown extra 'sever'"):
        require("sever", feature="x")
    with pytest.raises(ValueError, match="the extra 'dp' does not install 'fastapi'"):
        require("dp", "fastapi", feature="x")


def test_missing_extra_names_the_top_level_module() -> None:
    error = missing_extra("ui", ModuleNotFoundError("no", name="fastapi.responses"), "the workbench")
    assert str(error) == (
        "the workbench needs the 'ui' extra (fastapi is not installed): pip install 'sdckit[ui]'"
    )
    assert install_command("all") == "pip install 'sdckit[all]'"


def test_library_functions_raise_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import polars as pl

    from sdckit.anonymize.perturbation import dp_noise
    from sdckit.table import Attribute, Kind, Schema, Table
    from sdckit.utility.propensity import propensity_utility

    table = Table(pl.DataFrame({"age": [30.0, 40.0, 50.0]}), Schema((Attribute("age", kind=Kind.NUMERIC),)))
    monkeypatch.setitem(sys.modules, "opendp", None)
    with pytest.raises(MissingExtraError, match=r"^dp-noise needs the 'dp' extra .*'sdckit\[dp\]'$"):
        dp_noise(table, 1.0, {"age": (0.0, 100.0)})
    monkeypatch.setitem(sys.modules, "sklearn", None)
    frame = pl.DataFrame({"a": ["x", "y"]})
    with pytest.raises(MissingExtraError, match=r"^the propensity utility measure needs the 'learn'"):
        propensity_utility(frame, frame, ["a"])


# The command line without the extras ---------------------------------------------------------------

# Runs each command line of argv[2] (JSON) in this one process with the modules of argv[1] made
# uninstallable, and prints each one's exit status and stderr as JSON.
DRIVER = """
import contextlib, io, json, sys
for name in json.loads(sys.argv[1]):
    sys.modules[name] = None
from sdckit.cli import main
results = []
for arguments in json.loads(sys.argv[2]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            main(arguments)
        except SystemExit as exit_:
            code = exit_.code
    results.append([code, err.getvalue()])
loaded = sorted(n for n in json.loads(sys.argv[1]) if sys.modules.get(n) is not None)
print(json.dumps({"results": results, "loaded": loaded}))
"""


def _generate(folder: Path, records: int = 2000) -> Path:
    """The tour's example records, by the repository's generator (python -m examples.generate)."""
    path = folder / "example.csv"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "examples.generate",
            "--records",
            str(records),
            "--seed",
            "1",
            "--output",
            str(path),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return path


def readme_tour() -> list[str]:
    """The command lines of the README's quick tour (continuations joined, comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## A quick tour", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    joined = re.sub(r"\\\n\s*", " ", block)
    lines = [line.split("  #", 1)[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line]


def test_the_readme_tour_is_found() -> None:
    tour = readme_tour()
    assert tour[0].startswith("python -m examples.generate ") and len(tour) >= 8
    assert all(line.startswith("sdckit ") for line in tour[1:]), tour


def _without_extras(folder: Path, commands: list[list[str]]) -> list[tuple[int, str]]:
    run = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(BLOCKED), json.dumps(commands)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout.splitlines()[-1])
    assert answer["loaded"] == []
    return [tuple(result) for result in answer["results"]]


def _one_line(extra: str, feature: str, module: str) -> str:
    """The line a command prints when ``extra`` is missing."""
    return f"error: {MissingExtraError(extra, module, feature)}"


@pytest.mark.slow
def test_commands_without_the_extras(tmp_path: Path) -> None:
    _generate(tmp_path)
    example, release = EXAMPLE_CONFIG, RELEASE_CONFIG
    core = [
        f"risk combined example.csv -c {example} -o scores.csv",
        f"anonymize local-suppression example.csv -c {example} -k 3 -o ls.csv",
        f"anonymize generalize example.csv -c {release} -k 5 --suppression-limit 0.05 -o release.csv "
        "--summary release.json",
        f"check release.csv -c {release} -k 5",
        f"risk reidentification release.csv -c {release} --release",
        "apply release.json example.csv -o again.csv",
        f"evaluate example.csv release.csv -c {release} --utility tables --loss-axis tables",
        f"evaluate example.csv release.csv -c {release} --summary evaluated.json",  # the default measures
        f"table round example.csv -c {example} --rows gender --cols gifted --base 5",
        "serve --help",  # the help of a command whose extra is missing is there to read
        "table suppress --help",
    ]
    # each with the extra it names, what needs it and the module found missing first
    needing = [
        ("serve -c server.yaml", "server", "sdckit serve", "fastapi"),
        ("ui", "ui", "sdckit ui", "fastapi"),
        ("query adult --url http://127.0.0.1:9 --key k", "server", "sdckit query", "httpx"),
        (
            f"evaluate example.csv release.csv -c {release} --utility tables,propensity",
            "learn",
            "sdckit evaluate with propensity utility",
            "sklearn",
        ),
        (
            f"table suppress example.csv -c {example} --rows gender --min-frequency 3",
            "tables",
            "sdckit table suppress",
            "highspy",
        ),
        (
            f"risk combined example.csv -c {example} --engine dask -o s.parquet",
            "scale",
            "--engine dask",
            "dask",
        ),
    ]
    # the library says it, once the data is read: the last line
    late = [
        (
            f"utility propensity example.csv release.csv -c {release}",
            "learn",
            "the propensity utility measure",
            "sklearn",
        ),
        (
            f"anonymize dp-noise example.csv -c {release} --epsilon 1 --bounds birth_year:1980:2008 "
            "--attributes birth_year -o dp.csv",
            "dp",
            "dp-noise",
            "opendp",
        ),
        (
            f"anonymize synthesize example.csv -c {release} -o synthetic.csv",
            "learn",
            "synthesis by cart",
            "sklearn",
        ),
    ]
    commands = core + [command for command, *_ in needing + late]
    results = _without_extras(tmp_path, [shlex.split(command) for command in commands])
    for command, (code, stderr) in zip(core, results[: len(core)], strict=True):
        assert code == 0, (command, stderr)
    # by default, evaluate leaves out the measures that need scikit-learn and says so in one line
    default_evaluate = results[core.index(next(c for c in core if "evaluated.json" in c))][1]
    assert (
        "propensity and classifier utility left out: their models need the 'learn' extra "
        "(pip install 'sdckit[learn]')"
    ) in default_evaluate
    evaluated = json.loads((tmp_path / "evaluated.json").read_text())
    assert list(evaluated["releases"][0]["utility"]) == ["numeric", "tables"]
    answers = results[len(core) : len(core) + len(needing)]
    for (command, extra, feature, module), (code, stderr) in zip(needing, answers, strict=True):
        assert (code, stderr.strip().splitlines()) == (2, [_one_line(extra, feature, module)]), command
    answers = results[len(core) + len(needing) :]
    for (command, extra, feature, module), (code, stderr) in zip(late, answers, strict=True):
        assert code == 2, (command, stderr)
        assert stderr.strip().splitlines()[-1] == _one_line(extra, feature, module), command
        assert "Traceback" not in stderr
    assert (tmp_path / "ls.csv").exists() and (tmp_path / "again.csv").exists()
    assert not (tmp_path / "dp.csv").exists() and not (tmp_path / "synthetic.csv").exists()


# The wheel in a fresh virtual environment ----------------------------------------------------------


#: What pip says when it cannot reach the registry (not: a requirement the registry does not hold).
UNREACHABLE = re.compile(
    r"NewConnectionError|Temporary failure in name resolution|Network is unreachable|Max retries exceeded"
    r"|ConnectTimeout|Read timed out|ProxyError|Connection refused"
)


def _registry_unreachable(folder: Path) -> str | None:
    """Why the package registry cannot be reached (None when it can): the build's own first need,
    asked with one retry so that an offline machine skips in seconds."""
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "1", "--timeout", "15"]
        + ["--dest", str(folder), "setuptools>=68"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if probe.returncode == 0:
        return None
    lines = (probe.stderr or probe.stdout).strip().splitlines()
    return lines[-1] if lines else f"pip download exited {probe.returncode}"


def _skip_if_unreachable(run: subprocess.CompletedProcess, what: str) -> None:
    """A build or install that failed because the registry went away is a skip, with pip's words."""
    if run.returncode != 0 and UNREACHABLE.search(run.stdout + run.stderr):
        found = UNREACHABLE.search(run.stdout + run.stderr).group(0)
        pytest.skip(f"the package registry cannot be reached ({what}: {found})")


def _source_copy(folder: Path) -> Path:
    """What the wheel is built from, copied away from the work tree: nothing is written there (no
    build/ nor egg-info beside other work) and no numba cache or bytecode is packed."""
    source = folder / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    )
    return source


def _check(run: subprocess.CompletedProcess, what: str) -> None:
    assert run.returncode == 0, f"{what} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"


@pytest.mark.install
def test_wheel_in_a_fresh_environment_with_the_core_only(tmp_path: Path) -> None:
    pytest.importorskip("build", reason="the build tool is not installed (pip install -e '.[dev]')")
    reason = _registry_unreachable(tmp_path / "probe")
    if reason is not None:
        pytest.skip(f"the package registry cannot be reached: {reason}")
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(_source_copy(tmp_path))],
        capture_output=True,
        text=True,
        timeout=600,
    )
    _skip_if_unreachable(build, "python -m build")
    _check(build, "python -m build")
    (wheel,) = dist.glob("sdckit-*.whl")

    # A venv of its own without pip (the test's pip installs into it: no ensurepip), core only.
    venv = tmp_path / "venv"
    _check(
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True
        ),
        "venv",
    )
    python, sdckit = venv / "bin" / "python", venv / "bin" / "sdckit"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-compile",
            "--quiet",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    _skip_if_unreachable(install, "pip install of the wheel")
    _check(install, "pip install of the wheel")

    work = tmp_path / "work"  # outside the source tree: nothing of it on the path
    work.mkdir()
    environment = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    environment["PATH"] = f"{venv / 'bin'}{os.pathsep}{environment.get('PATH', '')}"

    def in_venv(*arguments: str | Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(a) for a in arguments],
            cwd=work,
            env=environment,
            capture_output=True,
            text=True,
            timeout=900,
        )

    where = in_venv(python, "-c", f"import json, importlib.util, sdckit; print(json.dumps([sdckit.__file__, "
                    f"[m for m in {BLOCKED!r} if importlib.util.find_spec(m)]]))")  # fmt: skip
    _check(where, "import sdckit")
    location, extras_present = json.loads(where.stdout)
    assert Path(location).is_relative_to(venv)
    assert extras_present == []  # only the core dependencies

    data = _generate(work)
    tour = [
        ("scores.csv", ["risk", "combined", data.name, "-c", str(EXAMPLE_CONFIG), "-o", "scores.csv"]),
        (
            "ls.csv",
            [
                "anonymize",
                "local-suppression",
                data.name,
                "-c",
                str(EXAMPLE_CONFIG),
                "-k",
                "3",
                "-o",
                "ls.csv",
            ],
        ),
    ]
    source_out = tmp_path / "source-run"  # the same commands with the source tree's sdckit: the oracle
    source_out.mkdir()
    shutil.copy2(data, source_out / data.name)
    for output, arguments in tour:
        _check(in_venv(sdckit, *arguments), f"sdckit {' '.join(arguments[:2])} (installed)")
        mine = subprocess.run(
            [sys.executable, "-m", "sdckit", *arguments], cwd=source_out, capture_output=True, text=True
        )
        _check(mine, f"sdckit {' '.join(arguments[:2])} (source tree)")
        assert (work / output).read_bytes() == (source_out / output).read_bytes(), output
    checked = in_venv(sdckit, "check", "ls.csv", "-c", EXAMPLE_CONFIG, "-k", "3")
    _check(checked, "sdckit check")
    assert "required 3-anonymity: satisfied" in checked.stdout

    # the README tour as written, in a folder holding the repository's examples/ and the tour's data
    skip = shutil.ignore_patterns("*.py", "__pycache__")
    shutil.copytree(ROOT / "examples", work / "examples", ignore=skip)
    (work / "out").mkdir()
    shutil.copy2(data, work / "out" / "example.csv")
    for line in readme_tour():
        if line.startswith("python -m examples.generate "):
            continue  # the generator is the repository's, not the package's: its output is copied above
        arguments = shlex.split(line)
        assert arguments[0] == "sdckit", line
        _check(in_venv(sdckit, *arguments[1:]), f"{line} (installed, README tour)")
    for output in ("scores.csv", "release.csv", "report.html", "protected.csv", "again.csv", "experiment"):
        assert (work / "out" / output).exists(), output

    served = in_venv(sdckit, "serve", "-c", "server.yaml")
    assert (served.returncode, served.stderr.strip().splitlines()) == (
        2,
        [_one_line("server", "sdckit serve", "fastapi")],
    )
