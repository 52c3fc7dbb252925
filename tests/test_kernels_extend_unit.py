"""The key extension with and without multiplicities (:class:`sdckit._kernels_counting.KeyExtender`):
the direct table path skips reading multiplicities that are all 1, and the extender checks each
multiplicity array once. Against a plain numpy oracle: the same groups, sizes in records."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit._kernels_counting import KeyExtender


def oracle(parent_keys, parent_sizes, codes, multiplicity, radix, skip_singletons):
    """The tracked elements, their groups by (parent key, code) in order of first appearance, and
    the records per group."""
    tracked = parent_keys >= 0
    if skip_singletons:
        tracked &= parent_sizes[np.maximum(parent_keys, 0)] >= 2
    pairs = parent_keys.astype(np.int64) * radix + codes + 1
    keys = np.full(len(parent_keys), -1, dtype=np.int64)
    first: dict[int, int] = {}
    sizes: list[int] = []
    for r in np.flatnonzero(tracked):
        key = first.setdefault(int(pairs[r]), len(first))
        if key == len(sizes):
            sizes.append(0)
        sizes[key] += int(multiplicity[r])
        keys[r] = key
    return keys, np.array(sizes, dtype=np.int64), int((~tracked).sum())


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    st.integers(1, 60),
    st.integers(1, 5),
    st.integers(1, 6),
    st.booleans(),
    st.sampled_from(["none", "ones", "counts"]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_extend_matches_oracle(n, parents, cardinality, skip_singletons, kind, wide, seed):
    """``wide``: a cardinality above the direct table's capacity (the hashed path)."""
    rng = np.random.default_rng(seed)
    parent_keys = rng.integers(-1 if skip_singletons else 0, parents, n).astype(np.int32)
    parent_sizes = np.bincount(parent_keys[parent_keys >= 0], minlength=parents).astype(np.int64)
    codes = rng.integers(-1, cardinality, n).astype(np.int32)
    multiplicity = {
        "none": None,
        "ones": np.ones(n, dtype=np.int64),
        "counts": rng.integers(1, 4, n).astype(np.int64),
    }[kind]
    extender = KeyExtender(n)
    radix = cardinality + 1 + (extender.direct_capacity if wide else 0)
    keys, sizes, alone = extender.extend(
        parent_keys, parent_sizes, codes, radix - 1, skip_singletons, multiplicity
    )
    counted = multiplicity if multiplicity is not None else np.ones(n, dtype=np.int64)
    expected_keys, expected_sizes, expected_alone = oracle(
        parent_keys, parent_sizes, codes, counted, radix, skip_singletons
    )
    assert np.array_equal(keys, expected_keys)
    assert np.array_equal(sizes, expected_sizes)
    assert alone == expected_alone


def test_multiplicities_checked_per_array():
    """The extender remembers the last multiplicity array: another array is checked again."""
    extender = KeyExtender(4)
    root_keys, root_sizes = np.zeros(4, dtype=np.int32), np.array([4], dtype=np.int64)
    codes = np.array([0, 1, 0, 1], dtype=np.int32)
    ones = np.ones(4, dtype=np.int64)
    _, sizes, _ = extender.extend(root_keys, root_sizes, codes, 2, True, ones)
    assert sizes.tolist() == [2, 2]
    counts = np.array([3, 1, 2, 5], dtype=np.int64)
    _, sizes, _ = extender.extend(root_keys, root_sizes, codes, 2, True, counts)
    assert sizes.tolist() == [5, 6]  # 3 + 2 records with code 0, 1 + 5 with code 1
    _, sizes, _ = extender.extend(root_keys, root_sizes, codes, 2, True, ones)
    assert sizes.tolist() == [2, 2]
