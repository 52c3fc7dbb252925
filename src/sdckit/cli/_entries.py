"""The entries of the command line's root and its help, with no import: ``sdckit --help`` prints them
before anything is loaded (:func:`root_help`); :mod:`sdckit.cli._root` builds the app from them."""

from __future__ import annotations

#: Every entry of the root, in help order: name -> (module, group (a Typer) or command function, help).
ENTRIES: dict[str, tuple[str, str, str]] = {
    "describe": ("describe", "describe", "Propose the columns' roles and a starting configuration."),
    "risk": ("risk", "app", "Disclosure-risk measures of a file (combined, ...)."),
    "utility": ("utility", "app", "Information loss of a release against its original."),
    "check": ("check", "check", "The k, l and t a table or release achieves."),
    "anonymize": ("anonymize", "app", "Anonymize with one method; one command per method."),
    "protect": ("protect", "protect", "Run a recipe: a chain of methods, replayable bit for bit."),
    "apply": ("protect", "apply", "Re-apply a learnt transformation to new data; export its mappings."),
    "evaluate": (
        "evaluate",
        "evaluate",
        "Risk and utility of releases against their original: R-U map, HTML report.",
    ),
    "report": (
        "report",
        "report",
        "One protection run in words, like sdcMicro's report(): internal or for the public.",
    ),
    "attack": (
        "attack",
        "attack",
        "Attack a release as an adversary would: does it hold what it claims?",
    ),
    "table": ("table", "app", "Protect tables: cell suppression, audit, rounding, CTA, cell key."),
    "experiment": ("experiment", "app", "Reproduce the experiments of the papers."),
    "serve": ("serve", "serve", "Serve protected answers to statistical queries over HTTP."),
    "keys": ("serve", "keys", "Analysts' API keys of a query server: add, revoke, list."),
    "ledger": ("serve", "ledger", "A query server's ledger: init, verify, backup."),
    "query": ("query", "query", "Send one query to a query server; print its protected answer."),
    "ui": ("ui", "ui", "A local browser workbench: describe, measure, protect, compare, export."),
}


SUMMARY = "Statistical disclosure control: measure and reduce the disclosure risk of microdata."
EXIT_STATUSES = (
    "Exit statuses: 0 success, 1 internal error, 2 bad input or option, 3 a release that does not "
    "satisfy what was asked, 130 interrupted, 141 standard output closed by its reader. On any failure "
    "no output of the run is left behind."
)


def root_help(width: int = 80) -> str:
    """The root's help as plain text (click's layout), from :data:`ENTRIES`."""
    import textwrap

    def wrapped(text: str, indent: int, first: str = "") -> list[str]:
        return textwrap.wrap(
            text, width=width, initial_indent=first or " " * indent, subsequent_indent=" " * indent
        )

    lines = ["Usage: sdckit [OPTIONS] COMMAND [ARGS]...", ""]
    lines += wrapped(SUMMARY, 2) + [""] + wrapped(EXIT_STATUSES, 2) + ["", "Options:"]
    lines += ["  --version  Print the version and exit.", "  --help     Show this message and exit.", ""]
    lines.append("Commands:")
    column = max(len(name) for name in ENTRIES) + 4
    for name, (_, _, short_help) in ENTRIES.items():
        lines += wrapped(short_help, column, f"  {name:<{column - 2}}")
    return "\n".join(lines) + "\n"
