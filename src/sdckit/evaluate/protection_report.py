"""A report of one protection run in words, like sdcMicro's ``report()``: the keys and the other roles,
the risk before and after, the methods applied and the information loss, for the data steward
(``internal``) or for the users of the release (``external``).

It is built on :func:`sdckit.evaluate.evaluate`: the original and the release are measured with the
re-identification measure (sample uniques, k-anonymity violations, expected re-identifications, as
sdcMicro's ``measure_risk``), and the release against the original with the frequency tables of the
keys and, when the records pair and there are numeric attributes, the numeric information loss
(IL1s, IL1, eigen). The methods come from the release's recipe (the ``--summary`` that ``sdckit
anonymize`` or ``sdckit protect`` wrote, or a recipe file).

What each audience reads (sdcMicro's ``report(internal=TRUE)`` and ``internal=FALSE``):

- ``internal``: everything: the methods with their parameters (seeds included) and what each step
  reported, the risk with its k-anonymity table, the release's riskiest key combinations and the
  original's riskiest records beside the release (record values), each attribute's changed and
  suppressed values, the frequencies of each key of at most 30 categories, the numeric loss figures
  and each numeric attribute's summary statistics (original and release), the frequency tables'
  distances.
- ``external``: what a user of the release may read. sdcMicro's external report names the input, the
  deleted variables, the key variables and which kinds of modification were made, with no figure.
  sdckit keeps that rule for the methods, whatever the method: each is named with what it does (its
  one-line help), **never with a parameter value** (a seed, a swap rate, a noise amount, a PRAM
  matrix, a k or a threshold: any of them helps an adversary undo or bound the protection, and a rule
  per method would leak as soon as a method gains a parameter). It adds the risk in words (counts and
  shares over all records, before and after: they describe the file, not a record), the number of
  suppressed key values (a user sees them as missing values in the file anyway) and the names of the
  attributes the protection changed, without how much (the size of a perturbation is a parameter). No
  record value, no per-attribute figure, no summary statistic of the original.

The HTML is self-contained (inline CSS, no script, no image, no network access) and every value from
the data or the recipe is escaped.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from sdckit.errors import ConfigError
from sdckit.evaluate.evaluation import Evaluation
from sdckit.evaluate.evaluation import evaluate as run_evaluation
from sdckit.evaluate.report import STYLE
from sdckit.io import atomic_write
from sdckit.params import spell
from sdckit.table import Kind, Role, Table

Audience = Literal["internal", "external"]
AUDIENCES: tuple[str, ...] = ("internal", "external")

#: The most categories a key variable may have for the internal report to tabulate its frequencies.
MAX_CATEGORIES = 30
#: The k-anonymity a sentence of the report speaks of (sdcMicro's report shows 2 and 3).
SENTENCE_K = "3"

EXTRA_STYLE = """
.parameter { font-family: ui-monospace, monospace; text-align: left; }
.audience { padding: .5rem .8rem; border-left: 4px solid #c33; background: #fbeaea; }
.audience.external { border-left-color: #2a7; background: #e9f7ef; }
ul.risk li, ul.loss li { margin: .3rem 0; }
"""


@dataclass(frozen=True)
class AttributeChange:
    """How one attribute of the release differs from the original, record by record (None when the
    records do not pair): values made missing, values changed (both present, different)."""

    name: str
    suppressed: int | None
    changed: int | None


@dataclass(frozen=True)
class ProtectionReport:
    """What the report of one protection run says; :func:`render_protection_report` words it."""

    evaluation: Evaluation
    release_name: str
    roles: dict[str, list[str]]
    weights: str | None
    dropped: list[str]
    changes: list[AttributeChange]
    steps: list[dict[str, Any]] | None
    step_figures: list[dict[str, Any]] | None
    seed: Any = None
    #: Per numeric attribute compared, its (mean, sd, min, median, max) in the original and the release.
    numeric_summaries: dict[str, tuple[list[float | None], list[float | None]]] | None = None
    #: Per key variable of at most :data:`MAX_CATEGORIES` categories: (category, records in the
    #: original, records in the release), a missing value as the category None.
    frequencies: dict[str, list[tuple[str | None, int, int]]] | None = None

    @property
    def before(self) -> dict[str, Any]:
        return self.evaluation.original.risk.get("reidentification", {})

    @property
    def after(self) -> dict[str, Any]:
        return self.evaluation.releases[0].risk.get("reidentification", {})

    @property
    def loss(self) -> dict[str, dict[str, Any]]:
        return self.evaluation.releases[0].utility


def check_audience(audience: str) -> Audience:
    """``audience`` if it is one of :data:`AUDIENCES`, else a :class:`ConfigError` naming them."""
    if audience not in AUDIENCES:
        raise ConfigError(f"{spell('audience')} must be internal or external, got {audience!r}")
    return audience  # type: ignore[return-value]


def recipe_steps(document: Mapping[str, Any] | None) -> tuple[list[dict[str, Any]] | None, list | None, Any]:
    """The recipe's steps, the figures each step reported (a summary of ``protect`` lists them under
    ``steps``; one of ``anonymize`` is the figures of its one step) and the recipe's seed, from a
    release's summary or a recipe; Nones without a document."""
    if document is None:
        return None, None, None
    recipe = _recipe_of(document)
    steps = [dict(step) for step in recipe.get("steps") or [] if isinstance(step, Mapping)]
    figures: list | None = None
    if isinstance(document.get("steps"), list) and recipe is not document:
        figures = [step.get("summary", step) for step in document["steps"] if isinstance(step, Mapping)]
    elif "method" in document and recipe is not document:
        figures = [{k: v for k, v in document.items() if k not in ("recipe", "data", "elapsed_seconds")}]
    return steps, figures, recipe.get("seed")


def _recipe_of(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The recipe a summary holds under ``recipe``, or the document itself (a recipe)."""
    inner = document.get("recipe")
    return inner if isinstance(inner, Mapping) else document


def protection_report(
    original: Table,
    release: Table,
    *,
    recipe: Mapping[str, Any] | None = None,
    config: Any = None,
    original_name: str = "original",
    release_name: str = "release",
    stage: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ProtectionReport:
    """Measure ``original`` and ``release`` for the report of one protection run.

    ``recipe``: the release's summary (``sdckit anonymize``/``protect --summary``) or its recipe;
    without it the report says that the methods are not known. A recipe made on other data than
    ``original`` is refused (:func:`sdckit.recipes.input_mismatch`), as is the summary of a run whose
    release has another number of records than ``release``. ``config``: the configuration the tables
    were read with (weights, missing values).
    """
    from sdckit.recipes import input_mismatch

    steps, figures, seed = recipe_steps(recipe)
    if recipe is not None:
        mismatch = input_mismatch(_recipe_of(recipe), original)
        if mismatch is not None:
            raise ConfigError(f"{spell('recipe')} was not made on {original_name}: {mismatch}")
        final = recipe.get("final")
        records = final.get("records") if isinstance(final, Mapping) else None
        if isinstance(records, int) and records != release.n_records:
            raise ConfigError(
                f"{spell('recipe')} is the summary of a release of {records:,} records, "
                f"{release_name} has {release.n_records:,}"
            )
    if not original.schema.with_role(Role.QUASI_IDENTIFIER):
        raise ConfigError("the report needs the key variables: give quasi-identifiers")
    paired = release.n_records == original.n_records
    numeric = [
        a.name
        for a in original.schema.attributes
        if a.kind is Kind.NUMERIC and a.role is not Role.IDENTIFIER and a.name in release.data.columns
    ]
    utility = ["tables", *(["numeric"] if paired and numeric else [])]
    evaluation = run_evaluation(
        original,
        [(release_name, release)],
        config=config,
        risk=["reidentification"],
        utility=utility,
        risk_axis="reidentification",
        loss_axis="tables",
        recipes=[dict(recipe)] if recipe is not None else None,
        original_name=original_name,
        stage=stage,
        progress=progress,
    )
    return ProtectionReport(
        evaluation=evaluation,
        release_name=release_name,
        roles=_roles(original),
        weights=getattr(getattr(config, "data", None), "weights", None),
        dropped=[c for c in original.data.columns if c not in release.data.columns],
        changes=_changes(original, release),
        steps=steps,
        step_figures=figures,
        seed=seed,
        numeric_summaries=_summaries(original, release, evaluation) if paired else None,
        frequencies=_frequencies(original, release),
    )


def _frequencies(original: Table, release: Table) -> dict[str, list[tuple[str | None, int, int]]]:
    """The records of each category of each key variable in both files (sdcMicro's internal report
    tabulates them), for the keys of at most :data:`MAX_CATEGORIES` categories in both files."""
    tables = {}
    for attribute in original.schema.with_role(Role.QUASI_IDENTIFIER):
        name = attribute.name
        if name not in release.data.columns:
            continue
        counts = [
            table.data.select(pl.col(name).cast(pl.String)).group_by(name).len()
            for table in (original, release)
        ]
        if max(frame.height for frame in counts) > MAX_CATEGORIES:
            continue
        joined = (
            counts[0]
            .join(counts[1], on=name, how="full", coalesce=True, nulls_equal=True, suffix="_release")
            .with_columns(pl.col("len", "len_release").fill_null(0))
            .sort(name, nulls_last=True)
        )
        tables[name] = [
            (row[0], int(row[1]), int(row[2])) for row in joined.select(name, "len", "len_release").rows()
        ]
    return tables


def _summaries(
    original: Table, release: Table, evaluation: Evaluation
) -> dict[str, tuple[list[float | None], list[float | None]]]:
    """Mean, standard deviation, minimum, median and maximum of each attribute the numeric loss
    compared, in the original and in the release."""
    names = evaluation.releases[0].utility.get("numeric", {}).get("attributes", [])

    def figures(table: Table) -> dict[str, list[float | None]]:
        """The five figures of each attribute; Nones for one the release holds as text (ranges)."""
        numbers = [n for n in names if table.data.schema[n].is_numeric()]
        found: dict[str, list[float | None]] = {n: [None] * 5 for n in names}
        if not numbers:
            return found
        columns = [pl.col(n).cast(pl.Float64) for n in numbers]
        row = table.data.select(
            *(c.mean().alias(f"{n}|0") for c, n in zip(columns, numbers, strict=True)),
            *(c.std().alias(f"{n}|1") for c, n in zip(columns, numbers, strict=True)),
            *(c.min().alias(f"{n}|2") for c, n in zip(columns, numbers, strict=True)),
            *(c.median().alias(f"{n}|3") for c, n in zip(columns, numbers, strict=True)),
            *(c.max().alias(f"{n}|4") for c, n in zip(columns, numbers, strict=True)),
        ).row(0, named=True)
        return {**found, **{n: [row[f"{n}|{i}"] for i in range(5)] for n in numbers}}

    before, after = figures(original), figures(release)
    return {name: (before[name], after[name]) for name in names}


def _roles(table: Table) -> dict[str, list[str]]:
    roles: dict[str, list[str]] = {}
    for attribute in table.schema.attributes:
        if attribute.described or attribute.role is not Role.INSENSITIVE:
            roles.setdefault(attribute.role.value, []).append(attribute.name)
    return roles


def _changes(original: Table, release: Table) -> list[AttributeChange]:
    """Per attribute kept in the release (identifiers aside): how many values it made missing and
    how many it changed, when the records pair row for row; None counts otherwise."""
    names = [
        a.name
        for a in original.schema.attributes
        if a.role is not Role.IDENTIFIER and a.name in release.data.columns
    ]
    if release.n_records != original.n_records:
        return [AttributeChange(name, None, None) for name in names]
    if not names:
        return []
    expressions = []
    for name in names:
        before, after = original.data.get_column(name), release.data.get_column(name)
        common = (
            None
            if before.dtype == after.dtype
            else pl.Float64
            if before.dtype.is_numeric() and after.dtype.is_numeric()
            else pl.String
        )
        left, right = pl.col(f"o_{name}"), pl.col(f"r_{name}")
        if common is not None:
            left, right = left.cast(common), right.cast(common)
        expressions += [
            (right.is_null() & left.is_not_null()).sum().alias(f"s_{name}"),
            (right.is_not_null() & left.is_not_null() & (left != right)).sum().alias(f"c_{name}"),
        ]
    frame = pl.DataFrame(
        [original.data.get_column(n).alias(f"o_{n}") for n in names]
        + [release.data.get_column(n).alias(f"r_{n}") for n in names]
    )
    counts = frame.select(expressions).row(0, named=True)
    return [AttributeChange(name, int(counts[f"s_{name}"]), int(counts[f"c_{name}"])) for name in names]


# Words ----------------------------------------------------------------------------------------------


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def share(count: float, total: int) -> str:
    """``count`` of ``total`` records in percent, one decimal (two significant digits below 0.1%)."""
    if total <= 0:
        return "–"
    percent = 100.0 * count / total
    if 0 < percent < 0.05:
        return f"{percent:.2g}%"
    return f"{percent:.1f}%"


def records_in_words(count: int, total: int) -> str:
    """``"1,204 records (4.0%)"``, ``"1 record (0.1%)"`` or ``"none"``."""
    if count == 0:
        return "none"
    return f"{count:,} record{'s' if count != 1 else ''} ({share(count, total)})"


def risk_sentences(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The risk before and after in words, from the re-identification measure's figures."""
    keys = ", ".join(str(k) for k in after.get("keys") or before.get("keys") or [])
    n0, n1 = int(before.get("records", 0)), int(after.get("records", 0))
    sentences = []
    u0, u1 = before.get("sample_uniques"), after.get("sample_uniques")
    if isinstance(u0, int) and isinstance(u1, int):
        was = "was" if u0 == 1 else "were"
        sentences.append(
            f"Before protection, {records_in_words(u0, n0)} {was} unique on the keys ({keys}); "
            f"after, {records_in_words(u1, n1)}."
        )
    v0 = (before.get("k_anonymity_violations") or {}).get(SENTENCE_K)
    v1 = (after.get("k_anonymity_violations") or {}).get(SENTENCE_K)
    if isinstance(v0, Mapping) and isinstance(v1, Mapping):
        sentences.append(
            f"Records sharing their combination of keys with fewer than {int(SENTENCE_K) - 1} others "
            f"({SENTENCE_K}-anonymity not met): {records_in_words(int(v0['records']), n0)} before, "
            f"{records_in_words(int(v1['records']), n1)} after."
        )
    e0, e1 = before.get("expected_reidentifications"), after.get("expected_reidentifications")
    if isinstance(e0, int | float) and isinstance(e1, int | float):
        if e1 == e0:
            sentences.append(
                f"Expected re-identifications stayed at {e1:,.1f} ({share(e1, n1)} of the records)."
            )
        else:
            verb = "fell" if e1 < e0 else "rose"
            sentences.append(
                f"Expected re-identifications {verb} from {e0:,.1f} ({share(e0, n0)} of the records) "
                f"to {e1:,.1f} ({share(e1, n1)})."
            )
    if after.get("weighted"):
        sentences.append("The risks are estimated for the population, with the sampling weights.")
    return sentences


def loss_sentences(report: ProtectionReport, audience: Audience) -> list[str]:
    """The information loss in words; the external report's says what changed, not by how much."""
    sentences = []
    keys = set(report.roles.get(Role.QUASI_IDENTIFIER.value, []))
    paired = [c for c in report.changes if c.suppressed is not None]
    records = report.evaluation.releases[0].records
    key_changes = [c for c in paired if c.name in keys]
    suppressed = sum(c.suppressed or 0 for c in key_changes)
    if key_changes:
        total = records * len(key_changes)
        if suppressed:
            sentences.append(
                f"{suppressed:,} values of the keys ({share(suppressed, total)} of them) were suppressed "
                "(they are missing in the release)."
            )
        else:
            sentences.append("No value of the keys was suppressed.")
    changed = [c.name for c in paired if c.changed]
    if changed:
        sentences.append(f"Values of {', '.join(changed)} were changed by the protection.")
    elif paired:
        sentences.append("No value was changed, only suppressed." if suppressed else "No value was changed.")
    else:
        sentences.append(
            f"The release has {records:,} records, the original {report.evaluation.original.records:,}: "
            "their records are not compared one by one."
        )
    if audience == "external":
        return sentences
    numeric = report.loss.get("numeric")
    if numeric:
        attributes = ", ".join(numeric.get("attributes", []))
        sentences.append(
            f"On the numeric attributes ({attributes}): IL1s (sdcMicro's dUtility IL1s, the sum of the "
            f"scaled absolute differences) {_number(numeric.get('il1s'))}, IL1 (the same per value; "
            f"sdcMicro's IL1 up to 5.5) {_number(numeric.get('il1'))}, the relative difference of the "
            f"eigenvalues of the correlation matrices (sdcMicro's eigen) {_number(numeric.get('eigen'))}."
        )
    tables = report.loss.get("tables", {}).get("total_variation")
    if isinstance(tables, Mapping):
        sentences.append(
            "The frequency tables of the keys differ by a total variation distance of "
            f"{_number(tables.get('one_way_mean'))} on average (one attribute at a time, at most "
            f"{_number(tables.get('one_way_max'))}) and {_number(tables.get('two_way_mean'))} for the "
            "pairs of attributes."
        )
    return sentences


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    if value != value:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def _parameter(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


# HTML -----------------------------------------------------------------------------------------------


def render_protection_report(
    report: ProtectionReport, audience: str = "internal", *, title: str | None = None
) -> str:
    """The report as one self-contained HTML page for ``audience`` (see the module docstring)."""
    chosen = check_audience(audience)
    title = title or f"Protection report: {report.release_name}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{STYLE}{EXTRA_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _audience_note(chosen),
        *_data_section(report, chosen),
        *_roles_section(report),
        *_risk_section(report, chosen),
        *_methods_section(report, chosen),
        *_loss_section(report, chosen),
    ]
    if chosen == "internal":
        parts += _riskiest_section(report)
    from sdckit import __version__

    parts += [f'<p class="note">Written by sdckit {_e(__version__)} (sdckit report).</p>', "</body></html>"]
    return "\n".join(parts)


def write_protection_report(
    report: ProtectionReport, path: str | os.PathLike, audience: str = "internal", *, title: str | None = None
) -> None:
    """Write the report for ``audience`` to ``path`` (atomically)."""
    text = render_protection_report(report, audience, title=title)
    with atomic_write(path) as temporary:
        Path(temporary).write_text(text, encoding="utf-8")


def _audience_note(audience: Audience) -> str:
    if audience == "internal":
        return (
            '<p class="audience internal" id="audience">Internal report, not for publication: it holds the '
            "parameters of the protection and records of the original.</p>"
        )
    return (
        '<p class="audience external" id="audience">Report for the users of the release: what was '
        "protected and how, in general terms. The parameters of the methods are not given (they would "
        "help undo the protection) and no record is shown.</p>"
    )


def _data_section(report: ProtectionReport, audience: Audience) -> list[str]:
    original, release = report.evaluation.original, report.evaluation.releases[0]
    text = f"The release <b>{_e(report.release_name)}</b> has {release.records:,} records"
    if audience == "internal":
        text += f"; the original <b>{_e(original.source)}</b> has {original.records:,}."
    elif release.records != original.records:
        text += f", drawn from {original.records:,}."
    else:
        text += ", as many as the original."
    parts = ["<h2>The data</h2>", f"<p>{text}</p>"]
    if report.dropped:
        parts.append(
            f"<p>Removed from the release (direct identifiers): {_e(', '.join(report.dropped))}.</p>"
        )
    return parts


_ROLE_WORDS = {
    "quasi-identifier": "Key variables (quasi-identifiers)",
    "sensitive": "Sensitive attributes",
    "quasi-sensitive": "Quasi-sensitive attributes",
    "identifier": "Direct identifiers",
    "household": "Household identifier",
    "insensitive": "Other attributes",
}


def _roles_section(report: ProtectionReport) -> list[str]:
    items = [
        f"<li><b>{_e(_ROLE_WORDS.get(role, role))}</b>: {_e(', '.join(names))}</li>"
        for role, names in sorted(report.roles.items(), key=lambda item: list(_ROLE_WORDS).index(item[0]))
    ]
    items.append(f"<li><b>Sampling weights</b>: {_e(report.weights or 'none')}</li>")
    return ["<h2>Key variables and other roles</h2>", f'<ul id="roles">{"".join(items)}</ul>']


def _risk_section(report: ProtectionReport, audience: Audience) -> list[str]:
    before, after = report.before, report.after
    items = "".join(f"<li>{_e(sentence)}</li>" for sentence in risk_sentences(before, after))
    parts = ["<h2>Disclosure risk</h2>", f'<ul class="risk" id="risk">{items}</ul>']
    if audience == "internal":
        n0, n1 = int(before.get("records", 0)), int(after.get("records", 0))
        rows = []
        for k in sorted((after.get("k_anonymity_violations") or {}), key=int):
            v0 = (before.get("k_anonymity_violations") or {}).get(k, {})
            v1 = after["k_anonymity_violations"][k]
            rows.append([f"{k}-anonymity not met", *_counted(v0, n0), *_counted(v1, n1)])
        for key, words in (
            ("sample_uniques", "unique on the keys"),
            ("expected_reidentifications", "expected re-identifications"),
        ):
            b, a = before.get(key), after.get(key)
            if isinstance(b, int | float) and isinstance(a, int | float):
                rows.append([words, _number(b), share(b, n0), _number(a), share(a, n1)])
        rows.append(
            ["global risk", _number(before.get("global_risk")), "", _number(after.get("global_risk")), ""]
        )
        parts.append(_table(["records", "before", "%", "after", "%"], rows, "risk-table"))
    return parts


def _counted(figures: Mapping[str, Any], total: int) -> list[str]:
    if not figures:
        return ["–", "–"]
    count = int(figures["records"])
    return [f"{count:,}", share(count, total)]


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], ident: str, css: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    cell = f'<td class="{css}">' if css else "<td>"
    body = "".join("<tr>" + "".join(f"{cell}{_e(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f'<table id="{ident}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _methods_section(report: ProtectionReport, audience: Audience) -> list[str]:
    parts = ["<h2>Methods applied</h2>"]
    if report.steps is None:
        return [
            *parts,
            '<p id="methods">No recipe was given: the methods applied are not known to this report.</p>',
        ]
    if not report.steps:
        return [*parts, '<p id="methods">The recipe has no step: the release is the original.</p>']
    from sdckit.anonymize import METHODS

    helps = {entry.name: entry.help for entry in METHODS.entries()}
    items = []
    for i, step in enumerate(report.steps):
        method = str(step.get("method"))
        words = f"<b>{_e(method)}</b>: {_e(helps.get(method, 'a method of another version of sdckit'))}"
        if audience == "internal":
            shown = [(k, v) for k, v in step.items() if k != "method" and v is not None]
            cells = "".join(f'<li class="parameter">{_e(k)} = {_e(_parameter(v))}</li>' for k, v in shown)
            words += f'<ul class="parameters">{cells}</ul>' if cells else " (its defaults)"
            figures = (report.step_figures or [])[i : i + 1]
            if figures:
                text = json.dumps(figures[0], indent=2, ensure_ascii=False, default=str)
                words += f"<details><summary>What the step reported</summary><pre>{_e(text)}</pre></details>"
        items.append(f"<li>{words}</li>")
    parts.append(f'<ol id="methods">{"".join(items)}</ol>')
    if audience == "internal" and report.seed is not None:
        parts.append(f'<p class="parameter" id="seed">Seed of the recipe: {_e(report.seed)}.</p>')
    if audience == "external":
        parts.append(
            '<p class="note">The parameters of the methods are withheld: they would help undo the '
            "protection.</p>"
        )
    return parts


def _loss_section(report: ProtectionReport, audience: Audience) -> list[str]:
    items = "".join(f"<li>{_e(sentence)}</li>" for sentence in loss_sentences(report, audience))
    parts = ["<h2>Information loss</h2>", f'<ul class="loss" id="loss">{items}</ul>']
    if audience == "external":
        return parts
    rows = [
        [c.name, _number(c.suppressed) if c.suppressed is not None else "–", _number(c.changed)]
        for c in report.changes
    ]
    if rows:
        parts.append(_table(["attribute", "suppressed", "changed"], rows, "changes"))
    for name, counts in (report.frequencies or {}).items():
        shown = [["missing" if value is None else value, _number(a), _number(b)] for value, a, b in counts]
        parts += [
            f"<h3>Frequencies of {_e(name)}</h3>",
            _table(["category", "original", "release"], shown, f"frequencies-{name}", "record-value"),
        ]
    summaries = _numeric_summaries(report)
    if summaries:
        parts += ["<h3>Numeric attributes, original and release</h3>", summaries]
    return parts


def _numeric_summaries(report: ProtectionReport) -> str:
    """Each numeric attribute's mean, standard deviation, minimum, median and maximum in the original
    and in the release (sdcMicro's univariate summaries; internal only: the extremes are values of
    records)."""
    if not report.numeric_summaries:
        return ""
    rows = []
    for name, files in report.numeric_summaries.items():
        for label, values in zip(("original", "release"), files, strict=True):
            rows.append([name, label, *(_number(v) for v in values)])
    header = ["attribute", "file", "mean", "sd", "min", "median", "max"]
    return _table(header, rows, "numeric-summaries", "record-value")


def _riskiest_section(report: ProtectionReport) -> list[str]:
    """The release's riskiest key combinations (as sdcMicro's internal report lists them) and the
    original's riskiest records beside the release (evaluate's report)."""
    from sdckit.evaluate.report import _riskiest

    listed = report.after.get("riskiest") or []
    keys = [str(k) for k in report.after.get("keys") or []]
    seen: set[tuple] = set()
    rows = []
    for row in listed:
        combination = tuple(row.get(k) for k in keys)
        if combination in seen:
            continue
        seen.add(combination)
        rows.append(
            [
                *("–" if v is None else v for v in combination),
                row.get("fk"),
                _number(row.get("individual_risk")),
            ]
        )
    parts = []
    if rows:
        parts += [
            "<h2>The riskiest key combinations of the release</h2>",
            _table([*keys, "records (fk)", "individual risk"], rows, "riskiest-combinations", "record-value"),
        ]
    return parts + _riskiest(report.evaluation)


__all__ = [
    "AUDIENCES",
    "AttributeChange",
    "ProtectionReport",
    "check_audience",
    "loss_sentences",
    "protection_report",
    "records_in_words",
    "render_protection_report",
    "risk_sentences",
    "write_protection_report",
]
