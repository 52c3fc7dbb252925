"""Utility for a prediction task: a classifier trained on the release and tested on original records,
against the same classifier trained on the original.

The original's records are split at random (``seed``) into a test part (``test_fraction``) and a
training part. One classifier is trained on the original's training records, one on the release —
on the release's records at the training positions when the release has the original's records in
the original's order (same number of records), else on every released record — and both predict the
``target`` of the original's test records from the ``features``:

    accuracy_original = share of test records the original-trained classifier gets right
    accuracy_release  = share the release-trained classifier gets right
    accuracy_loss     = accuracy_original − accuracy_release

**Holdout protocol** (``holdout``: original records held out before the release was made, e.g. from a
synthesizer): the test records are the holdout's, the original-trained classifier trains on every
original record and the release-trained one on every released record. This is the protocol for a
release that is not row-aligned with the original (synthetic data): the split protocol would test on
records the synthesizer trained on. ``protocol`` says which ran: ``holdout``, ``aligned split``
(the release row-aligned, trained at the training positions) or ``split`` (trained on the whole
release, tested on the original's test part).

With the same seed, split and classifier, an identical release gives an identical classifier:
accuracy_loss is exactly 0. ``majority_rate`` is the share of the test records in the most frequent
class of the original's training records: what a classifier that learnt nothing scores.

Features: an attribute of kind numeric with numbers in the original is a number, a release's value
read by :func:`sdckit.utility.released.numeric_view` (a range label as its midpoint); a missing or
suppressed number is the original training records' mean. Every other attribute is one-hot coded on
the values of both files together: a release's label is a value of its own, so an original value
that generalization removed from the release is a column the release-trained classifier never saw
set (it predicts from the other features). The target's values are classes as they are; records with
a missing target are left out of training and testing.

Models (scikit-learn, seeded): ``tree`` (``DecisionTreeClassifier``, grown fully), ``forest``
(``RandomForestClassifier``, 100 trees, the default) and ``logistic`` (multinomial
``LogisticRegression``, scikit-learn's default L2 penalty C = 1, numbers standardized).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from sdckit._extras import require
from sdckit.context import Context, ProgressCallback
from sdckit.errors import ConfigError, InputError, location
from sdckit.measures import register_measure
from sdckit.params import Finite, MethodParams, Whole, finite_or_none, spell
from sdckit.table import Kind, Role, Table, value_strings
from sdckit.utility.disaggregate import GeneralizedField, prepared
from sdckit.utility.released import category_codes, choose_attributes, numeric_view, require_columns

__all__ = ["ClassifierParams", "ClassifierUtility", "classifier_utility"]


@dataclass(frozen=True)
class ClassifierUtility:
    """Accuracy on original test records of a classifier trained on the release and of one trained on
    the original (the "train on release, test on original" utility of e.g. Snoke et al. 2018)."""

    target: str
    features: tuple[str, ...]
    model: str
    accuracy_release: float
    accuracy_original: float
    majority_rate: float
    test_records: int
    training_original: int
    training_release: int
    aligned: bool
    drawn_cells: dict[str, int] | None = None
    protocol: str = "split"

    @property
    def accuracy_loss(self) -> float:
        return self.accuracy_original - self.accuracy_release


def _feature_matrices(
    original: Table, release: Table, features: list[str], train: np.ndarray
) -> tuple[Any, Any]:
    from scipy import sparse

    blocks_original, blocks_release = [], []
    for name in features:
        column = original.column(name)
        if original.schema[name].kind is Kind.NUMERIC and column.dtype.is_numeric():
            x = column.cast(pl.Float64).to_numpy().astype(np.float64, copy=True)
            y = numeric_view(release.column(name), source=release.source).values.copy()
            usable = x[train][~np.isnan(x[train])]
            mean = float(usable.mean()) if usable.size else 0.0
            sd = float(usable.std()) if usable.size > 1 else 0.0
            x[np.isnan(x)] = mean
            y[np.isnan(y)] = mean
            scale = sd if sd > 0 else 1.0
            blocks_original.append(sparse.csr_matrix(((x - mean) / scale).reshape(-1, 1)))
            blocks_release.append(sparse.csr_matrix(((y - mean) / scale).reshape(-1, 1)))
        else:
            a, b, levels = category_codes(column, release.column(name))
            for codes, blocks in ((a, blocks_original), (b, blocks_release)):
                rows = np.arange(codes.size)
                blocks.append(
                    sparse.csr_matrix((np.ones(codes.size), (rows, codes)), shape=(codes.size, levels))
                )
    return sparse.hstack(blocks_original, format="csr"), sparse.hstack(blocks_release, format="csr")


#: Trees of the random forest, and how many are grown between two progress reports.
FOREST_TREES = 100
TREES_PER_REPORT = 10


def _model(name: str, seed: int) -> Any:
    if name == "tree":
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(random_state=seed)
    if name == "forest":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=FOREST_TREES, random_state=seed, n_jobs=1)
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=2000, random_state=seed)


def _fit_steps(name: str) -> int:
    """The steps of :func:`_fitted`: one per ``TREES_PER_REPORT`` trees of a forest, else one."""
    return FOREST_TREES // TREES_PER_REPORT if name == "forest" else 1


def _fitted(name: str, seed: int, x: Any, y: np.ndarray, step: Callable[[], None]) -> Any:
    """Model ``name`` fitted to ``x``, ``y``, calling ``step()`` after each of :func:`_fit_steps`.
    A forest is grown ``TREES_PER_REPORT`` trees at a time (scikit-learn's warm start): the same
    forest as one fit, since each tree's seed is the next draw from the forest's seed."""
    model = _model(name, seed)
    if name != "forest":
        model.fit(x, y)
        step()
        return model
    model.set_params(warm_start=True)
    for trees in range(TREES_PER_REPORT, FOREST_TREES + 1, TREES_PER_REPORT):
        model.set_params(n_estimators=trees)
        model.fit(x, y)
        step()
    return model.set_params(warm_start=False)


def classifier_utility(
    original: Table,
    release: Table,
    target: str,
    features: list[str],
    *,
    model: str = "forest",
    test_fraction: float = 0.3,
    seed: int = 0,
    progress: ProgressCallback | None = None,
    holdout: Table | None = None,
) -> ClassifierUtility:
    """Train ``model`` on the original's and on the release's training records and test both on
    the original's test records, or on ``holdout``'s records (see the module docstring);
    ``progress(done, total)`` counts the training steps of both models (ten trees of a forest, or a
    whole fit)."""
    require("learn", "sklearn", feature="the classifier utility measure")
    n = original.n_records
    if holdout is not None:
        original = _stacked(original, holdout, [target, *features])
        train, test = np.arange(n), np.arange(n, original.n_records)
        aligned, protocol = False, "holdout"
    else:
        aligned = release.n_records == n
        protocol = "aligned split" if aligned else "split"
        order = np.random.default_rng(seed).permutation(n)
        tests = int(round(test_fraction * n))
        test, train = np.sort(order[:tests]), np.sort(order[tests:])
    labels_original = value_strings(original.column(target)).to_numpy()
    labels_release = value_strings(release.column(target)).to_numpy()
    known_original = original.column(target).is_not_null().to_numpy()
    known_release = release.column(target).is_not_null().to_numpy()
    test = test[known_original[test]]
    train_original = train[known_original[train]]
    train_release = train[known_release[train]] if aligned else np.flatnonzero(known_release)
    if test.size == 0 or train_original.size == 0 or train_release.size == 0:
        raise InputError(
            f"{location(original.source, attribute=target)}too few records with a target value to train "
            f"and test ({n:,} records, test fraction {test_fraction:g})"
        )
    x_original, x_release = _feature_matrices(original, release, features, train_original)
    total, done = 2 * _fit_steps(model), 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    by_original = _fitted(model, seed, x_original[train_original], labels_original[train_original], step)
    by_release = _fitted(model, seed, x_release[train_release], labels_release[train_release], step)
    truth = labels_original[test]
    classes, counts = np.unique(labels_original[train_original], return_counts=True)
    majority = classes[counts.argmax()]
    return ClassifierUtility(
        target=target,
        features=tuple(features),
        model=model,
        accuracy_release=float((by_release.predict(x_original[test]) == truth).mean()),
        accuracy_original=float((by_original.predict(x_original[test]) == truth).mean()),
        majority_rate=float((truth == majority).mean()),
        test_records=int(test.size),
        training_original=int(train_original.size),
        training_release=int(train_release.size),
        aligned=aligned,
        protocol=protocol,
    )


def _stacked(original: Table, holdout: Table, names: list[str]) -> Table:
    """The original's records then the holdout's, on the original's schema (the holdout's columns
    cast to the original's types)."""
    missing = [name for name in names if name not in holdout.data.columns]
    if missing:
        raise InputError(f"{location(holdout.source)}the holdout has no column {', '.join(missing)}")
    rows = holdout.data.select(
        pl.col(name).cast(original.data.schema[name])
        for name in original.data.columns
        if name in holdout.data.columns
    )
    frame = pl.concat([original.data.select(rows.columns), rows])
    return Table(frame, original.schema, source=original.source)


class ClassifierParams(MethodParams):
    """Parameters of the classifier utility (``sdckit utility classifier``)."""

    target: Annotated[
        str | None,
        Field(min_length=1, description="The attribute to predict (default: the first sensitive attribute)."),
    ] = None
    features: Annotated[
        str | None,
        Field(min_length=1, description="Comma-separated predictors (default: the quasi-identifiers)."),
    ] = None
    model: Annotated[
        Literal["tree", "forest", "logistic"],
        Field(description="Decision tree, random forest (100 trees) or logistic regression."),
    ] = "forest"
    test_fraction: Annotated[
        Finite, Field(gt=0, lt=1, description="Share of the original's records held out for testing.")
    ] = 0.3
    seed: Annotated[Whole, Field(ge=0, description="Seed of the split and of the classifiers.")] = 0
    holdout: Annotated[
        str | None,
        Field(
            min_length=1,
            description="File of original records held out before the release was made: test on them "
            "(the protocol for synthetic data).",
        ),
    ] = None
    generalized: GeneralizedField = "draw"


def _summary(result: ClassifierUtility) -> dict[str, Any]:
    return {
        "target": result.target,
        "features": list(result.features),
        "model": result.model,
        "accuracy_release": finite_or_none(result.accuracy_release),
        "accuracy_original": finite_or_none(result.accuracy_original),
        "accuracy_loss": finite_or_none(result.accuracy_loss),
        "majority_rate": finite_or_none(result.majority_rate),
        "test_records": result.test_records,
        "training_records_original": result.training_original,
        "training_records_release": result.training_release,
        "aligned": result.aligned,
        "protocol": result.protocol,
        "drawn_cells": result.drawn_cells,
    }


def _report(figures: dict[str, Any]) -> list[Any]:
    return [
        f"{figures['model']} predicting {figures['target']} from {len(figures['features'])} attributes, "
        f"tested on {figures['test_records']:,} original records "
        f"({figures.get('protocol', 'split')} protocol)",
        f"accuracy: trained on the release {figures['accuracy_release']:.4f}, on the original "
        f"{figures['accuracy_original']:.4f} (loss {figures['accuracy_loss']:.4f}; majority class "
        f"{figures['majority_rate']:.4f})",
    ]


@register_measure(
    "classifier",
    "utility",
    ClassifierParams,
    summary=_summary,
    help="Accuracy on original records of a classifier trained on the release, against one trained on "
    "the original.",
    report=_report,
    compares=True,
    progress_label="training",
    headline="accuracy_loss",
)
def _run(original: Table, release: Table, params: ClassifierParams, context: Context) -> ClassifierUtility:
    if params.target is None:
        sensitive = original.schema.with_role(Role.SENSITIVE)
        if not sensitive:
            raise ConfigError(
                f"the configuration has no sensitive attribute: name the target with {spell('target')}"
            )
        target = sensitive[0].name
    else:
        target = choose_attributes(original, params.target, option="target")[0]
    features = choose_attributes(
        original, params.features, default_roles=(Role.QUASI_IDENTIFIER,), option="features"
    )
    features = [name for name in features if name != target]
    if not features:
        raise ConfigError(f"no features left to predict {target} from: name them with {spell('features')}")
    require_columns(release, [target, *features])
    drawn = prepared(original, release, [target, *features], params.generalized, params.seed)
    release = drawn.table
    holdout = None
    if params.holdout is not None:
        holdout = context.config.read(params.holdout) if context.config is not None else None
        if holdout is None:
            raise ConfigError(f"{spell('holdout')} needs the configuration to read the file with")
    result = classifier_utility(
        original,
        release,
        target,
        features,
        model=params.model,
        test_fraction=params.test_fraction,
        seed=params.seed,
        progress=context.progress,
        holdout=holdout,
    )
    return replace(result, drawn_cells=drawn.cells)
