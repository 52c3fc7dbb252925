"""What the query-server attacks share: their parameters, the adversary's view of a served dataset,
the targets, the HTTP queries, and the scoring of the guesses.

The adversary of a query server (``sdckit serve``) holds an analyst's key and knows the *public*
attributes of every record (the attributes the server does not declare confidential: the
quasi-identifiers, as the server's own threat model assumes, ``docs/serve.md``). A **target** is a
record whose combination of public values is unique, so a filter on them isolates it; the
adversary wants its confidential values. ORIGINAL gives the public attributes (the adversary's
background knowledge) and scores the guesses; the guesses come from the server's answers only.

One **trial** is one (target, confidential attribute) pair: a numeric attribute is learned when the
adversary's estimate lies within ``tolerance`` (relative) of the true value, a categorical one when
the adversary names the true category from the answers alone (an attack that cannot decide — an
answer refused, two candidates left — has not learned it; it never falls back to a guess). The
**baseline** guesses every target's value from the public marginal (the median of a numeric
attribute, the most frequent category), scored the same way.

The queries are real HTTP requests (:class:`sdckit.query.client.Client`); a refusal (403) ends the
trial without a guess, anything else the server rejects is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.attack.base import AttackParams, AttackResult, ServerTarget, wilson_rate
from sdckit.errors import ConfigError
from sdckit.params import Finite, spell
from sdckit.table import Table

#: A filter of the query language (``{"column", "op", "value"}``, ``{"and"|"or": [...]}``, ``{"not": f}``).
Filter = dict[str, Any]
#: The adversary's estimate of a target's value (None: not learned).
Guess = float | str | None


class ServerAttackParams(AttackParams):
    """Parameters every query-server attack takes."""

    dataset: Annotated[
        str | None,
        Field(
            min_length=1,
            description="The served dataset to attack (default: the only dataset the key reaches).",
        ),
    ] = None
    targets: Annotated[
        int,
        Field(ge=1, le=100_000, description="Records attacked, drawn among those isolated by public values."),
    ] = 20
    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Confidential attributes attacked, comma-separated (default: every confidential "
            "attribute the server declares, categorical ones with at most max_values categories).",
        ),
    ] = None
    tolerance: Annotated[
        Finite,
        Field(
            ge=0.0,
            lt=1.0,
            description="A numeric value counts as learned when the estimate is within this share of it.",
        ),
    ] = 0.001
    max_values: Annotated[
        int,
        Field(
            ge=2, le=1000, description="Largest number of categories of an attacked categorical attribute."
        ),
    ] = 10


def spelled(attack: str, name: str) -> str:
    return spell(f"{attack}.{name}", f"--set {attack}.{name}")


def applies_to_server(original: Any, release: Any, control: Any, params: ServerAttackParams) -> str | None:
    if not isinstance(release, ServerTarget):
        return "it attacks a running query server (--server URL --key K)"
    if not isinstance(original, Table):
        return "it needs the original microdata to score its guesses"
    return None


@dataclass
class View:
    """The adversary's view of one served dataset: its name, protection and description, the public
    and the attacked confidential attributes, the domain of each categorical one (its categories,
    most frequent first), and the original records with a row number ``_row``."""

    client: Any
    name: str
    protection: str
    description: dict[str, Any]
    public: list[str]
    attacked: list[str]
    numeric: dict[str, bool]
    domains: dict[str, list[Any]]
    data: pl.DataFrame

    def answer(self, aggregate: str, column: str | None, filters: list[Filter]) -> float | None:
        """The server's answer to one query as a number (an interval's midpoint; a dp answer's
        value), or None when it is refused. The adversary spends the smallest epsilon a dp server
        takes on each answer (``epsilon`` in the description's ``max_epsilon_per_query``, else 1)."""
        from sdckit.query.errors import Refused

        body: dict[str, Any] = {"aggregate": aggregate, "column": column, "filters": filters, "group_by": []}
        if self.protection == "dp":
            body["epsilon"] = float(self.description.get("max_epsilon_per_query") or 1.0)
        try:
            reply = self.client.query(self.name, **body)
        except Refused:
            return None
        if "value" in reply:
            return None if reply["value"] is None else float(reply["value"])
        if reply.get("lower") is None or reply.get("upper") is None:
            return None
        return 0.5 * (float(reply["lower"]) + float(reply["upper"]))

    def measure(self, attribute: str, filters: list[Filter], value: Any = None) -> float | None:
        """sum(attribute) over ``filters`` for a numeric attribute; count(filters ∧ attribute =
        value) for a categorical one."""
        if self.numeric[attribute]:
            return self.answer("sum", attribute, filters)
        return self.answer("count", None, [*filters, {"column": attribute, "op": "=", "value": value}])


def open_view(attack: str, original: Table, target: ServerTarget, params: ServerAttackParams) -> View:
    """Connect with the analyst's key, read the dataset's description, and match it to ORIGINAL."""
    from sdckit.query.client import Client

    client = Client(target.url, target.key)
    try:
        return _view(attack, original, client, params)
    except BaseException:
        client.close()
        raise


def _view(attack: str, original: Table, client: Any, params: ServerAttackParams) -> View:
    name = params.dataset
    if name is None:
        served = [entry["name"] for entry in client.datasets()]
        if len(served) != 1:
            raise ConfigError(
                f"{spelled(attack, 'dataset')}: the key reaches {len(served)} datasets "
                f"({', '.join(served) or 'none'}): name the one to attack"
            )
        name = served[0]
    from sdckit.query.errors import UnknownDataset

    try:
        description = client.dataset(name)
    except UnknownDataset as error:
        raise ConfigError(f"{spelled(attack, 'dataset')}: {error.message}") from None
    kinds = {entry["name"]: entry["kind"] for entry in description["attributes"]}
    missing = sorted(set(kinds) - set(original.data.columns))
    if missing:
        raise ConfigError(f"dataset {name} serves {', '.join(missing)}, which the original does not hold")
    declared = description.get("confidential")
    if declared is None:  # dp declares none: the configuration's sensitive attributes
        declared = [
            a.name
            for a in original.schema
            if a.name in kinds and a.role.value in ("sensitive", "quasi-sensitive")
        ]
    public = [column for column in kinds if column not in declared]
    numeric = {column: kinds[column] == "numeric" for column in declared}
    data = original.data.with_row_index("_row")
    domains = {
        column: data[column].drop_nulls().value_counts(sort=True)[column].to_list()
        for column in declared
        if not numeric[column]
    }
    if params.attributes is not None:
        attacked = [item.strip() for item in params.attributes.split(",") if item.strip()]
        for column in attacked:
            if column not in declared:
                raise ConfigError(
                    f"{spelled(attack, 'attributes')}: '{column}' is not a confidential attribute of "
                    f"dataset {name}; confidential: {', '.join(declared) or 'none'}"
                )
            if not numeric[column] and len(domains[column]) > params.max_values:
                raise ConfigError(
                    f"{spelled(attack, 'attributes')}: '{column}' has {len(domains[column])} categories, "
                    f"above {spelled(attack, 'max_values')} = {params.max_values}"
                )
    else:
        attacked = [c for c in declared if numeric[c] or len(domains[c]) <= params.max_values]
    if not attacked:
        raise ConfigError(f"dataset {name} declares no confidential attribute this attack can target")
    if not public:
        raise ConfigError(f"dataset {name} has no public attribute: no record can be isolated")
    return View(
        client, name, description["protection"], description, public, attacked, numeric, domains, data
    )


def isolating(view: View, row: dict[str, Any]) -> Filter:
    """The filter on public values that selects the record ``row`` alone."""
    return {"and": [{"column": column, "op": "=", "value": row[column]} for column in view.public]}


def draw_targets(view: View, count: int, seed: int, exclude: pl.Expr | None = None) -> pl.DataFrame:
    """Up to ``count`` records, drawn at random, whose public values are unique and present (and
    outside ``exclude``)."""
    data = view.data.drop_nulls(view.public)
    unique = data.filter(pl.len().over(view.public) == 1)
    if exclude is not None:
        unique = unique.filter(~exclude)
    if unique.height == 0:
        raise ConfigError(
            f"dataset {view.name}: no record is isolated by its public values; nothing to attack"
        )
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(unique.height, size=min(count, unique.height), replace=False))
    return unique[chosen]


