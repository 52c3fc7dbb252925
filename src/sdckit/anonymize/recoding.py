"""Optimal full-domain generalization (``sdckit anonymize generalize``).

Full-domain generalization maps every value of a quasi-identifier to the same level of its
hierarchy. The candidate transformations form a lattice (one level per quasi-identifier); the search
returns the node that satisfies every privacy model, with at most ``suppression_limit`` of the records
suppressed (records of the classes that violate a model), and minimizes the chosen utility metric.
The search is exact (Samarati 2001; LeFevre et al. 2005 "Incognito"; Kohlmayer et al. 2012 "Flash";
ARX's predictive tagging): :mod:`sdckit.anonymize._lattice_search` says how.

Deviation from ARX (issue 36): the suppressed records, released all ``*``, are one more equivalence
class, which must satisfy every model too (someone known to be in the data who matches no released
class is one of them); ARX checks the released classes only. A node whose suppressed group fails a
model is not a release, so a release differs from ARX's only where that group failed:
:mod:`sdckit.anonymize._suppressed_group` says how the search keeps exact.

Lattices larger than ``max_nodes`` are searched by a clearly labelled greedy heuristic
(``Release.heuristic``): starting from the original data, raise the level of the attribute whose
generalization leaves the fewest records to suppress, then the best metric, until the models hold.

Top and bottom coding, the other global recoding of this family, is
:mod:`sdckit.anonymize.top_bottom_coding`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Self

import numpy as np
import polars as pl
from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from sdckit import _kernels_release
from sdckit.anonymize._lattice_search import CLASS_FREE_BOUND, Node, Search
from sdckit.anonymize._lattice_walk import exhaustive_search, heuristic_search, optimum
from sdckit.anonymize._recoding_transform import GENERALIZE
from sdckit.anonymize.base import Context, models_unmet, register_method, run_method
from sdckit.anonymize.release import Figures, Release
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError
from sdckit.hierarchy import MISSING_LABEL, Hierarchy
from sdckit.labels import SUPPRESSED
from sdckit.models import DistinctLDiversity, KAnonymity, PrivacyModel
from sdckit.models.presence import subset_figures, subset_report, subset_weights
from sdckit.params import Finite, PrivacyModelParams, Whole, spell
from sdckit.scale import methods as scaled
from sdckit.table import Role, Schema, Table
from sdckit.utility.metrics import compute_all
from sdckit.utility.objectives import (
    DEFAULT_GS_FACTOR,
    GS_FACTOR_METRICS,
    WEIGHTED_METRICS,
    MetricOptions,
)

__all__ = [
    "CLASS_FREE_BOUND",
    "SUPPRESSED",
    "GeneralizeFigures",
    "GeneralizeCall",
    "GeneralizeParams",
    "full_domain_generalization",
    "release_metrics",
]

# Stands for the missing value's node while a released column is an Enum (whose categories cannot be
# null); no hierarchy label holds a NUL character read from a file.
_PLACEHOLDER = "\x00missing"


def _weights_text(value: Any) -> Any:
    """``"a=2, b=0.5"`` -> ``{"a": "2", "b": "0.5"}`` (the command line's weights; the field reads the
    numbers)."""
    if not isinstance(value, str):
        return value
    pairs = [part.strip() for part in value.split(",") if part.strip()]
    if not all("=" in part for part in pairs):
        raise ValueError(f"must be attribute=weight pairs such as age=2,sex=0.5, got {value!r}")
    return {name.strip(): weight.strip() for name, weight in (part.split("=", 1) for part in pairs)}


def _not_a_truth_value(value: Any) -> Any:
    if isinstance(value, bool):  # a float field would read True as 1.0
        raise ValueError("must be a number in [0, 1]")
    return value


class GeneralizeParams(PrivacyModelParams):
    """Parameters of full-domain generalization (``sdckit anonymize generalize``)."""

    suppression_limit: Annotated[
        Finite,
        BeforeValidator(_not_a_truth_value),
        Field(ge=0, le=1, description="Largest share of records that may be suppressed ('*')."),
    ] = 0.0
    metric: Annotated[
        Literal[
            "loss",
            "ncp",
            "gcp",
            "dm",
            "dm_star",
            "aecs",
            "aecs_arx",
            "precision",
            "entropy",
            "entropy_monotone",
            "classification",
        ],
        Field(
            description="Utility metric the search minimizes (classification: ARX's, for the target "
            "attribute)."
        ),
    ] = "loss"
    gs_factor: Annotated[
        Finite,
        BeforeValidator(_not_a_truth_value),
        Field(
            ge=0,
            le=1,
            description="Generalization/suppression factor of the loss and classification metrics (ARX): "
            "0 prefers suppression, 1 generalization, 0.5 weighs them alike.",
        ),
    ] = DEFAULT_GS_FACTOR
    attribute_weights: Annotated[
        dict[str, Annotated[Finite, Field(ge=0)]] | None,
        BeforeValidator(_weights_text),
        Field(
            description="Weights of the quasi-identifiers in the loss, ncp, gcp, precision and entropy "
            "metrics, as a=2,b=0.5 (an attribute not named weighs 1)."
        ),
    ] = None
    target: Annotated[
        str | None,
        Field(description="Attribute the classification metric keeps predictable (ARX's response variable)."),
    ] = None
    max_nodes: Annotated[
        Whole, Field(ge=1, description="Larger generalization lattices are searched greedily (heuristic).")
    ] = 2_000_000
    drop_suppressed: Annotated[
        bool, Field(description="Leave suppressed records out of the release instead of writing '*'.")
    ] = False

    #: The metric's options (issue 38) join the models' in being left out of recipes at their default.
    omitted_at_default: ClassVar[dict[str, Any]] = {
        **PrivacyModelParams.omitted_at_default,
        "gs_factor": DEFAULT_GS_FACTOR,
        "attribute_weights": None,
        "target": None,
    }

    @model_validator(mode="after")
    def _metric_options(self) -> Self:
        if self.metric == "classification" and self.target is None:
            raise ValueError("metric classification needs a {target} attribute")
        if self.target is not None and self.metric != "classification":
            raise ValueError("{target} is read by metric classification only: give metric classification")
        if self.gs_factor != DEFAULT_GS_FACTOR and self.metric not in GS_FACTOR_METRICS:
            raise ValueError(f"{{gs_factor}} applies to metric {' or '.join(GS_FACTOR_METRICS)} only")
        if self.attribute_weights is not None:
            if self.metric not in WEIGHTED_METRICS:
                raise ValueError(f"{{attribute_weights}} apply to metric {', '.join(WEIGHTED_METRICS)} only")
            if not any(weight > 0 for weight in self.attribute_weights.values()):
                raise ValueError("{attribute_weights}: at least one weight must be positive")
        return self

    def metric_options(self) -> MetricOptions:
        """The gs-factor, attribute weights and target the search's metric reads."""
        return MetricOptions(self.gs_factor, self.attribute_weights, self.target)


