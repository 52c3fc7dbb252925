"""The documentation cannot drift: every command example and every Python block of README.md,
docs/*.md and examples/README.md runs and exits as its page says (the README's tour as a new user
runs it, from a fresh clone), every anonymization method and each of its options is documented in
docs/anonymize.md, every option of every other command on its page, and every command group of
``sdckit --help`` has its page.

How examples are written (the convention this test enforces):

* A fenced block with the info string ``sh`` holds examples. Its lines that start with ``sdckit ``
  are run through the command line, and its lines that start with ``python -m examples.generate ``
  through the example data generator; every other line (``make demo``, comments) is only shown. A
  line ending in ``\\`` goes on on the next line; ``# ...`` comments are stripped (shell rules,
  ``shlex``), so quote ``#`` and ``;`` in arguments as a shell would need.
* An HTML comment on the line just before the opening fence qualifies the block:

  - ``<!-- not run -->`` (or ``<!-- not run: why -->``): shown, never run. Only for synopsis lines
    with placeholders (``DATA``, ``CONFIG``, ``[...]``) and for runs that need the Adult data or far
    more than a few seconds; prefer a real example that runs.
  - ``<!-- exit 3 -->`` (any status): every command of the block must exit with that status;
    without it, with 0. A command that exits otherwise than 0 must write nothing, unless it is given
    ``--allow-violations`` or is ``sdckit check`` (whose summary reports the failure).
  - ``<!-- file: out/release.yaml -->``: the block (of any language) is a file the examples use;
    it is written at that path, relative to the directory the examples run in.
  - ``<!-- server: out/server.yaml -->``: a ``python`` block that talks to a running query server:
    the test starts ``sdckit serve`` on that configuration (on a free port, with a new key in
    ``SDCKIT_KEY``) for this block, and the block's ``http://127.0.0.1:8000`` is that server.

* A fenced block with the info string ``python`` is run whole, as Python; a page's Python blocks
  share one namespace, so a later block may use what an earlier one made. Unless a marker says
  otherwise (``not run``, which is counted: :data:`PYTHON_NOT_RUN`), every Python block runs.
  Blocks of ``text``, ``yaml``, ``csv`` and ``json`` are only shown; any other info string (``py``,
  ``bash``, none) is an error, so that no example is shown and silently never run.
* Each page runs in a fresh directory of its own, its commands and Python blocks in page order, so
  that a command can read what an earlier one of the same page wrote (``anonymize ... --summary
  out/g.json`` then ``apply out/g.json ...``). The directory starts with ``examples/`` (the
  repository's), the example data ``out/example.csv`` (``python -m examples.generate --records 2000
  --seed 1``: 2,000 records keep the whole file under a minute) and every ``file:`` block of every
  page, so that any page may use the configuration and plan another page shows. The README is the
  exception: its tour runs as a new user runs it, in a directory holding ``examples/`` only, as a
  fresh clone does, so that it may use no file that only another page shows.
* A command that exits 0 has written every file it was asked for (``-o``, ``--output``,
  ``--summary``, ``--report``, ``--histogram``, ``--export-mappings``).
* Commands run in this process with typer's CliRunner (``from sdckit.cli import app``): the same
  commands as the ``sdckit`` console script, without paying its start-up (polars, numba) per line.
* A ``sdckit table`` example that applies primary rules (``--rule``, ``--min-frequency``) and exits 0
  must flag some cell, so that it shows a real pattern rather than a table with nothing to protect:
  the test reads ``primary_cells`` from the command's ``--summary`` (it adds ``--summary`` in a
  scratch directory when the example writes none) and asserts it is above 0. Choose the table and the
  rules so that they bite on the example data.

``python tests/test_docs.py`` prints the options table of every anonymization method, generated from
the registry, as docs/anonymize.md shows it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), ROOT / "examples" / "README.md"]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
MARKER = re.compile(r"^<!--\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    marker: str = ""  # the HTML comment just before the fence, without <!-- -->

    @property
    def run(self) -> bool:
        return self.language in ("sh", "python") and not self.file and not self.marker.startswith("not run")

    @property
    def exit_status(self) -> int:
        found = re.fullmatch(r"exit\s+(\d+)", self.marker)
        return int(found.group(1)) if found else 0

    @property
    def file(self) -> str | None:
        found = re.fullmatch(r"file:\s*(\S+)", self.marker)
        return found.group(1) if found else None

    @property
    def server(self) -> str | None:
        """The query server configuration a Python block needs running, if any."""
        found = re.fullmatch(r"server:\s*(\S+)", self.marker)
        return found.group(1) if found else None

    def commands(self) -> list[tuple[int, str]]:
        """The runnable lines, continuation lines joined, each with its page line."""
        commands: list[tuple[int, str]] = []
        pending, start = "", 0
        for offset, raw in enumerate(self.text.splitlines(), start=self.line + 1):
            if not pending:
                start = offset
            line = raw.rstrip()
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            whole, pending = (pending + line).strip(), ""
            if whole.startswith(("sdckit ", "python -m examples.generate ")):
                commands.append((start, whole))
        assert not pending, f"{self.page.name}:{start}: a command ends in a continuation backslash"
        return commands


@dataclass
class Page:
    path: Path
    blocks: list[Block] = field(default_factory=list)


def parse(path: Path) -> Page:
    """The fenced blocks of a Markdown page, each with the HTML comment just before it."""
    page = Page(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    number = 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if not opening:
            number += 1
            continue
        fence, language = opening.group(1), opening.group(2)
        before = next((lines[i].strip() for i in range(number - 1, -1, -1) if lines[i].strip()), "")
        marker = MARKER.match(before)
        end = number + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        assert end < len(lines), f"{path.name}:{number + 1}: the code block is never closed"
        text = "\n".join(lines[number + 1 : end])
        page.blocks.append(Block(path, number + 1, language, text, marker.group(1) if marker else ""))
        number = end + 1
    return page


def all_pages() -> list[Page]:
    return [parse(path) for path in PAGES]


def shown_files() -> dict[str, Block]:
    files: dict[str, Block] = {}
    for page in all_pages():
        for block in page.blocks:
            if block.file:
                other = files.get(block.file)
                assert other is None or other.text == block.text, (
                    f"{block.file} is shown twice, differently: {other.page.name}:{other.line} "
                    f"and {block.page.name}:{block.line}"
                )
                files[block.file] = block
    return files


# Running the examples -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_data(tmp_path_factory) -> Path:
    """The 2,000 example records, generated once."""
    from examples.generate import main as generate

    folder = tmp_path_factory.mktemp("example-data")
    assert generate(["--records", "2000", "--seed", "1", "--output", str(folder / "example.csv")]) == 0
    return folder / "example.csv"


def prepare(directory: Path, example_data: Path | None) -> None:
    """A page's directory: the repository's ``examples/`` and, unless ``example_data`` is None (the
    README's fresh clone), ``out/`` with the example data and every file the pages show."""
    shutil.copytree(ROOT / "examples", directory / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    if example_data is None:
        return
    (directory / "out").mkdir()
    shutil.copy(example_data, directory / "out" / "example.csv")
    for name, block in shown_files().items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text + "\n", encoding="utf-8")


def run_line(command: str) -> tuple[int, str]:
    """Run one documented line in the current directory: its exit status and what it printed."""
    words = shlex.split(command, comments=True)
    if words[0] == "sdckit":
        from typer.testing import CliRunner

        from sdckit.cli import _outputs, app

        result = CliRunner().invoke(app, words[1:])
        _outputs._committed.clear()  # the console script would exit here: nothing of this run to undo
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.output
    from examples.generate import main as generate

    return generate(words[3:]), ""


#: Options of ``sdckit table`` that apply primary rules: an example with one must flag a cell.
PRIMARY_RULES = ("--rule", "--min-frequency")


def primary_summary(command: str, scratch: Path) -> tuple[str, Path | None]:
    """The command to run and the ``--summary`` to read its primary cells from: None unless it is a
    ``sdckit table`` command applying primary rules; a scratch summary added when it writes none."""
    words = shlex.split(command, comments=True)
    if words[:2] != ["sdckit", "table"]:
        return command, None
    if not any(word.split("=", 1)[0] in PRIMARY_RULES for word in words):
        return command, None
    for index, word in enumerate(words):
        if word == "--summary" and index + 1 < len(words):
            return command, Path(words[index + 1])
        if word.startswith("--summary="):
            return command, Path(word.split("=", 1)[1])
    summary = scratch / f"summary-{len(list(scratch.iterdir()))}.json"
    return f"{command} --summary {shlex.quote(str(summary))}", summary


#: Options whose value is a file (or folder) the command writes.
OUTPUT_OPTIONS = ("-o", "--output", "--summary", "--report", "--histogram", "--export-mappings")


def outputs(command: str) -> list[str]:
    """The files a documented command is asked to write."""
    words = shlex.split(command, comments=True)
    found = []
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name in OUTPUT_OPTIONS and (equals or index + 1 < len(words)):
            found.append(value if equals else words[index + 1])
    return found


#: The info strings of fenced blocks: ``sh`` and ``python`` run, the others are shown or are files.
LANGUAGES = ("sh", "python", "text", "yaml", "csv", "json")

#: Python blocks marked ``not run``, per page: none is skipped without being counted here.
PYTHON_NOT_RUN: dict[str, int] = {}

#: What a Python block shows as the query server's address; the test's server replaces it.
SHOWN_SERVER = "http://127.0.0.1:8000"


@contextmanager
def query_server(configuration: Path, monkeypatch) -> Iterator[str]:
    """``sdckit serve`` on ``configuration`` in a subprocess on a free port, as an analyst reaches
    it: a new key of every dataset in ``SDCKIT_KEY``. Yields the server's address."""
    from typer.testing import CliRunner

    from sdckit.cli import app

    result = CliRunner().invoke(app, ["keys", "add", "docs-reader", "--all", "--config", str(configuration)])
    assert result.exit_code == 0, f"sdckit keys add on {configuration}:\n{result.output}"
    monkeypatch.setenv("SDCKIT_KEY", result.stdout.strip())
    log = configuration.with_name("server.log")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    arguments = ["serve", "--config", str(configuration), "--host", "127.0.0.1", "--port", "0"]
    with log.open("ab") as errors:
        server = subprocess.Popen(
            [sys.executable, "-c", f"from sdckit.cli import main; main({arguments!r})"],
            stdout=subprocess.PIPE,
            stderr=errors,
            env=environment,
        )
    try:
        line = server.stdout.readline().decode()  # "serving ... on http://127.0.0.1:PORT ..."
        found = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
        assert found, f"sdckit serve printed {line!r}; its log:\n{log.read_text()}"
        url = found.group(1)
        deadline = time.monotonic() + 120  # the address is printed once the port is bound
        while not answers(url):
            assert server.poll() is None, f"the server died:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"the server did not answer:\n{log.read_text()}"
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stdout.close()
    assert "Traceback" not in log.read_text(), f"the server logged an error:\n{log.read_text()}"


def answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(f"{url}/openapi.json", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def run_python(block: Block, namespace: dict, directory: Path, monkeypatch) -> None:
    """Run a Python block in the page's namespace; a failure names the page and the block's line
    (the traceback's line numbers are the page's)."""
    text = block.text
    with ExitStack() as stack:
        if block.server:
            where = f"{block.page.name}:{block.line}"
            assert SHOWN_SERVER in text, f"{where}: the block never uses {SHOWN_SERVER}"
            url = stack.enter_context(query_server(directory / block.server, monkeypatch))
            text = text.replace(SHOWN_SERVER, url)
        code = compile("\n" * block.line + text, str(block.page), "exec")
        try:
            exec(code, namespace)
        except Exception as error:
            raise AssertionError(
                f"{block.page.name}:{block.line}: the Python block fails: {type(error).__name__}: {error}"
            ) from error


def files(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


def leftovers(directory: Path) -> list[str]:
    """Hidden temporary outputs of a run, which the write contract says never remain."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob(".*.tmp*"))


@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_examples_run_as_documented(path, example_data, tmp_path, tmp_path_factory, monkeypatch):
    scratch = tmp_path_factory.mktemp("summaries")
    prepare(tmp_path, None if path == ROOT / "README.md" else example_data)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    namespace: dict = {"__name__": f"docs.{path.stem}"}
    for block in parse(path).blocks:
        if not block.run:
            continue
        if block.language == "python":
            run_python(block, namespace, tmp_path, monkeypatch)
            left = leftovers(tmp_path)
            assert not left, f"{path.name}:{block.line}\nleft temporary files: {left}"
            continue
        for line, command in block.commands():
            before = files(tmp_path)
            run, summary = primary_summary(command, scratch)
            status, output = run_line(run)
            where = f"{path.name}:{line}: {command}"
            assert status == block.exit_status, (
                f"{where}\nexited {status}, the page says {block.exit_status}\n{output}"
            )
            if summary is not None and status == 0:
                primary = json.loads(summary.read_text(encoding="utf-8"))["primary_cells"]
                assert primary > 0, (
                    f"{where}\nflags no primary cell: show a table and rules with cells to protect\n{output}"
                )
            assert not leftovers(tmp_path), f"{where}\nleft temporary files: {leftovers(tmp_path)}"
            new = files(tmp_path) - before
            missing = [name for name in outputs(command) if not Path(name).exists()]
            assert status != 0 or not missing, f"{where}\nexited 0 but did not write {missing}\n{output}"
            if status == 0 or "--allow-violations" in command or command.startswith("sdckit check "):
                continue
            assert not new, f"{where}\nexited {status} but wrote {sorted(new)}"


def test_the_examples_are_found():
    """The parser sees what the pages hold: runnable commands in every command page, the README's
    tour among them, Python blocks that are not run only where counted, and the markers it
    understands only."""
    known = re.compile(r"not run(:.*)?|exit \d+|file: \S+|server: \S+")
    counted, python, python_not_run = {}, 0, {}
    for page in all_pages():
        for block in page.blocks:
            where = f"{page.path.name}:{block.line}"
            assert not block.marker or known.fullmatch(block.marker), f"{where}: <!-- {block.marker} -->?"
            # a block in another spelling (py, bash, console) would be shown and silently never run
            assert block.language in LANGUAGES, f"{where}: ```{block.language}? (known: {LANGUAGES})"
            assert not (block.file and block.language == "sh"), f"{where}: a file block is not an example"
            assert not block.server or block.language == "python", f"{where}: a server is for a Python block"
            if block.language == "python" and not block.file:
                python += 1
                if not block.run:
                    python_not_run[page.path.name] = python_not_run.get(page.path.name, 0) + 1
        counted[page.path.name] = sum(len(b.commands()) for b in page.blocks if b.run and b.language == "sh")
    pages = ("README.md", "risk.md", "check.md", "anonymize.md", "protect-and-apply.md", "experiments.md")
    for name in pages:
        assert counted.get(name, 0) >= 1, f"{name} has no runnable example: {counted}"
    assert python_not_run == PYTHON_NOT_RUN, f"Python blocks not run: {python_not_run}"
    assert python >= 11, f"only {python} Python blocks found"
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## A quick tour")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tour = [block for block in parse(ROOT / "README.md").blocks if start < block.line - 1 < end]
    assert tour and all(block.run and block.commands() for block in tour), "the README's tour is not run"


def test_python_blocks_share_a_namespace_and_fail_at_their_page_line(tmp_path, monkeypatch):
    """The blocks of a page run in one namespace; a failing one names its page and fence line, and
    its traceback the page's line of the failing statement."""
    import traceback

    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n```python\ntotal = 40\n```\n\ntext\n\n"
        "```python\ntotal += 2\nnames = total.upper()\n```\n",
        encoding="utf-8",
    )
    first, second = parse(page).blocks
    namespace: dict = {}
    run_python(first, namespace, tmp_path, monkeypatch)
    with pytest.raises(
        AssertionError, match=r"page\.md:9: the Python block fails: AttributeError"
    ) as failure:
        run_python(second, namespace, tmp_path, monkeypatch)
    assert namespace["total"] == 42
    frames = traceback.extract_tb(failure.value.__cause__.__traceback__)
    assert (frames[-1].filename, frames[-1].lineno) == (str(page), 11)


def test_outputs_are_the_values_of_output_options():
    command = (
        "sdckit evaluate a.csv b.csv -c c.yaml --report out/r.html --summary=out/s.json -o out/x.csv -k 5"
    )
    assert outputs(command) == ["out/r.html", "out/s.json", "out/x.csv"]


#: The files of the README's tour, shipped in examples/, and the blocks of the pages that explain them.
TOUR_FILES = {"examples/release.yaml": "out/release.yaml", "examples/plan.yaml": "out/plan.yaml"}


def test_the_tour_files_are_those_the_pages_show():
    """The configuration and the plan the README's tour uses are, byte for byte, those that
    docs/anonymize.md and docs/protect-and-apply.md show and explain."""
    shown = shown_files()
    for shipped, name in TOUR_FILES.items():
        block = shown[name]
        assert (ROOT / shipped).read_text(encoding="utf-8") == block.text + "\n", (
            f"{shipped} differs from {name} of {block.page.name}:{block.line}"
        )


# What the pages must cover ------------------------------------------------------------------------


def section(text: str, heading: str) -> str:
    """The text of the ``## heading`` section (up to the next heading of level 2 or 1)."""
    found = re.search(rf"^## `?{re.escape(heading)}`?\s*$(.*?)(?=^#{{1,2}} |\Z)", text, re.M | re.S)
    assert found, f"docs/anonymize*.md have no section '## {heading}'"
    return found.group(1)


def test_every_method_and_option_is_documented():
    from sdckit.anonymize import METHODS
    from sdckit.cli.anonymize import method_options

    # docs/anonymize.md and its companion pages (docs/anonymize-masking.md, ...)
    text = "\n".join(page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("anonymize*.md")))
    for spec in METHODS:
        body = section(text, spec.name)
        missing = [option for option in method_options(spec) if f"`{option}`" not in body]
        assert not missing, f"docs/anonymize.md, section {spec.name}: options not documented: {missing}"
        assert f"sdckit anonymize {spec.name} " in body, f"no example of sdckit anonymize {spec.name}"


def test_every_command_group_has_its_page():
    """A page per top-level command of ``sdckit --help``, named after it (``experiments.md`` for
    experiment, ``protect-and-apply.md`` for protect and apply), showing that command, and linked
    from the README."""
    import typer.main

    from sdckit.cli import app

    commands = [name for name, command in typer.main.get_command(app).commands.items() if not command.hidden]
    assert {"risk", "check", "anonymize", "protect", "apply", "experiment"} <= set(commands)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in commands:
        pages = [p for p in DOCS.glob("*.md") if {name, f"{name}s"} & set(p.stem.split("-"))]
        assert pages, f"sdckit {name} has no page in docs/ (docs/{name}.md)"
        assert any(f"sdckit {name}" in p.read_text(encoding="utf-8") for p in pages), name
        assert all(f"(docs/{p.name})" in readme for p in pages), f"README.md does not link {pages}"


def test_every_command_option_is_documented():
    """Every option of every command (``sdckit risk combined --release``, ``sdckit apply --unknown``,
    ...) is named on the page of its command group, in one of its spellings."""
    import typer.main
    from typer.core import TyperOption

    from sdckit.cli import _click as click
    from sdckit.cli import app

    def leaves(command: click.Command, path: tuple[str, ...]):
        if hasattr(command, "commands"):  # a group (typer's own copy of click has no Group class)
            for name, sub in command.commands.items():
                yield from leaves(sub, (*path, name))
        else:
            yield path, command

    for path, command in leaves(typer.main.get_command(app), ()):
        group = path[0]
        pages = [p for p in DOCS.glob("*.md") if {group, f"{group}s"} & set(p.stem.split("-"))]
        text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
        for parameter in command.params:
            if not isinstance(parameter, TyperOption) or parameter.hidden or parameter.name == "help":
                continue
            names = [*parameter.opts, *parameter.secondary_opts]
            if not any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) for name in names):
                raise AssertionError(f"sdckit {' '.join(path)} {names[0]} is not documented in {pages}")