def categorical_guess(differences: dict[Any, float | None]) -> Guess:
    """The category whose indicator the answers put at 1 while every other is at 0 (within 0.5);
    None when an answer is missing or the answers do not single one out."""
    if any(value is None for value in differences.values()):
        return None
    ones = [key for key, value in differences.items() if abs(float(value) - 1.0) < 0.5]  # type: ignore[arg-type]
    zeros = [key for key, value in differences.items() if abs(float(value)) < 0.5]  # type: ignore[arg-type]
    if len(ones) == 1 and len(ones) + len(zeros) == len(differences):
        return ones[0]
    return None


def score(
    attack: str,
    assumes: str,
    view: View,
    targets: pl.DataFrame,
    guess: Callable[[dict[str, Any], str], Guess],
    params: ServerAttackParams,
    details: dict[str, Any] | None = None,
) -> AttackResult:
    """Run ``guess(target, attribute)`` for every trial and count the learned values and the
    baseline's."""
    learned = guessed = trials = 0
    by_attribute: dict[str, int] = {}
    for row in targets.iter_rows(named=True):
        for attribute in view.attacked:
            truth = row[attribute]
            if truth is None:
                continue
            trials += 1
            estimate = guess(row, attribute)
            hit = _right(estimate, truth, view.numeric[attribute], params.tolerance)
            learned += hit
            by_attribute[attribute] = by_attribute.get(attribute, 0) + hit
            guessed += _right(_prior(view, attribute), truth, view.numeric[attribute], params.tolerance)
    if trials == 0:
        raise ConfigError(f"dataset {view.name}: the targets' attacked values are all missing")
    return AttackResult(
        name=attack,
        assumes=assumes,
        attack=wilson_rate(learned, trials, params.confidence),
        baseline=wilson_rate(guessed, trials, params.confidence),
        max_risk=params.max_risk,
        details={
            "dataset": view.name,
            "protection": view.protection,
            "targets": targets.height,
            "attributes": list(view.attacked),
            "learned_by_attribute": by_attribute,
            **(details or {}),
        },
    )


def _prior(view: View, attribute: str) -> Guess:
    column = view.data[attribute].drop_nulls()
    if view.numeric[attribute]:
        return float(column.cast(pl.Float64).median())  # type: ignore[arg-type]
    return view.domains[attribute][0] if view.domains[attribute] else None


def _right(estimate: Guess, truth: Any, numeric: bool, tolerance: float) -> bool:
    if estimate is None:
        return False
    if not numeric:
        return str(estimate) == str(truth)
    value = float(truth)
    return abs(float(estimate) - value) <= tolerance * abs(value) + 1e-6 * max(1.0, abs(value))