class GeneralizeCall(GeneralizeParams):
    """The parameters as the Python function :func:`full_domain_generalization` takes them: privacy
    model objects instead of k, l and t, the quasi-identifiers and hierarchies (default: the
    schema's), sampling ``weights`` and ``exhaustive`` (every node evaluated, a reference for tests).
    Not a command-line method's parameters (the objects have no text form); its recipe names the
    models."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    models: tuple[PrivacyModel, ...] = ()
    quasi_identifiers: tuple[str, ...] | None = None
    hierarchies: dict[str, Hierarchy] | None = None
    weights: np.ndarray | None = None
    exhaustive: bool = False

    @model_validator(mode="after")
    def _some_model(self) -> Self:  # in place of PrivacyModelParams' rule on k, l and t
        if not self.models:
            raise ValueError("needs at least one privacy model in {models} (for example KAnonymity(5))")
        return self

    def privacy_models(self, table: Any) -> list[Any]:
        """The privacy model objects given."""
        return list(self.models)

    def to_recipe(self) -> dict[str, Any]:
        """The models by name and the search's settings (the objects have no text form)."""
        return {
            "models": [model.name for model in self.models],
            "suppression_limit": self.suppression_limit,
            "metric": self.metric,
            "max_nodes": self.max_nodes,
            "quasi_identifiers": None if self.quasi_identifiers is None else list(self.quasi_identifiers),
        } | {
            name: getattr(self, name)
            for name in ("gs_factor", "attribute_weights", "target")
            if getattr(self, name) != self.omitted_at_default[name]
        }


