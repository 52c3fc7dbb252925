"""Evaluation and reporting: measure an original and its releases, R-U maps and scores, HTML
reports, plots (the papers' experiments are in :mod:`sdckit.experiments`)."""

from sdckit.evaluate.evaluation import Evaluation, Measured, evaluate
from sdckit.evaluate.rumap import RUPoint, pareto_front, ru_score

__all__ = ["Evaluation", "Measured", "RUPoint", "evaluate", "pareto_front", "ru_score"]
