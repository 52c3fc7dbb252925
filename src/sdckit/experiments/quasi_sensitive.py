"""Section 3 of Shi, Xiong & Fung (2010), "Anonymizing data with quasi-sensitive attribute values":
Figure 5 (removal cost of the adaptive search against the baseline DFS for varying l and c, QS
(c,l)-diversity) and Figure 6 (removal cost and generalization loss for varying t and k, QS
t-closeness by the two phases of :func:`sdckit.anonymize.quasi_sensitive.quasi_sensitive_anonymize`),
on Adult's quasi-identifiers with synthesized QS terms and external knowledge
(:func:`synthesize_experiment_data`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit.anonymize.quasi_sensitive import STRATEGIES, QuasiSensitiveFigures, quasi_sensitive_anonymize
from sdckit.anonymize.release import Release
from sdckit.errors import ConfigError
from sdckit.experiments import Say
from sdckit.experiments.charts import closeness_chart, markdown_table, removal_cost_chart
from sdckit.experiments.data import ADULT_QUASI_IDENTIFIERS, adult_quasi_identifiers
from sdckit.hierarchy import Hierarchy
from sdckit.io import atomic_write
from sdckit.models.quasi_sensitive import QSCLDiversity, QSTCloseness
from sdckit.setvalued import Knowledge
from sdckit.table import Attribute, Kind, Role, Schema, Table

__all__ = [
    "ADULT_QUASI_IDENTIFIERS",
    "SET_COLUMN",
    "QuasiSensitiveExperiment",
    "figure5",
    "figure6",
    "quasi_sensitive_experiment",
    "summary",
    "synthesize_experiment_data",
    "write_quasi_sensitive_experiment",
]

#: The set-valued column of the synthesized data.
SET_COLUMN = "terms"


def synthesize_experiment_data(
    source: pl.DataFrame | int = 3000,
    *,
    n_records: int | None = None,
    n_terms_per_record: int = 9,
    n_labels: int = 3000,
    poisson_lambda: float = 100.0,
    vocabulary_size: int | None = None,
    seed: int = 0,
    adult_directory: str | Path | None = None,
) -> tuple[Table, Knowledge]:
    """The data of the paper's experiments (section 3): records with quasi-identifiers from Adult and
    ``n_terms_per_record`` synthesized QS terms, and external knowledge of ``n_labels`` labels.

    The paper only says "3000 tuples augmented from Adult with 8 QI attributes and 9 synthesized QS
    terms per tuple, and an external table with 3000 knowledge labels linked to random QS terms whose
    appearance in each tuple follows a Poisson distribution with lambda = 100". Our construction, chosen
    so that linking is meaningful (records link to few labels, and removing terms links them to
    gradually more):

    1. A vocabulary of ``V`` terms ``term0000 ..`` (``vocabulary_size``, default ``3 * lambda`` = 300).
    2. Every label ``label0000 ..`` gets an item set S_L of size ``clip(Poisson(lambda), n_terms, V)``
       drawn uniformly without replacement from the vocabulary (so about a third of the vocabulary).
    3. Every record draws a hidden label uniformly and ``n_terms_per_record`` distinct terms uniformly
       from that label's S_L. The record links to its hidden label, and to any other label whose set
       happens to contain its terms: about ``|E| (lambda / V)^r`` labels once ``r`` terms are left
       (0.15 with all 9 terms, 12 with 5, 110 with 3, for the defaults).
    4. Quasi-identifiers: with ``source`` an int, that many records of Adult
       (``adult_directory``/adult.csv, default :func:`sdckit.experiments.data.adult_directory`; the 8 columns
       :data:`ADULT_QUASI_IDENTIFIERS`, i.e. all but occupation, age as an integer), sampled without
       replacement, or with replacement when more are asked than Adult has; with ``source`` a polars
       frame, its columns (``n_records`` of its rows sampled likewise, default all rows, in order).

    The table has the QI columns (role quasi-identifier; Adult's ARX hierarchies in the schema when the
    files are present) and the column ``terms`` (role quasi-sensitive, set-valued, ';'-separated).
    Deterministic for a given ``seed``.
    """
    for name, value, low in (
        ("n_terms_per_record", n_terms_per_record, 1),
        ("n_labels", n_labels, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")
    if not (isinstance(poisson_lambda, int | float) and poisson_lambda > 0):
        raise ConfigError(f"poisson_lambda must be a positive number, got {poisson_lambda!r}")
    size = int(vocabulary_size) if vocabulary_size is not None else max(int(round(3 * poisson_lambda)), 1)
    if size < n_terms_per_record:
        raise ConfigError(
            f"vocabulary_size ({size}) must be at least n_terms_per_record ({n_terms_per_record})"
        )
    rng = np.random.default_rng(seed)
    hierarchies: dict[str, Hierarchy] = {}
    if isinstance(source, pl.DataFrame):
        frame = source
        wanted = frame.height if n_records is None else int(n_records)
    elif isinstance(source, int | np.integer) and not isinstance(source, bool):
        frame, hierarchies = adult_quasi_identifiers(adult_directory or None)
        wanted = int(source) if n_records is None else int(n_records)
    else:
        raise ConfigError(f"source must be a polars frame or a number of records, got {source!r}")
    if wanted < 1 or frame.height == 0:
        raise ConfigError("the experiment needs at least one record")
    if isinstance(source, pl.DataFrame) and n_records is None:
        rows = np.arange(frame.height)
    elif wanted <= frame.height:
        rows = np.sort(rng.choice(frame.height, size=wanted, replace=False))
    else:
        rows = rng.integers(0, frame.height, size=wanted)
    frame = frame[rows]

    # Knowledge: label sets of Poisson(lambda) size (clipped to [n_terms, V]).
    sizes = np.clip(rng.poisson(poisson_lambda, size=n_labels), n_terms_per_record, size)
    keys = rng.random((n_labels, size))
    ranked = np.argsort(keys, axis=1)
    label_sets = [np.sort(ranked[label, : sizes[label]]) for label in range(n_labels)]
    # Records: a hidden label each, terms drawn from its set.
    hidden = rng.integers(0, n_labels, size=wanted)
    terms = np.empty((wanted, n_terms_per_record), dtype=np.int64)
    order = np.argsort(hidden, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(hidden, minlength=n_labels))))
    for label in np.flatnonzero(np.diff(bounds)):
        members = order[bounds[label] : bounds[label + 1]]
        pool = label_sets[label]
        picks = np.argsort(rng.random((members.size, pool.size)), axis=1)[:, :n_terms_per_record]
        terms[members] = np.sort(pool[picks], axis=1)
    width = len(str(size - 1))
    words = np.array([f"term{i:0{width}d}" for i in range(size)], dtype=object)
    texts = pl.Series(SET_COLUMN, words[terms].tolist(), dtype=pl.List(pl.String)).list.join(";")
    data = frame.with_columns(texts)
    attributes = []
    for name in frame.columns:
        kind = Kind.NUMERIC if frame.schema[name].is_numeric() else Kind.CATEGORICAL
        attributes.append(Attribute(name, Role.QUASI_IDENTIFIER, kind, hierarchy=hierarchies.get(name)))
    attributes.append(Attribute(SET_COLUMN, Role.QUASI_SENSITIVE, Kind.SET_VALUED))
    table = Table(data, Schema(tuple(attributes)), source="synthesized experiment data")
    label_width = len(str(n_labels - 1))
    knowledge = Knowledge.from_mapping(
        {f"label{label:0{label_width}d}": words[label_sets[label]].tolist() for label in range(n_labels)}
    )
    return table, knowledge


def _experiment_inputs(
    table: Table | None, knowledge: Knowledge | None, n_records: int, seed: int
) -> tuple[Table, Knowledge]:
    if (table is None) != (knowledge is None):
        raise ConfigError("give both table and knowledge, or neither (then the experiment data is made)")
    if table is None or knowledge is None:  # both None, as checked above
        return synthesize_experiment_data(n_records, seed=seed)
    return table, knowledge


def _run_row(release: Release) -> dict[str, Any]:
    figures = release.figures_as(QuasiSensitiveFigures)
    return {
        "removal_cost": figures.removal_cost_mean,
        "removal_cost_table": figures.removal_cost_table,
        "generalization_ncp": figures.generalization_ncp,
        "violating_before": figures.violating_before,
        "violating_after": figures.violating_after,
        "proven_optimal": figures.proven_optimal,
        "suppressed_items": figures.suppressed_items,
        "seconds": figures.phase2_seconds,
    }


def figure5(
    table: Table | None = None,
    knowledge: Knowledge | None = None,
    *,
    ls: Sequence[int] = (10, 20, 30, 40, 50),
    cs: Sequence[float] = (0.5, 1.0, 1.5, 2.0),
    default_l: int = 30,
    default_c: float = 1.0,
    k: int = 5,
    run_time_limit: float = 10.0,
    n_records: int = 3000,
    seed: int = 0,
    set_column: str = SET_COLUMN,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """Figure 5 of Shi et al. (2010): removal cost of the adaptive search against the baseline DFS for
    QS (c,l)-diversity, varying l (c = ``default_c``) and varying c (l = ``default_l``).

    Every run is phase 1 (Mondrian, ``k``) and phase 2 with ``run_time_limit`` seconds for the whole of
    phase 2 (each group gets its share of the time left, as ``total_time_limit``). Without ``table``
    and ``knowledge`` the experiment data is made by :func:`synthesize_experiment_data` (``n_records``,
    ``seed``). One row per (parameter, value, strategy): ``removal_cost`` (mean T of the searched
    groups), ``removal_cost_table``, violating groups before / after, proven optimal, seconds.
    """
    table, knowledge = _experiment_inputs(table, knowledge, n_records, seed)
    runs: list[tuple[str, float, QSCLDiversity]] = [
        ("l", value, QSCLDiversity(default_c, int(value))) for value in ls
    ]
    runs += [("c", value, QSCLDiversity(float(value), default_l)) for value in cs]
    rows = []
    for parameter, value, model in runs:
        for strategy in STRATEGIES:
            if progress is not None:
                progress(f"{parameter}={value} {strategy}")
            release = quasi_sensitive_anonymize(
                table,
                set_column=set_column,
                knowledge=knowledge,
                k=k,
                model=model,
                strategy=strategy,
                time_limit=None,
                total_time_limit=run_time_limit,
            )
            rows.append(
                {"parameter": parameter, "value": float(value), "strategy": strategy, **_run_row(release)}
            )
    return pl.DataFrame(rows)


def figure6(
    table: Table | None = None,
    knowledge: Knowledge | None = None,
    *,
    ts: Sequence[float] = (0.2, 0.3, 0.4, 0.5, 0.6),
    ks: Sequence[int] = (1, 2, 5, 10, 25, 50),
    strategy: str = "adaptive",
    run_time_limit: float = 10.0,
    n_records: int = 3000,
    seed: int = 0,
    set_column: str = SET_COLUMN,
    progress: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """Figure 6 of Shi et al. (2010): QS t-closeness by two phases, the removal cost of phase 2 and the
    generalization loss of phase 1 (``release_ncp`` of the QI part) for every t and k.

    ``run_time_limit`` bounds each run's phase 2 (as in :func:`figure5`). One row per (t, k): ``t``,
    ``t_squared`` (the paper's x axis), ``k``, ``removal_cost`` (mean T of the searched groups),
    ``removal_cost_table`` (T of the whole table), ``generalization_ncp``, violating groups before /
    after, proven optimal, seconds.
    """
    table, knowledge = _experiment_inputs(table, knowledge, n_records, seed)
    rows = []
    for k in ks:
        for t in ts:
            if progress is not None:
                progress(f"k={k} t={t}")
            release = quasi_sensitive_anonymize(
                table,
                set_column=set_column,
                knowledge=knowledge,
                k=int(k),
                model=QSTCloseness(float(t)),
                strategy=strategy,
                time_limit=None,
                total_time_limit=run_time_limit,
            )
            rows.append({"t": float(t), "t_squared": float(t) ** 2, "k": int(k), **_run_row(release)})
    return pl.DataFrame(rows)


@dataclasses.dataclass(frozen=True)
class QuasiSensitiveExperiment:
    """Figure 5 (removal cost of the adaptive search against the baseline DFS for varying l and c,
    QS (c,l)-diversity) and Figure 6 (removal cost and generalization loss for varying t and k, QS
    t-closeness by the two phases) of Shi, Xiong & Fung (2010), as polars frames."""

    figure5: pl.DataFrame
    figure6: pl.DataFrame
    parameters: dict[str, Any]


def quasi_sensitive_experiment(
    *,
    n_records: int = 3000,
    run_time_limit: float = 10.0,
    ls: tuple[int, ...] = (10, 20, 30, 40, 50),
    cs: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0),
    ts: tuple[float, ...] = (0.2, 0.3, 0.4, 0.5, 0.6),
    ks: tuple[int, ...] = (1, 2, 5, 10, 25, 50),
    seed: int = 0,
    say: Say | None = None,
) -> tuple[QuasiSensitiveExperiment, Table, Any]:
    """Section 3 of Shi et al. on the paper's setup (:func:`synthesize_experiment_data`: Adult's 8
    quasi-identifiers, 9 terms per record, 3,000 labels with Poisson(100) item sets; seeded), each
    run's phase 2 bounded by ``run_time_limit`` seconds (the paper's 10 s). Figure 5 uses k = 5 and the
    paper's defaults c = 1, l = 30 for the parameter not varied. Returns the frames, the data and the
    knowledge (so that they can be written beside)."""
    say = say if say is not None else (lambda message: None)
    started = time.perf_counter()
    table, knowledge = synthesize_experiment_data(n_records, seed=seed)
    seconds = time.perf_counter() - started
    say(f"{table.n_records:,} records and {len(knowledge.labels):,} labels in {seconds:.1f} s")
    five = figure5(table, knowledge, ls=ls, cs=cs, run_time_limit=run_time_limit, progress=say)
    six = figure6(table, knowledge, ts=ts, ks=ks, run_time_limit=run_time_limit, progress=say)
    parameters = {
        "records": table.n_records,
        "labels": len(knowledge.labels),
        "run_time_limit": run_time_limit,
        "ls": list(ls),
        "cs": list(cs),
        "ts": list(ts),
        "ks": list(ks),
        "seed": seed,
    }
    return QuasiSensitiveExperiment(five, six, parameters), table, knowledge


def write_quasi_sensitive_experiment(
    result: QuasiSensitiveExperiment,
    directory: str | os.PathLike,
    table: Table | None = None,
    knowledge: Any = None,
) -> dict[str, Path]:
    """Write figure5.csv, figure6.csv, results.md, figure5.png, figure6.png (and the data and the
    knowledge table when given) into ``directory``; return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "figure5_csv": directory / "figure5.csv",
        "figure6_csv": directory / "figure6.csv",
        "markdown": directory / "results.md",
        "figure5": directory / "figure5.png",
        "figure6": directory / "figure6.png",
    }
    for key, frame in (("figure5_csv", result.figure5), ("figure6_csv", result.figure6)):
        with atomic_write(paths[key]) as temporary:
            frame.write_csv(temporary)
    p = result.parameters
    text = (
        f"# Quasi-sensitive attributes: QS suppression (Shi, Xiong & Fung 2010)\n\n"
        f"{p['records']:,} records, {p['labels']:,} knowledge labels; phase 2 bounded by "
        f"{p['run_time_limit']:g} s per run.\n\n## Figure 5: removal cost T, adaptive vs baseline DFS "
        "(QS (c,l)-diversity, k = 5)\n\n"
        + markdown_table(result.figure5)
        + "\n## Figure 6: removal cost and generalization loss (QS t-closeness, adaptive)\n\n"
        + markdown_table(result.figure6)
    )
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(text)

    removal_cost_chart(result.figure5, paths["figure5"])
    closeness_chart(result.figure6, paths["figure6"])

    if table is not None:
        paths["data"] = directory / "data.csv"
        with atomic_write(paths["data"]) as temporary:
            table.data.write_csv(temporary)
    if knowledge is not None:
        paths["knowledge"] = directory / "knowledge.csv"
        frame = pl.DataFrame({"label": list(knowledge.labels), "items": knowledge.sets.to_column()})
        with atomic_write(paths["knowledge"]) as temporary:
            frame.write_csv(temporary)
    return paths


def summary(result: QuasiSensitiveExperiment, elapsed_seconds: float | None = None) -> dict[str, Any]:
    """The experiment's figures as JSON-ready values (the ``summary.json`` of ``sdckit experiment
    quasi-sensitive``): parameters, the rows of Figures 5 and 6, and the elapsed seconds (rounded to
    milliseconds) when given."""
    figures: dict[str, Any] = {
        "parameters": result.parameters,
        "figure5": result.figure5.to_dicts(),
        "figure6": result.figure6.to_dicts(),
    }
    if elapsed_seconds is not None:
        figures["elapsed_seconds"] = round(elapsed_seconds, 3)
    return figures