@dataclass(frozen=True)
class GeneralizeFigures(Figures):
    """What full-domain generalization solved and found: the privacy models it checked (by name) and
    what the search did (``search``: the lattice size, strategy, evaluations, the optimum's metric
    value ..., as the summary writes it). The chosen levels are ``Release.levels``."""

    models: tuple[str, ...] = ()
    search: dict[str, Any] = field(default_factory=dict)


def _resolve(
    table: Table,
    quasi_identifiers: Sequence[str] | None,
    hierarchies: Mapping[str, Hierarchy] | None,
) -> tuple[list[str], list[Hierarchy]]:
    schema = table.schema
    names = (
        list(quasi_identifiers)
        if quasi_identifiers is not None
        else [a.name for a in schema.with_role(Role.QUASI_IDENTIFIER)]
    )
    if not names:
        raise ConfigError("no quasi-identifiers: give role quasi-identifier to some attributes")
    resolved = []
    for name in names:
        if name not in table.data.columns:
            raise ConfigError(f"quasi-identifier '{name}' is not a column of the data")
        hierarchy = (hierarchies or {}).get(name)
        if hierarchy is None and name in schema:
            hierarchy = schema[name].hierarchy
        if not isinstance(hierarchy, Hierarchy):
            raise ConfigError(
                f"quasi-identifier '{name}' has no hierarchy: give it one in the configuration "
                "(hierarchy: file.csv, or a builder such as {intervals: [...]} or {mask: 5})"
            )
        # The search relies on nested levels (each a function of the previous one).
        hierarchy.validate()
        resolved.append(hierarchy)
    return names, resolved


def full_domain_generalization(
    table: Table,
    models: Sequence[PrivacyModel],
    *,
    quasi_identifiers: Sequence[str] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    suppression_limit: float = 0.0,
    metric: str = "loss",
    max_nodes: int = 2_000_000,
    weights: np.ndarray | None = None,
    progress: ProgressCallback | None = None,
    exhaustive: bool = False,
    gs_factor: float = DEFAULT_GS_FACTOR,
    attribute_weights: Mapping[str, float] | None = None,
    target: str | None = None,
) -> Release:
    """The optimal full-domain generalization of ``table`` under ``models``.

    The method ``generalize`` run with :class:`GeneralizeCall` (privacy model objects, hierarchies
    and weights besides the fields of :class:`GeneralizeParams`, whose rules they follow).

    Parameters
    ----------
    models
        Privacy models every released equivalence class must satisfy (see :mod:`sdckit.models`).
    quasi_identifiers
        Attributes to generalize; default: those with role quasi-identifier.
    hierarchies
        A hierarchy per quasi-identifier; default: the attributes' hierarchies from the schema.
    suppression_limit
        Largest share of records (0 to 1) that may be suppressed: records of classes violating a
        model are suppressed (all their quasi-identifiers become ``*``) when they fit the limit and,
        taken together as one more class, satisfy every model (or there are none).
    metric
        Utility metric to minimize: one of :data:`sdckit.utility.metrics.METRICS`.
    max_nodes
        Lattices with more nodes are searched by a greedy heuristic (``Release.heuristic`` is True).
    exhaustive
        Evaluate every node with no pruning (a reference for tests; slow on large lattices).
    gs_factor, attribute_weights, target
        The generalization/suppression factor of the loss and classification metrics, weights of the
        quasi-identifiers in loss, ncp, gcp, precision and the entropies, and the classification
        metric's target attribute
        (:mod:`sdckit.utility.objectives`).

    Missing values of a quasi-identifier are generalized when its hierarchy has them as members
    (:meth:`sdckit.hierarchy.Hierarchy.with_missing`, the configuration's ``missing`` key): their
    leaf is a value like any other, and a node standing for the missing value is released as a
    missing value (null). Suppressed from the start (``"suppress"``), the cell is a suppressed cell
    (``Release.suppressed_cells``, NCP and loss 1) while its record keeps its class; a class too
    small is suppressed as any other. Without a choice they are a :class:`ConfigError` naming the
    attribute and the choices.
    """
    values: dict[str, Any] = {"models": tuple(models), "quasi_identifiers": quasi_identifiers}
    values["hierarchies"] = hierarchies
    values |= {"suppression_limit": suppression_limit, "metric": metric, "max_nodes": max_nodes}
    values |= {"gs_factor": gs_factor, "attribute_weights": attribute_weights, "target": target}
    params = GeneralizeCall.parse(
        {**values, "weights": weights, "exhaustive": exhaustive}, method="generalize"
    )
    return run_method("generalize", table, params, Context(progress=progress))


