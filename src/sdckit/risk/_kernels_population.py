"""Compiled kernel of the SNB population-uniqueness estimator: the Newton-Raphson solve of its two
moment equations (:func:`sdckit.risk._risk_estimators.snb_parameters`).

The Python solver evaluates the equations five times a step (the point and the central differences of
the Jacobian) and runs up to 10,000 steps when no root is found: 0.05-0.13 s of CPU a node on Adult,
most of a population-uniqueness search under SNB. This kernel runs the same steps with the same
arithmetic (the same operations in the same order, IEEE doubles and the C library's ``pow``), so it
gives the same root; the seeded random start points are drawn by numpy beforehand and passed in.
``error_model="numpy"``: a division by 0 gives inf or nan, as numpy's (and Java's) doubles, where
Python's floats would raise.
"""

from __future__ import annotations

import math

import numpy as np

from sdckit._numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def _snb_function(k: float, f: float, c1: float, c2: float, a: float, b: float) -> tuple[float, float]:
    """E[c_1] - c_1 and E[c_2] - c_2 under the shifted negative binomial model (alpha a, beta b)."""
    d = (1 - f) * (1 - b)
    first = k * f * (b / (1 - d)) ** a * (a * d / (1 - d) + 1) - c1
    second = k * a * b**a * f * f * (1 - b) / 2 * (1 - d) ** (-(a + 2)) * (2 - (1 - a) * d) - c2
    return first, second


@njit(cache=True, nogil=True, error_model="numpy")
def snb_newton(
    k: float,
    f: float,
    c1: float,
    c2: float,
    starts: np.ndarray,
    randoms: np.ndarray,
    accuracy: float,
    per_try: int,
    total_steps: int,
) -> tuple[float, float]:
    """Newton-Raphson on the SNB equations from (1, 1), then from each row of ``starts`` (ARX's
    prepared start values), then from (randoms[2i], randoms[2i+1]) (points in [0, 1)): as
    :func:`sdckit.risk._risk_estimators._newton` with the central-difference Jacobian of
    ``_difference_jacobian``. NaN when no root is found within ``total_steps`` steps."""
    total = 0
    tries = 0
    n_starts = starts.shape[0]
    while total <= total_steps:
        if tries == 0:
            x, y = 1.0, 1.0
        elif tries <= n_starts:
            x, y = starts[tries - 1, 0], starts[tries - 1, 1]
        else:
            index = 2 * (tries - n_starts - 1)
            if index + 1 >= randoms.shape[0]:
                return math.nan, math.nan
            x, y = randoms[index] * 1.0, randoms[index + 1] * 1.0
        tries += 1
        iterations = 0
        while True:
            total += 1
            f1, f2 = _snb_function(k, f, c1, c2, x, y)
            if abs(f1) <= accuracy and abs(f2) <= accuracy:
                return x, y
            hx = 1e-7 * max(1.0, abs(x))
            hy = 1e-7 * max(1.0, abs(y))
            fx1 = _snb_function(k, f, c1, c2, x + hx, y)
            fx0 = _snb_function(k, f, c1, c2, x - hx, y)
            fy1 = _snb_function(k, f, c1, c2, x, y + hy)
            fy0 = _snb_function(k, f, c1, c2, x, y - hy)
            m00 = (fx1[0] - fx0[0]) / (2 * hx)
            m01 = (fy1[0] - fy0[0]) / (2 * hy)
            m10 = (fx1[1] - fx0[1]) / (2 * hx)
            m11 = (fy1[1] - fy0[1]) / (2 * hy)
            determinant = m00 * m11 - m01 * m10
            dx = (m11 * f1 - m01 * f2) / determinant
            dy = (m00 * f2 - m10 * f1) / determinant
            x, y = x - dx, y - dy
            iterations += 1
            if not (math.isfinite(x) and math.isfinite(y)) or iterations > per_try:
                break
            if total > total_steps:
                return math.nan, math.nan
    return math.nan, math.nan
