"""Evaluation and reporting: plots, R-U maps (the papers' experiments are in :mod:`sdckit.experiments`)."""