def _generalize(
    table: Table,
    models: Sequence[PrivacyModel],
    quasi_identifiers: Sequence[str] | None,
    params: GeneralizeParams,
    progress: ProgressCallback | None,
) -> Release:
    """The search and its release (the method's run)."""
    call = params if isinstance(params, GeneralizeCall) else None
    hierarchies = call.hierarchies if call is not None else None
    weights = call.weights if call is not None else None
    exhaustive = call.exhaustive if call is not None else False
    suppression_limit, metric, max_nodes = params.suppression_limit, params.metric, params.max_nodes
    if table.n_records == 0:
        raise ConfigError("the data has no records")
    names, resolved = _resolve(table, quasi_identifiers, hierarchies)
    for model in models:
        if model.sensitive_attribute is not None and model.sensitive_attribute not in table.data.columns:
            raise ConfigError(
                f"sensitive attribute '{model.sensitive_attribute}' is not a column of the data"
            )
        if model.sensitive_attribute in names:
            raise ConfigError(f"'{model.sensitive_attribute}' cannot be both quasi-identifier and sensitive")
    # Class sizes, the suppression limit and the metric over the research subset, if any (ARX's count)
    weights = subset_weights(table, models, weights)
    _check_metric_options(params, names)
    options = params.metric_options()
    search = Search(table, names, resolved, models, float(suppression_limit), metric, weights, options)
    whole = search.statistics(
        np.zeros(len(search.combinations.counts), dtype=np.int32), 1, np.array([search.n_records])
    )
    for model in models:
        # The released classes and the group of suppressed records, which must satisfy the models
        # too, make up the whole table: a monotonic model (the union of passing classes passes: every
        # model here) that the whole table fails fails in every release, suppression or not.
        if suppression_limit <= 0 or model.monotonic or isinstance(model, KAnonymity | DistinctLDiversity):
            model.check_feasible(whole)
    monotone = search.all_monotone
    top = search.evaluate(search.max_levels.tolist()) if monotone else None
    if top is not None and not top.monotone_ok:
        # Satisfaction within the limit is monotone, so if the most general node fails, every node
        # fails (its suppressed group, checked apart, is not monotone).
        raise ConfigError(
            "the privacy models cannot be satisfied by any generalization within the suppression limit "
            f"({', '.join(model.name for model in models)})"
        )
    heuristic = search.size > max_nodes
    if exhaustive:
        best, details = exhaustive_search(search)
        heuristic = False
    elif heuristic:
        best, details = heuristic_search(search, progress)
    else:
        best, details = optimum(search, monotone, suppression_limit, progress, top)
        if progress is not None:
            # The search ends when every node is decided (evaluated, tagged or bounded out), most of
            # them without a report of their own.
            progress(search.size, search.size)
    if best.node is None:
        raise ConfigError(
            "the privacy models cannot be satisfied by any generalization within the suppression limit "
            f"({', '.join(model.name for model in models)})"
        )
    details.update(evaluations=search.evaluations, monotone=monotone)
    figures = GeneralizeFigures(models=tuple(model.name for model in models), search=details)
    return _release(table, search, best.node, params, figures, heuristic)


