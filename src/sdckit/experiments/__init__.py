"""Reproductions of the experiments of the papers sdckit implements, one module per paper.

* :mod:`sdckit.experiments.targeted_suppression`: Section 4 of Orooji & Knapp (2019), "Improving
  suppression to reduce disclosure risk and enhance data utility": risk-targeted value suppression
  against k-anonymity, l-diversity and t-closeness releases, by NCP (the paper's Figure 3) and by the
  records above the risk threshold before and after (its Table 2, Figure 2).
* :mod:`sdckit.experiments.slicing`: Section 3 of Dhaigude & Kumar's improved slicing against slicing
  (Li et al., 2012): Figure 2 (average correlation inside the released columns), which l each
  configuration satisfies, and the time of the two tuple partitionings; and a sensitivity study of
  which correlation measure, averaging, sensitive-column size and reading of tuple matching reproduce
  the paper.
* :mod:`sdckit.experiments.quasi_sensitive`: Section 3 of Shi, Xiong & Fung (2010), "Anonymizing data
  with quasi-sensitive attribute values": Figures 5 and 6 on Adult's quasi-identifiers with
  synthesized terms and knowledge.
* :mod:`sdckit.experiments.masking`: the R-U comparison of the masking methods (MDAV, correlated
  noise, rank swapping, PRAM, synthetic data) on the CASC data by information loss and distance-based
  record linkage, the SDC tutorial's central picture (Domingo-Ferrer & Torra, 2001).

Shared by them: :mod:`sdckit.experiments.data` (where the data is found and how it is loaded: the
only place in sdckit that looks for a data directory) and :mod:`sdckit.experiments.charts` (the
figures and the markdown tables). The algorithms they run live in :mod:`sdckit.anonymize` and never
look for data themselves. Each paper module has the experiment function, ``write_*`` (tables and
figures into a directory) and ``summary`` (the figures of ``summary.json``).
"""

from __future__ import annotations

from collections.abc import Callable

#: Called by the experiments with one line of news at each stage.
Say = Callable[[str], None]
