"""Independent brute-force oracles: pairwise matching and full 2^m enumeration in plain Python."""

from __future__ import annotations

import itertools
import math

import polars as pl


def matches(a, b, missing: str) -> bool:
    """Do two values match under the treatment of missing values?"""
    if missing == "wildcard" and (a is None or b is None):
        return True
    return a == b


def brute_frequencies(rows, attributes, missing, weights=None):
    """Per record, the number (or weight sum) of records matching it on every attribute."""
    result = []
    for r in rows:
        total = 0.0
        for s_index, s in enumerate(rows):
            if all(matches(r[a], s[a], missing) for a in attributes):
                total += 1.0 if weights is None else weights[s_index]
        result.append(total)
    return result


def brute_risk(rows, probabilities, consequence_weights, alpha, epsilon, missing, weights=None):
    """D(r) over every split of the attributes whose PK(KS) > epsilon (the empty set always).

    ``probabilities``: attribute -> PK; ``consequence_weights``: attribute -> function(value) giving
    W(A) * W(v). Returns (risks, per-record dict known_set -> contribution). A record of weight 0
    stands for nobody: its risk and contributions are 0.
    """
    names = list(probabilities)
    risks = [0.0] * len(rows)
    contributions = [dict() for _ in rows]
    for size in range(len(names) + 1):
        for known in itertools.combinations(names, size):
            pk = math.prod(probabilities[a] for a in known)
            if known and not pk > epsilon:
                continue
            counts = brute_frequencies(rows, known, missing, weights)
            for i, r in enumerate(rows):
                if weights is not None and weights[i] == 0:
                    risks[i] = 0.0  # stands for nobody
                    contributions[i][known] = 0.0
                    continue
                consequence = sum(consequence_weights[a](r[a]) for a in names if a not in known)
                value = pk / counts[i] * alpha * consequence
                risks[i] += value
                contributions[i][known] = value
    return risks, contributions


def query_filter(node: dict) -> pl.Expr:
    """A query-language filter (a JSON node) as a polars expression on the true data, written apart
    from the query engine: a comparison with a missing value is false, ``not`` is the complement."""
    if "and" in node:
        return pl.all_horizontal([query_filter(child) for child in node["and"]])
    if "or" in node:
        return pl.any_horizontal([query_filter(child) for child in node["or"]])
    if "not" in node:
        return ~query_filter(node["not"])
    column, value = pl.col(node["column"]), node["value"]
    comparison = {
        "=": lambda: column == value,
        "!=": lambda: column != value,
        "<": lambda: column < value,
        "<=": lambda: column <= value,
        ">": lambda: column > value,
        ">=": lambda: column >= value,
        "in": lambda: pl.any_horizontal([column == item for item in value]),
    }[node["op"]]()
    return comparison.fill_null(False)


def pruned_equals_exhaustive(table, models, **arguments):
    """Run the full-domain search as it prunes and with every node evaluated (``exhaustive=True``),
    assert that both find the same node, metric value and suppressed records, and return the two
    releases; None when both say that no node satisfies the models."""
    import pytest

    from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization
    from sdckit.errors import ConfigError

    try:
        fast = full_domain_generalization(table, models, **arguments)
    except ConfigError as error:
        assert "cannot be satisfied" in str(error)
        with pytest.raises(ConfigError, match="cannot be satisfied"):
            full_domain_generalization(table, models, exhaustive=True, **arguments)
        return None
    slow = full_domain_generalization(table, models, exhaustive=True, **arguments)
    assert fast.levels == slow.levels
    value = [release.figures_as(GeneralizeFigures).search["metric_value"] for release in (fast, slow)]
    assert value[0] == value[1]
    assert fast.n_suppressed == slow.n_suppressed
    return fast, slow