def _check_metric_options(params: GeneralizeParams, names: Sequence[str]) -> None:
    """The attribute weights name quasi-identifiers; the target is a column (checked with the data)."""
    unknown = sorted(set(params.attribute_weights or {}) - set(names))
    if unknown:
        raise ConfigError(
            f"{spell('attribute_weights')}: {', '.join(unknown)} not among the quasi-identifiers "
            f"({', '.join(names)})"
        )


def _release(
    table: Table,
    search: Search,
    node: Node,
    params: GeneralizeParams,
    figures: GeneralizeFigures,
    heuristic: bool,
) -> Release:
    # Released as Enums of the levels' labels (and '*'): the text a user sees, stored as small integer
    # codes that later checks group exactly without hashing text. A node of the missing value
    # (MISSING_LABEL) is released as a missing value: the Enum's null.
    category_lists = []
    for j, hierarchy in enumerate(search.hierarchies):
        categories = list(hierarchy.labels[node.levels[j]])
        if SUPPRESSED not in categories:
            categories.append(SUPPRESSED)
        category_lists.append(categories)
    # A missing value suppressed from the start is a suppressed cell in a record that is not suppressed
    # (added below to the cells of the suppressed records).
    record_classes, suppressed, penalty, released_codes, suppressed_cells = _record_arrays(
        search, node, [categories.index(SUPPRESSED) for categories in category_lists]
    )
    columns = {}
    for j, name in enumerate(search.quasi_identifiers):
        hierarchy = search.hierarchies[j]
        categories = category_lists[j]
        missing_node = categories.index(MISSING_LABEL) if MISSING_LABEL in categories else -1
        if missing_node >= 0:
            categories[missing_node] = _PLACEHOLDER  # an Enum category is never null; nulled below
        text = pl.Series(name, categories, dtype=pl.String)  # one conversion of the labels, not two
        labels = text.cast(pl.Enum(text))
        # numpy indexing (no expression round trip) by uint32, which polars takes without a copy
        column = labels[released_codes[j]]
        if missing_node >= 0:
            column = column.cast(pl.String).replace(_PLACEHOLDER, None)
            categories.pop(missing_node)
            column = column.cast(pl.Enum(categories))
        if hierarchy.missing == "suppress":
            leaves = search.combinations.leaf_codes[:, j] == hierarchy.missing_leaf
            suppressed_cells[:, j] |= leaves[search.combinations.record_combination]
        columns[name] = column
    identifiers = {a.name for a in table.schema.with_role(Role.IDENTIFIER)}
    # The data's columns in their order, the quasi-identifiers replaced and the identifiers left out
    # (a frame of the Series: no expression round trip).
    released = pl.DataFrame(
        [
            columns.get(name, table.data.get_column(name))
            for name in table.data.columns
            if name not in identifiers
        ]
    )
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    view = node.view(search)
    search_figures = {**figures.search, "metric_value": search.value(node)}
    return Release(
        table=Table(released, schema, source=table.source),
        original=table,
        method="generalize",
        quasi_identifiers=search.quasi_identifiers,
        suppressed_records=suppressed,
        classes=record_classes,
        levels=dict(zip(search.quasi_identifiers, node.levels, strict=True)),
        hierarchies=dict(zip(search.quasi_identifiers, search.hierarchies, strict=True)),
        view=view,
        heuristic=heuristic,
        cell_penalty=penalty,
        suppressed_cells=suppressed_cells,
        params=params,
        figures=dataclasses.replace(figures, search=search_figures),
    )


