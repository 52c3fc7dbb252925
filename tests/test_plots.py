"""Risk histograms: written atomically, in the format the extension names."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from sdckit.errors import ConfigError
from sdckit.evaluate import plots
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


def test_all_zero_risks_still_plot(tmp_path, monkeypatch):
    drawn = []
    save = plots.save_figure

    def keep(figure, path, dpi=None):
        axes = figure.axes[0]
        drawn.append(([text.get_text() for text in axes.texts], axes.get_title(), len(axes.patches)))
        save(figure, path, dpi=dpi)

    monkeypatch.setattr(plots, "save_figure", keep)
    risk_histogram(np.zeros(5), tmp_path / "zero.png")
    # no bar (a log axis cannot place risk 0): the figure says so in words instead
    assert drawn == [(["every record has risk 0"], "Record disclosure risk D(r)", 0)]
    png = (tmp_path / "zero.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    # 8 x 4.8 inches at 110 dpi, as risk_histogram draws it
    assert struct.unpack(">II", png[16:24]) == (880, 528)


def test_unknown_format_is_refused_before_plotting(tmp_path):
    with pytest.raises(ConfigError, match="h.bmp"):
        risk_histogram(np.ones(3), tmp_path / "h.bmp")
    assert list(tmp_path.iterdir()) == []