def test_the_readme_stays_an_overview():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) < 5_000, "README.md is an overview: move the reference into docs/"
    for page in DOCS.glob("*.md"):
        assert f"(docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"


# The options tables of docs/anonymize.md ----------------------------------------------------------


def options_table(spec) -> str:
    """The Markdown table of a method's options, from its parameters object."""
    from sdckit.params import option_name, unwrap_annotation

    rows = ["| option | value | default | meaning |", "| --- | --- | --- | --- |"]
    for name, info in spec.params.model_fields.items():
        option = option_name(name, info)
        base, choices = unwrap_annotation(info.annotation)
        if base is bool:
            shown, kind = f"`{option}`, `--no-{option.removeprefix('--')}`", "flag"
        else:
            shown = f"`{option}`"
            kind = " \\| ".join(f"`{c}`" for c in choices) if choices else getattr(base, "__name__", "text")
            names = {"str": "text", "list": "text", "float": "number", "int": "whole number", "Path": "file"}
            kind = names.get(kind, kind)
        if info.is_required():
            default = "required"
        elif info.default is None:
            default = "—"
        else:
            default = f"`{str(info.default).lower() if isinstance(info.default, bool) else info.default}`"
        meaning = (info.description or "").replace("|", "\\|")
        rows.append(f"| {shown} | {kind} | {default} | {meaning} |")
    for extra in spec.outputs:
        suffixes = ", ".join(extra.suffixes)
        rows.append(f"| `{extra.option}` | file ({suffixes}) | — | {extra.help} |")
    return "\n".join(rows)


if __name__ == "__main__":
    from sdckit.anonymize import METHODS

    for spec in METHODS:
        print(f"## {spec.name}\n\n{options_table(spec)}\n")
