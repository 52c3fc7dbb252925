"""Words for the figures of the measures, for the pages people read (the HTML report, the workbench).

A measure's summary names its figures with keys (``journalist.population``,
``distance.kd_tree_records``): exact, stable and what the JSON, ``--set`` and the R-U axes use, but
internal. :func:`figure_label` gives the words a reader needs; the pages keep the key in a tooltip
(``title=``) so that it can still be looked up. Each part of a dotted key is worded on its own, so a
new figure of a known family reads well; a part without words here is shown as it is (most often an
attribute's name, which must stay as the data spell it).
"""

from __future__ import annotations

#: The words of each part of a figure's key (the parts of the dotted names of the summaries).
PARTS: dict[str, str] = {
    # measures
    "reidentification": "re-identification",
    "linkage": "record linkage",
    "combined": "combined record risk",
    "suda": "SUDA",
    "attribute-disclosure": "attribute disclosure",
    "numeric": "numeric information loss",
    "tables": "frequency tables",
    "propensity": "propensity score",
    "classifier": "classifier",
    # re-identification (sdcMicro's measures)
    "records": "records",
    "weighted": "weighted by sampling weights",
    "missing": "missing values treated as",
    "method": "method",
    "qual": "quality adjustment",
    "expected_reidentifications": "expected re-identifications",
    "global_risk": "global risk (expected share re-identified)",
    "global_risk_percent": "global risk, percent",
    "sample_uniques": "records unique in the sample",
    "sample_uniques_percent": "records unique in the sample, percent",
    "individual_risk": "individual risk",
    "min": "minimum",
    "p25": "25th percentile",
    "median": "median",
    "mean": "mean",
    "p75": "75th percentile",
    "max": "maximum",
    "higher_risk_records": "records of higher risk",
    "clipped_records": "records with risk clipped to 1",
    "prosecutor": "prosecutor attacker",
    "journalist": "journalist attacker",
    "marketer": "marketer attacker",
    "average": "average risk",
    "highest": "highest risk",
    "records_at_risk": "records above the threshold",
    "threshold": "threshold",
    "population": "population size assumed",
    # record linkage
    "distance": "distance-based linkage",
    "assignment": "assignment of links",
    "linked": "links made",
    "linked_records": "records linked to their own original",
    "linked_share": "share of records linked to their own original",
    "linked_percent": "records linked to their own original, percent",
    "mean_rank": "mean rank of the true match",
    "median_rank": "median rank of the true match",
    "kd_tree_records": "records searched with a k-d tree",
    # numeric information loss
    "left_out_records": "records left out",
    "released_suppressed": "suppressed released values",
    "released_ranges": "released ranges",
    "factors": "factors",
    "il1": "IL1 (mean scaled absolute distance)",
    "il1s": "IL1s (sum)",
    "eigen": "eigenvalue loss",
    "il_score": "IL score",
    # frequency tables
    "drawn_cells": "generalized cells drawn back to covered values",
    "total_variation": "total variation distance",
    "hellinger": "Hellinger distance",
    "one_way_mean": "one-way tables, mean",
    "one_way_max": "one-way tables, maximum",
    "two_way_mean": "two-way tables, mean",
    "two_way_max": "two-way tables, maximum",
    # propensity and classifier
    "model": "model",
    "original_records": "original records",
    "release_records": "released records",
    "features": "features of the model",
    "c": "share of released records in the stacked file",
    "propensity_utility": "propensity utility U_p",
    "propensity_loss": "propensity loss (0: indistinguishable, 1: always told apart)",
    "converged": "fit converged",
    "target": "predicted attribute",
    "accuracy_release": "accuracy trained on the release",
    "accuracy_original": "accuracy trained on the original",
    "accuracy_loss": "accuracy lost",
    "majority_rate": "share of the majority class",
    "test_records": "test records",
    "training_records_original": "training records of the original",
    "training_records_release": "training records of the release",
    "aligned": "records aligned with the original",
    # combined risk
    "mean_risk": "mean risk",
    "above_threshold": "records above the threshold",
    "known_sets": "known sets",
}


def figure_label(key: str) -> str:
    """The words for a figure's dotted key: each part worded (:data:`PARTS`) and joined by ": "
    (``journalist.population`` -> "journalist attacker: population size assumed")."""
    return ": ".join(PARTS.get(part, part) for part in key.split("."))


#: What the headline figure of each measure that can be an R-U axis says, for the report's reader.
AXES: dict[str, str] = {
    "linkage": "the share of released records that distance-based record linkage links to their own "
    "original record (0: none, 1: every one)",
    "reidentification": "the global risk of sdcMicro: the expected share of records re-identified, "
    "from each record's individual risk",
    "combined": "the mean combined record risk D(r) of Orooji & Knapp (2019)",
    "suda": "the mean DIS-SUDA score of the records",
    "attribute-disclosure": "the share of sensitive values an adversary infers correctly",
    "tables": "the mean, over every pair of attributes, of the total variation distance between the "
    "original's and the release's two-way frequency tables (0: the same tables, 1: nothing in common). "
    "Generalized and suppressed values are first drawn back among the original values they cover, so "
    "an interval or a '*' counts as the values it stands for, not as a new category",
    "propensity": "U_p / (c(1 − c)) of a logistic model that tells the release from the original "
    "(0: it cannot, 1: it always can); generalized values are drawn back among the original values "
    "they cover first. On a small file with many categories the model overfits and reads high even "
    "for a mild generalization",
    "numeric": "IL1, the mean absolute difference between original and released numbers scaled by "
    "each attribute's standard deviation",
    "classifier": "the accuracy lost by a classifier of the sensitive attribute trained on the release "
    "instead of the original",
}


def axis_explanation(measure: str) -> str:
    """What the R-U axis of ``measure`` measures (its headline figure), in words."""
    return AXES.get(measure, f"the headline figure of the {figure_label(measure)} measure")
