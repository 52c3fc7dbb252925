"""``synthesize --min-samples-leaf-last`` (issue 36): the last attribute's tree has leaves of its own
size, the trees before it keep ``min_samples_leaf``.

The data: ``x`` of two values, six records each, and ``y`` = ``z`` = ``x``, synthesized in that order.
A tree can split the twelve records on ``x`` only into two leaves of six records: with leaves of at
least 5 records it does, and its leaves are pure (a value drawn from a leaf equals the synthetic
record's ``x``); with leaves of at least 7 it cannot split, and the value is drawn from the marginal
(half ``a``, half ``b``), so that about half the records get the other value."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.anonymize.synthesis import SynthesizeParams, _summary, synthesize
from sdckit.errors import ConfigError
from sdckit.table import Attribute, Role, Schema, Table

X = ["a"] * 6 + ["b"] * 6


def table() -> Table:
    frame = pl.DataFrame({"x": X, "y": X, "z": X})
    return Table(frame, Schema(tuple(Attribute(c, role=Role.QUASI_IDENTIFIER) for c in frame.columns)))


def agree(**options) -> tuple[float, float]:
    """The share of released records whose ``y`` equals ``x``, and whose ``z`` equals ``x`` or ``y``."""
    data = synthesize(table(), m=20, seed=4, **options).table.data
    x, y, z = (data.get_column(c).to_numpy() for c in ("x", "y", "z"))
    return float(np.mean(y == x)), float(np.mean((z == x) | (z == y)))


def test_every_tree_splits_with_leaves_of_five():
    assert agree() == (1.0, 1.0)


def test_no_tree_splits_with_leaves_of_seven():
    y_x, z_xy = agree(min_samples_leaf=7)
    assert 0.35 < y_x < 0.65  # y from the marginal
    assert z_xy < 0.95  # z from the marginal: it differs from both when x = y and it is the other value


def test_the_last_tree_has_its_own_leaves():
    y_x, z_xy = agree(min_samples_leaf=7, min_samples_leaf_last=5)
    assert 0.35 < y_x < 0.65  # y's tree cannot split
    assert z_xy == 1.0  # z's tree, the last, splits (on x or on y) into pure leaves
    y_x, z_xy = agree(min_samples_leaf=5, min_samples_leaf_last=7)
    assert y_x == 1.0
    assert z_xy < 0.95


def test_the_last_leaf_equal_to_the_others_is_the_default_release():
    default = synthesize(table(), m=3, seed=2)
    same = synthesize(table(), m=3, seed=2, min_samples_leaf_last=5)
    assert same.table.data.equals(default.table.data)


def test_the_summary_names_it():
    assert _summary(synthesize(table(), m=1, seed=2))["min_samples_leaf_last"] is None
    summary = _summary(synthesize(table(), m=1, seed=2, min_samples_leaf_last=3))
    assert summary["min_samples_leaf_last"] == 3


@pytest.mark.parametrize("value", [0, -1, 1.5])
def test_bad_last_leaf(value):
    with pytest.raises(ConfigError, match="min_samples_leaf_last"):
        SynthesizeParams.parse({"min_samples_leaf_last": value})
