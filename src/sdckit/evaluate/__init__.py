"""Evaluation and reporting: plots, R-U maps, paper-experiment reproductions."""
