"""The short path from a data frame to a release: :func:`protect` (``sdckit.protect``).

``sdckit.protect(frame, method="local-suppression", k=3, quasi_identifiers=["gender", "birth_year"])``
reads a pandas or polars DataFrame or a pyarrow Table with the roles given inline (or a configuration),
runs one registered method with its parameters as keywords and returns its release, whose
``to_pandas()`` / ``to_polars()`` give the protected frame. :func:`with_roles` is the inline shortcut
itself, shared with the command line's ``--qi``, ``--sensitive`` and ``--weight``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sdckit.config import _SOURCE_KEY, _WEIGHTS_KEY, Config, load_config, parse_config
from sdckit.errors import ConfigError, InputError
from sdckit.table import Attribute, Kind, Role

#: How messages name the inline roles in Python (the command line spells them --qi, --sensitive, --weight).
PYTHON_SPELLING = {"quasi_identifiers": "quasi_identifiers", "sensitive": "sensitive", "weight": "weight"}


def protect(
    data: Any,
    method: str | None = None,
    *,
    quasi_identifiers: Sequence[str] | str | None = None,
    sensitive: Sequence[str] | str | None = None,
    weight: str | None = None,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    seed: int | None = None,
    steps: Sequence[Mapping[str, Any]] | None = None,
    **parameters: Any,
) -> Any:
    """Protect a data frame with one anonymization method and return its release.

    Parameters
    ----------
    data : pandas.DataFrame, polars.DataFrame, pyarrow.Table or path
        The microdata (a path is read as ``sdckit`` reads a CSV or Parquet file).
    method : str
        A registered method (``sdckit.anonymize.METHODS.names()``): ``"local-suppression"``,
        ``"generalize"``, ``"mondrian"``, ...
    quasi_identifiers, sensitive : list of column names, optional
        The roles, given inline instead of a configuration (sdcMicro's ``keyVars``); a column they do
        not name keeps the role the configuration gives it, or none (it passes through unchanged).
        Kinds are taken from the data: numeric for a numeric column, categorical otherwise.
    weight : str, optional
        The column of sampling weights.
    config : Config, path of a YAML configuration, or a mapping, optional
        The configuration (hierarchies, weights, risk settings). With inline roles as well, each role
        given inline replaces that role's attributes of the configuration: ``quasi_identifiers`` is
        then the whole set of quasi-identifiers (an attribute the configuration makes a
        quasi-identifier and the list leaves out becomes insensitive, keeping its description).
    seed : int, optional
        The seed of a randomized method (an error for a method that takes none).
    steps : list of mappings, optional
        Instead of ``method``: a chain of steps (``[{"method": "generalize", "k": 5}, ...]``), run by
        :func:`sdckit.recipes.protect`, whose :class:`~sdckit.recipes.Protection` is returned.
    **parameters
        The method's parameters (``k=3``, ``suppression_limit=0.05``), as its parameters object names
        them (the command line's options with ``_`` for ``-``).

    Returns
    -------
    Release
        What :func:`sdckit.anonymize.run_method` returns: ``to_pandas()`` and ``to_polars()`` give the
        released frame (identifiers dropped, the other columns in their order); printed, a short
        summary. Slicing returns its :class:`~sdckit.anonymize.slicing.SlicedRelease`.

    Raises
    ------
    ConfigError
        An unknown method, a keyword that is not one of the method's parameters (the message lists
        them), a bad value, a role naming a column the data does not have.
    InputError
        Data that is not a frame, a table or a readable file.

    Examples
    --------
    >>> release = sdckit.protect(frame, method="local-suppression", k=3,
    ...                          quasi_identifiers=["gender", "birth_year", "ethnicity"])
    >>> release.to_pandas()
    """
    settings = with_roles(
        _configuration(config),
        quasi_identifiers=_names(quasi_identifiers, "quasi_identifiers"),
        sensitive=_names(sensitive, "sensitive"),
        weight=weight,
    )
    if steps is not None:
        given = [name for name, value in (("method", method), ("seed", seed)) if value is not None]
        given += list(parameters)
        if given:
            raise ConfigError(
                f"protect: steps= carries the methods and their parameters; {', '.join(given)} cannot be "
                "given with it"
            )
        from sdckit.recipes import protect as run_steps

        return run_steps(settings.read(_frame(data)), list(steps), config=settings)
    spec = _method(method)
    values = _parameters(spec, parameters, seed)
    table = settings.read(_frame(data))
    from sdckit.anonymize.base import Context, run_method

    return run_method(spec, table, values, Context(config=settings))


def with_roles(
    config: Config | None,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: Sequence[str] | None = None,
    weight: str | None = None,
    spelling: Mapping[str, str] = PYTHON_SPELLING,
) -> Config:
    """``config`` (None: no configuration) with the roles given inline.

    ``quasi_identifiers`` (``sensitive``), when given, is the whole set of quasi-identifiers
    (sensitive attributes): a named attribute the configuration describes keeps its description with
    that role; one it does not describe is added with its kind inferred from the data, as the
    configuration reader does for an attribute without ``kind``; an attribute the configuration gives
    that role and the list leaves out becomes insensitive. ``weight`` names the sampling-weights column
    (``data.weights``). ``spelling`` is how messages name each of the three (``--qi`` on the command
    line): a name that is not a column is reported under it, with the data file.

    A configuration file changed by inline roles no longer describes the run as written: the result
    has no ``path`` (so a recipe records no configuration), its hierarchy files named by absolute path.
    """
    base = config if config is not None else Config()
    if quasi_identifiers is None and sensitive is None and weight is None:
        return base
    lists = {"quasi_identifiers": quasi_identifiers, "sensitive": sensitive}
    for key, names in lists.items():
        if names is None:
            continue
        if not names:
            raise ConfigError(f"{spelling[key]} must name at least one column")
        repeated = sorted({name for name in names if list(names).count(name) > 1})
        if repeated:
            raise ConfigError(f"{spelling[key]} names '{repeated[0]}' twice")
    if quasi_identifiers is not None and sensitive is not None:
        both = [name for name in quasi_identifiers if name in sensitive]
        if both:
            raise ConfigError(
                f"'{both[0]}' is named by both {spelling['quasi_identifiers']} and {spelling['sensitive']}: "
                "an attribute is a quasi-identifier or sensitive, not both"
            )
    if weight is not None and (not isinstance(weight, str) or not weight):
        raise ConfigError(f"{spelling['weight']} must be the name of a column, got {weight!r}")
    roles: dict[str, Role] = {}
    for key, role in (("quasi_identifiers", Role.QUASI_IDENTIFIER), ("sensitive", Role.SENSITIVE)):
        names = lists[key]
        if names is None:
            continue
        # The list replaces that role: an attribute the configuration gives it and the list leaves out
        # loses it (insensitive), so that the list alone says which attributes have it.
        roles |= {a.name: Role.INSENSITIVE for a in base.attributes if a.role is role and a.name not in names}
        roles |= dict.fromkeys(names, role)
    described = {attribute.name for attribute in base.attributes}
    attributes = [
        replace(attribute, role=roles[attribute.name]) if attribute.name in roles else attribute
        for attribute in base.attributes
    ]
    locations = dict(base.locations)
    inferred = set(base.inferred_kinds)
    for key in lists:
        for name in lists[key] or ():
            if name in described:
                continue
            # The kind is a placeholder until the data is seen, as for an attribute without kind.
            attributes.append(Attribute(name=name, role=roles[name], kind=Kind.CATEGORICAL))
            inferred.add(name)
            locations[name] = spelling[key]
            described.add(name)
    data = base.data
    if weight is not None:
        data = replace(data, weights=weight)
        locations[_WEIGHTS_KEY] = spelling["weight"]
    path = base.path
    if config is None:  # messages about the configuration itself name what stands for it
        inline = {**lists, "weight": weight}
        locations[_SOURCE_KEY] = spelling[next(key for key, value in inline.items() if value is not None)]
    elif path is not None:
        # The file no longer says how the data is read, so the result has no path: a recipe records a
        # configuration by its path and text (sdckit.recipes.config_record), and must not record one
        # whose roles were not those of the run. Hierarchy files named relative to it become absolute;
        # messages still name the file.
        folder = Path(path).parent
        attributes = [
            replace(attribute, hierarchy=str(folder / attribute.hierarchy))
            if isinstance(attribute.hierarchy, str) and not Path(attribute.hierarchy).is_absolute()
            else attribute
            for attribute in attributes
        ]
        locations[_SOURCE_KEY] = path
        path = None
    return replace(
        base,
        attributes=tuple(attributes),
        data=data,
        inferred_kinds=frozenset(inferred),
        locations=locations,
        path=path,
    )


def _configuration(config: Config | str | Path | Mapping[str, Any] | None) -> Config | None:
    """A Config from what ``config=`` accepts: a Config, a path of a YAML file, a mapping."""
    if config is None or isinstance(config, Config):
        return config
    if isinstance(config, str | Path):
        return load_config(config)
    if isinstance(config, Mapping):
        return parse_config(config, source="config")
    raise ConfigError(
        f"config must be a Config, the path of a YAML configuration or a mapping, got {type(config).__name__}"
    )


def _names(names: Sequence[str] | str | None, keyword: str) -> list[str] | None:
    """A list of column names from a sequence of them, or from one name."""
    if names is None:
        return None
    if isinstance(names, str):
        return [names]
    if not isinstance(names, Sequence) or not all(isinstance(name, str) for name in names):
        raise ConfigError(f"{keyword} must be a list of column names, got {names!r}")
    return list(names)


def _frame(data: Any) -> Any:
    """What :meth:`Config.read` reads: a path, a polars or pandas DataFrame (a pyarrow Table or record
    batch becomes a polars DataFrame, its types kept)."""
    if isinstance(data, str | Path):
        return data
    module = type(data).__module__
    if module.startswith("pyarrow"):
        import polars as pl

        return pl.from_arrow(data)
    if module.startswith(("polars", "pandas")):
        return data
    raise InputError(
        "data must be a pandas or polars DataFrame, a pyarrow Table or the path of a CSV or Parquet "
        f"file, got {type(data).__name__}"
    )


def _method(method: str | None) -> Any:
    from sdckit.anonymize import METHODS

    if method is None:
        raise ConfigError(f"protect: method is required, one of {', '.join(METHODS.names())}")
    if method not in METHODS:
        raise ConfigError(f"method: {METHODS.unknown_message(method)}")
    return METHODS.get(method)


def _parameters(spec: Any, parameters: Mapping[str, Any], seed: int | None) -> Any:
    """The method's parameters object; an unknown keyword is refused with the method's parameters."""
    import difflib

    fields = list(spec.params.model_fields)
    unknown = [name for name in parameters if name not in fields]
    if unknown:
        close = difflib.get_close_matches(unknown[0], fields, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        are = "is not a parameter" if len(unknown) == 1 else "are not parameters"
        raise ConfigError(
            f"{', '.join(unknown)} {are} of {spec.name}{hint} (its parameters: {', '.join(fields)}; "
            "the roles: quasi_identifiers, sensitive, weight, config)"
        )
    values = dict(parameters)
    if seed is not None:
        if "seed" not in fields:
            raise ConfigError(f"seed: {spec.name} takes no seed (it is not randomized)")
        values["seed"] = seed
    return spec.params.parse(values, method=spec.name)


__all__ = ["protect", "with_roles"]
