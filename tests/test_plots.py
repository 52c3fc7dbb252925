"""Risk histograms: written atomically, in the format the extension names."""

from __future__ import annotations

import numpy as np
import pytest

from sdckit.errors import ConfigError
from sdckit.evaluate.plots import risk_histogram


def test_overlaid_histogram_png_and_svg(tmp_path):
    rng = np.random.default_rng(0)
    before = np.concatenate([np.zeros(10), rng.lognormal(-3, 2, 1000)])
    after = before / 10
    risk_histogram({"before": before, "after": after}, tmp_path / "h.png", threshold=0.01)
    risk_histogram(before, tmp_path / "h.svg")
    assert (tmp_path / "h.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "h.svg").read_bytes()[:500]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.png", "h.svg"]  # no temporary left


def test_all_zero_risks_still_plot(tmp_path):
    risk_histogram(np.zeros(5), tmp_path / "zero.png")
    assert (tmp_path / "zero.png").exists()


def test_unknown_format_is_refused_before_plotting(tmp_path):
    with pytest.raises(ConfigError, match="h.bmp"):
        risk_histogram(np.ones(3), tmp_path / "h.bmp")
    assert list(tmp_path.iterdir()) == []
