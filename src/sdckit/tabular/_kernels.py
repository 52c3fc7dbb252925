"""Compiled loops of the table builder that cannot be vectorized."""

from __future__ import annotations

import numpy as np

from sdckit._numba import njit


@njit(cache=True)
def holding_contributions(
    starts: np.ndarray,
    leaves: np.ndarray,
    values: np.ndarray,
    ancestors: np.ndarray,
    strides: np.ndarray,
    cell_codes: np.ndarray,
    top: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Contributors and largest contributions per cell when a contributor is a holding.

    Units (a holding's records summed per leaf combination) are sorted by holding; holding ``g`` owns
    units ``starts[g] .. starts[g+1]-1``. ``leaves[u, d]`` is unit ``u``'s leaf in dimension ``d``,
    ``ancestors[d, leaf, :]`` the leaf's nodes (itself, its subtotals, the total; -1 pads),
    ``strides`` the mixed radix of a cell's code and ``cell_codes`` the sorted codes of the cells.
    A holding's contribution to a cell is the sum of its units under the cell; returns the number of
    holdings contributing to every cell and the ``top`` largest contributions, in decreasing order.
    """
    n_cells = cell_codes.shape[0]
    dims = leaves.shape[1]
    depth = ancestors.shape[2]
    counts = np.zeros(n_cells, dtype=np.int64)
    largest = np.zeros((n_cells, max(top, 1)), dtype=np.float64)
    combos = 1
    for _ in range(dims):
        combos *= depth
    position = np.zeros(dims, dtype=np.int64)
    for group in range(starts.shape[0] - 1):
        first, last = starts[group], starts[group + 1]
        size = (last - first) * combos
        cells = np.empty(size, dtype=np.int64)
        sums = np.empty(size, dtype=np.float64)
        used = 0
        for unit in range(first, last):
            position[:] = 0
            while True:
                code = 0
                valid = True
                for d in range(dims):
                    node = ancestors[d, leaves[unit, d], position[d]]
                    if node < 0:
                        valid = False
                        break
                    code += node * strides[d]
                if valid:
                    cells[used] = np.searchsorted(cell_codes, code)
                    sums[used] = values[unit]
                    used += 1
                # next combination of ancestor positions (an odometer over the dimensions)
                d = dims - 1
                while d >= 0:
                    position[d] += 1
                    if position[d] < depth and ancestors[d, leaves[unit, d], position[d]] >= 0:
                        break
                    position[d] = 0
                    d -= 1
                if d < 0:
                    break
        order = np.argsort(cells[:used])
        i = 0
        while i < used:
            cell = cells[order[i]]
            total = 0.0
            while i < used and cells[order[i]] == cell:
                total += sums[order[i]]
                i += 1
            counts[cell] += 1
            if top > 0 and total > largest[cell, top - 1]:
                slot = top - 1
                while slot > 0 and largest[cell, slot - 1] < total:
                    largest[cell, slot] = largest[cell, slot - 1]
                    slot -= 1
                largest[cell, slot] = total
    return counts, largest