def _record_arrays(
    search: Search, node: Node, stars: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per record of the release: its class (-1: suppressed), whether it is suppressed, the NCP of each
    cell (1 when suppressed), each quasi-identifier's released code (a row per attribute; ``stars``:
    the code of '*' per attribute) and whether each cell is suppressed (when the record is). One
    compiled pass over the records
    (:func:`sdckit._kernels_release.release_records`) gathers them from the node's per-combination
    codes and the NCP of every node of each chosen level."""
    record_combination = np.ascontiguousarray(search.combinations.record_combination, dtype=np.int32)
    q, count, n = len(search.hierarchies), len(search.combinations.counts), len(record_combination)
    codes = np.empty((q, count), dtype=np.int32)
    ncp = [hierarchy.ncp(node.levels[j]) for j, hierarchy in enumerate(search.hierarchies)]
    code_penalty = np.zeros((q, max(len(values) for values in ncp)), dtype=np.float64)
    for j, values in enumerate(ncp):
        codes[j] = search.generalized[j][node.levels[j]]
        code_penalty[j, : len(values)] = values
    classes = np.empty(n, dtype=np.int64)
    suppressed = np.empty(n, dtype=bool)
    penalty = np.empty((n, q), dtype=np.float64)
    released = np.empty((q, n), dtype=np.uint32)
    cells = np.empty((n, q), dtype=bool)
    _kernels_release.release_records(
        record_combination,
        np.ascontiguousarray(node.classes, dtype=np.int32),
        np.ascontiguousarray(node.passes, dtype=np.bool_),
        codes,
        code_penalty,
        np.asarray(stars, dtype=np.int64),
        classes,
        suppressed,
        penalty,
        released,
        cells,
    )
    return classes, suppressed, penalty, released, cells


def release_metrics(release: Release) -> dict[str, float]:
    """Every utility metric of a full-domain generalization release."""
    if release.view is None:
        raise ConfigError("this release has no generalization view to measure")
    return compute_all(release.view)


# Registered method ---------------------------------------------------------------------------


def _generalize_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import achieved, cell_figures, class_figures
    from sdckit.utility import release_ncp

    metrics = release_metrics(release)
    metrics["release_ncp"] = release_ncp(release)
    models = release.params.privacy_models(release.original)
    return {
        "models": [model.name for model in models],
        "levels": release.levels,
        **class_figures(release),
        **cell_figures(release),
        "metrics": metrics,
        "achieved": achieved(release, models),
        "heuristic": release.heuristic,
        "search": release.figures_as(GeneralizeFigures).search,
        **subset_figures(release.original, models, release.suppressed_records),
    }


def _generalize_report(figures: dict[str, Any]) -> list[str]:
    from sdckit.anonymize.base import achieved_report, classes_report

    levels = ", ".join(f"{name} {level}" for name, level in figures["levels"].items())
    lines = [*classes_report(figures), *subset_report(figures), *achieved_report(figures)]
    return [f"generalization levels: {levels}", *lines]


def _generalize_released(release: Release) -> Table:
    if not release.params.drop_suppressed:
        return release.table
    kept = pl.Series(~release.suppressed_records)
    return Table(release.table.data.filter(kept), release.table.schema, source=release.table.source)


@register_method(
    "generalize",
    GeneralizeParams,
    summary=_generalize_summary,
    help="Optimal full-domain generalization under k-anonymity, l-diversity, t-closeness, beta-likeness "
    "and delta-disclosure privacy (ARX's search).",
    report=_generalize_report,
    violation=models_unmet,
    released=_generalize_released,
    progress_label="lattice",
    transformation=GENERALIZE,
    partitioned=scaled.generalize,
    examples={
        "minimal": {"k": 2},
        "replay": {"k": 3, "suppression_limit": 0.1},
    },
)
def _run_generalize(table: Table, params: GeneralizeParams, context: Context) -> Release:
    from sdckit.anonymize.base import quasi_identifiers

    if isinstance(params, GeneralizeCall):
        names = None if params.quasi_identifiers is None else list(params.quasi_identifiers)
    else:
        names = quasi_identifiers(table)
    return _generalize(table, params.privacy_models(table), names, params, context.progress)
