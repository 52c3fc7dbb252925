"""Parameter objects: every method's parameters, typed, bounded, documented and validated up front.

A method's parameters are a frozen pydantic model derived from :class:`MethodParams` (``extra`` keys
forbidden), one field per parameter with its type, bounds, literature default and a one-line
description. That one declaration feeds the Python API, the command line (one option per field,
``max_rounds`` -> ``--max-rounds``), recipes (the dumped object is the step of a recipe) and the
documentation. Nothing else validates the same value.

:meth:`MethodParams.parse` turns pydantic's errors into one :class:`~sdckit.errors.ConfigError` that
names every bad parameter the way the caller spells it (the field name in Python and recipes, the
option on the command line).
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import math
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from sdckit.errors import ConfigError, shown

#: A finite real number (NaN and infinities are refused, as everywhere in sdckit).
Finite = Annotated[float, Field(allow_inf_nan=False)]
#: A whole number; True/False and 2.5 are refused, not read as 1 or 2.
Whole = Annotated[int, Strict()]


def option_name(name: str, field: Any | None = None) -> str:
    """The command-line option of a parameter: ``-k`` for one letter, ``--max-rounds`` otherwise,
    unless the field declares its own (``json_schema_extra={"option": "--c"}``)."""
    extra = getattr(field, "json_schema_extra", None) or {}
    if "option" in extra:
        return str(extra["option"])
    return f"-{name}" if len(name) == 1 else f"--{name.replace('_', '-')}"


#: True while the command line runs a command: :func:`spell` then writes options, not names.
_ON_THE_COMMAND_LINE: contextvars.ContextVar[bool] = contextvars.ContextVar("sdckit_options", default=False)


def spell(name: str, option: str | None = None) -> str:
    """A parameter as the caller writes it, for messages: its name (``max_rounds``) in Python and
    recipes, its option (``--max-rounds``, or ``option`` when the command line calls it otherwise,
    e.g. ``--set`` for ``settings``) while the command line runs (:func:`options_spelled`). Library
    messages name parameters only through this, never a ``--flag`` (``tests/test_messages.py``)."""
    if not _ON_THE_COMMAND_LINE.get():
        return name
    return option if option is not None else option_name(name)


@contextlib.contextmanager
def options_spelled() -> Iterator[None]:
    """Within this block :func:`spell` writes command-line options (the command line's error handler
    opens it around every command)."""
    token = _ON_THE_COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _ON_THE_COMMAND_LINE.reset(token)


def names_list(value: Any) -> Any:
    """``"a, b,c"`` -> ``["a", "b", "c"]``: the command line's comma-separated lists of attribute
    names, read by the parameters objects before they validate (any other value passes as it is)."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    return value


def unwrap_annotation(annotation: Any) -> tuple[Any, list[Any]]:
    """The base type of a field's annotation (Optional and Annotated removed) and its Literal choices,
    as the command line and the workbench's forms read a parameters object."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    arguments = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return unwrap_annotation(arguments[0])
    if typing.get_origin(annotation) is Literal:
        return str, list(arguments)
    return annotation, []


class MethodParams(BaseModel):
    """Base of every method's parameters: frozen, unknown keys refused, defaults validated."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    @classmethod
    def parse(
        cls,
        values: Mapping[str, Any],
        *,
        where: str = "",
        spell: Callable[[str], str] | None = None,
        method: str | None = None,
    ) -> Self:
        """Validate ``values`` into the parameters object; one ``ConfigError`` listing every problem.

        ``where`` prefixes the message (a file, a recipe step); ``spell`` says how a parameter is
        written to the user (default: its name); ``method`` names the method in the message about a
        parameter it does not take.
        """
        spell = spell or (lambda name: name)
        try:
            # A numpy scalar from a Python caller (np.int64(5)) counts as the number it holds.
            return cls(**{name: _python_number(value) for name, value in values.items()})
        except ValidationError as error:
            problems = [_problem(cls, item, spell, method) for item in error.errors()]
        prefix = f"{where}: " if where else ""
        raise ConfigError(prefix + "; ".join(dict.fromkeys(problems)))

    def to_recipe(self) -> dict[str, Any]:
        """Every parameter, defaults included, as JSON-ready values (paths as text)."""
        return self.model_dump(mode="json")

    @classmethod
    def field_names(cls) -> list[str]:
        return list(cls.model_fields)


def _problem(
    cls: type[MethodParams], item: Mapping[str, Any], spell: Callable[[str], str], method: str | None
) -> str:
    location = [str(part) for part in item.get("loc", ())]
    name = location[0] if location else ""
    if item.get("type") == "extra_forbidden":
        close = difflib.get_close_matches(name, cls.field_names(), n=1)
        hint = f"; did you mean {spell(close[0])}?" if close else ""
        owner = f"{method} " if method else ""
        return f"{spell(name)} is not a parameter of {owner or 'this method'}".rstrip() + hint
    if not name:  # a rule between parameters: its message names them as {name}
        names = {field: spell(field) for field in cls.field_names()}
        return f"{method or 'the method'} {_message(item).format(**names)}"
    return _field_problem(location, item, spell)


def _message(item: Mapping[str, Any]) -> str:
    message = str(item.get("msg", "is invalid"))
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _field_problem(location: list[str], item: Mapping[str, Any], spell: Callable[[str], str]) -> str:
    """One parameter's problem: ``<name> must be <allowed>, got <value>`` (the one message writer of
    the parameters objects and of the privacy models' arguments, :class:`Argument`)."""
    message = _message(item)
    label = spell(location[0])
    if item.get("type") == "missing":
        return f"{label} is required"
    if len(location) > 1:
        label += "[" + "][".join(location[1:]) + "]"
    message = message.split(", got ")[0]
    message = message.replace("Input should be", "must be").replace("Input should have", "must have")
    message = message[:1].lower() + message[1:]
    if not message.startswith("must"):
        return f"{label}: {message}"
    got = item.get("input")
    return f"{label} {message}, got {shown(got)}"


# Privacy models shared by the methods that search for a release satisfying them -------------------
#
# Each rule on a privacy model's parameter is declared once, here: its type (Whole, Finite) and its
# bounds (K_BOUNDS ...). A parameters object's field takes both
# (``Annotated[Whole | None, K_BOUNDS, Field(description=...)]``, the bounds at the field, where the
# workbench's forms read them) and a model object checks its argument against both
# (``Argument("k", Whole, K_BOUNDS)``), so that ``KAnonymity(0)``, ``k: 0`` in a recipe and ``-k 0`` on
# the command line are refused by one rule, in one wording.


def _python_number(value: Any) -> Any:
    """A numpy scalar as the Python number it holds (``np.int64(3)`` -> ``3``); anything else as is."""
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:  # not an array
        return value.item()
    return value


#: QS t-closeness's largest distance: the Euclidean distance between two point masses (Shi et al. 2010).
QS_MAX_DISTANCE = math.sqrt(2.0)


def _within_qs_distance(value: float) -> float:
    if value > QS_MAX_DISTANCE:  # worded as pydantic's bounds: "t must be in [0, 1.41421], got 2.0"
        bound = {"most": f"{QS_MAX_DISTANCE:g}"}
        raise PydanticCustomError("qs_distance", "Input should be in [0, {most}]", bound)
    return value


#: A QS t-closeness distance: a finite number at most QS_MAX_DISTANCE (with QS_T_BOUNDS, at least 0).
QSDistance = Annotated[Finite, AfterValidator(_within_qs_distance)]

#: k of k-anonymity (Whole): at least 1.
K_BOUNDS = Field(ge=1)
#: l of l-diversity, QS (c,l)-diversity and l-diverse slicing: at least 1 (Whole for distinct, recursive
#: and QS (c,l)-diversity, Finite for entropy l-diversity and slicing).
L_BOUNDS = Field(ge=1)
#: c of recursive (c,l)-diversity and QS (c,l)-diversity (Finite): positive.
C_BOUNDS = Field(gt=0)
#: t of t-closeness (Finite), an earth mover's distance: in [0, 1].
T_BOUNDS = Field(ge=0, le=1)
#: t of QS t-closeness (a QSDistance): at least 0.
QS_T_BOUNDS = Field(ge=0)
#: β of β-likeness (Finite): positive (as ARX's BasicBLikeness and EnhancedBLikeness).
BETA_BOUNDS = Field(gt=0)
#: δ of δ-disclosure privacy (Finite): positive.
DELTA_DISCLOSURE_BOUNDS = Field(gt=0)
#: Threshold of a risk-based model (average risk, sample / population uniqueness): in [0, 1], as ARX.
RISK_THRESHOLD_BOUNDS = Field(ge=0, le=1)
#: Highest risk of ARX's relaxed average risk: in (0, 1], as ARX's AverageReidentificationRisk.
HIGHEST_RISK_BOUNDS = Field(gt=0, le=1)
#: Sampling fraction of a population model (as ``risk reidentification``): in (0, 1].
SAMPLING_FRACTION_BOUNDS = Field(gt=0, le=1)
#: Population size of a population model: positive (at least the records, checked on the data).
POPULATION_SIZE_BOUNDS = Field(gt=0)
#: δmin and δmax of δ-presence (Finite): shares in [0, 1].
DELTA_PRESENCE_BOUNDS = Field(ge=0, le=1)
#: Significance level of estimated k-map (Finite): in [0, 1], as ARX's KMap.
SIGNIFICANCE_BOUNDS = Field(ge=0, le=1)

LVariant = Literal["distinct", "entropy", "recursive"]
TDistance = Literal["equal", "ordered", "hierarchical"]
BetaVariant = Literal["basic", "enhanced"]
KMapEstimator = Literal["poisson", "zero_truncated_poisson"]
UniquenessModel = Literal["pitman", "zayatz", "snb", "dankar"]
Attacker = Literal["prosecutor", "journalist", "marketer"]
L_VARIANTS: tuple[str, ...] = typing.get_args(LVariant)
T_DISTANCES: tuple[str, ...] = typing.get_args(TDistance)


class Argument:
    """A privacy model's argument, checked by a rule declared above (the type and bounds a parameters
    object's field takes) and worded by the parameters objects' message writer: one
    :class:`~sdckit.errors.ConfigError` naming the argument through :func:`spell` (its option,
    ``option`` if the command line calls it otherwise, while the command line runs).

    A numpy scalar is read as the Python number it holds (``KAnonymity(np.int64(3))``).
    ``Argument("k", Whole, K_BOUNDS)(0)`` raises "k must be greater than or equal to 1, got 0"."""

    def __init__(self, name: str, kind: Any, *constraints: Any, option: str | None = None) -> None:
        self.name = name
        self.option = option
        self._annotation: Any = Annotated[(kind, *constraints)] if constraints else kind
        self._adapter: TypeAdapter[Any] | None = None

    def __call__(self, value: Any) -> Any:
        if self._adapter is None:  # built on first use: importing the models stays cheap
            self._adapter = TypeAdapter(self._annotation)
        try:
            return self._adapter.validate_python(_python_number(value))
        except ValidationError as error:
            problems = [
                _field_problem(
                    [self.name, *(str(part) for part in item["loc"])],
                    item,
                    lambda name: spell(name, self.option),
                )
                for item in error.errors()
            ]
        raise ConfigError("; ".join(dict.fromkeys(problems)))


class PrivacyModelParams(MethodParams):
    """k-anonymity, l-diversity (distinct, entropy or recursive (c,l)) and t-closeness: the models a
    release must satisfy. l and t apply to every attribute with role sensitive."""

    k: Annotated[
        Whole | None, K_BOUNDS, Field(description="k of k-anonymity (Samarati & Sweeney, 1998).")
    ] = None
    l: Annotated[  # noqa: E741
        Finite | None, L_BOUNDS, Field(description="l of l-diversity (Machanavajjhala et al., 2007).")
    ] = None
    l_variant: Annotated[
        LVariant, Field(description="Which l-diversity: distinct, entropy or recursive (c,l).")
    ] = "distinct"
    c: Annotated[
        Finite,
        C_BOUNDS,
        Field(description="c of recursive (c,l)-diversity.", json_schema_extra={"option": "--c"}),
    ] = 2.0
    t: Annotated[
        Finite | None,
        T_BOUNDS,
        Field(description="t of t-closeness (Li, Li & Venkatasubramanian, 2007)."),
    ] = None
    t_distance: Annotated[
        TDistance, Field(description="Earth mover's distance of t-closeness: equal, ordered or hierarchical.")
    ] = "equal"
    beta: Annotated[
        Finite | None,
        BETA_BOUNDS,
        Field(
            description="beta of beta-likeness (Cao & Karras, 2012): no value's share in a class above "
            "(1 + beta) times its share in the table."
        ),
    ] = None
    beta_variant: Annotated[
        BetaVariant,
        Field(
            description="Which beta-likeness: basic, or enhanced (relative gain at most min(beta, ln(1/p)))."
        ),
    ] = "basic"
    delta_disclosure: Annotated[
        Finite | None,
        DELTA_DISCLOSURE_BOUNDS,
        Field(
            description="delta of delta-disclosure privacy (Brickell & Shmatikov, 2008): every value's share "
            "in a class within a factor e^delta of its share in the table."
        ),
    ] = None
    average_risk: Annotated[
        Finite | None,
        RISK_THRESHOLD_BOUNDS,
        Field(description="Largest average re-identification risk (classes / records), as ARX."),
    ] = None
    highest_risk: Annotated[
        Finite | None,
        HIGHEST_RISK_BOUNDS,
        Field(
            description="ARX's relaxed average risk: the highest risk (1 / class size) a record may have, "
            "but for records_at_risk of them (with average_risk)."
        ),
    ] = None
    records_at_risk: Annotated[
        Finite | None,
        RISK_THRESHOLD_BOUNDS,
        Field(description="Largest share of records whose risk exceeds highest_risk (default 0)."),
    ] = None
    attacker: Annotated[
        Attacker,
        Field(
            description="Whose average risk average_risk bounds: prosecutor (classes / records), or "
            "journalist or marketer against the population table of research_subset."
        ),
    ] = "prosecutor"
    sample_uniqueness: Annotated[
        Finite | None,
        RISK_THRESHOLD_BOUNDS,
        Field(description="Largest share of records alone in their class (sample uniques), as ARX."),
    ] = None
    population_uniqueness: Annotated[
        Finite | None,
        RISK_THRESHOLD_BOUNDS,
        Field(description="Largest share of the population estimated unique (needs a population), as ARX."),
    ] = None
    uniqueness_model: Annotated[
        UniquenessModel,
        Field(description="Estimator of population uniqueness: pitman, zayatz, snb or dankar."),
    ] = "dankar"
    sampling_fraction: Annotated[
        Finite | None,
        SAMPLING_FRACTION_BOUNDS,
        Field(description="Sampling fraction n / N, for population uniqueness and estimated k-map."),
    ] = None
    population_size: Annotated[
        Finite | None,
        POPULATION_SIZE_BOUNDS,
        Field(description="Population size N, for population uniqueness and estimated k-map."),
    ] = None
    research_subset: Annotated[
        str | None,
        Field(
            description="Column marking the research subset (yes/no, true/false, 1/0) of the population "
            "table given, for delta-presence and k-map; released: the rows marked yes."
        ),
    ] = None
    delta_min: Annotated[
        Finite | None,
        DELTA_PRESENCE_BOUNDS,
        Field(
            description="Lower bound of delta-presence (Nergiz et al., 2007): each class's share of research-"
            "subset records among its population records at least this (default 0 with delta_max)."
        ),
    ] = None
    delta_max: Annotated[
        Finite | None,
        DELTA_PRESENCE_BOUNDS,
        Field(
            description="Upper bound of delta-presence: each class's share of research-subset records "
            "among its population records at most this (default 1 with delta_min)."
        ),
    ] = None
    k_map: Annotated[
        Whole | None,
        K_BOUNDS,
        Field(
            description="k of k-map: each released class matches at least k population records (counted "
            "with research_subset, else estimated with sampling_fraction or population_size)."
        ),
    ] = None
    k_map_estimator: Annotated[
        KMapEstimator,
        Field(description="Population model of estimated k-map: poisson or zero_truncated_poisson."),
    ] = "poisson"
    significance_level: Annotated[
        Finite, SIGNIFICANCE_BOUNDS, Field(description="Significance level of estimated k-map.")
    ] = 0.01

    @model_validator(mode="after")
    def _some_model(self) -> Self:
        asked = (self.k, self.l, self.t, self.beta, self.delta_disclosure)
        risks = (self.average_risk, self.sample_uniqueness, self.population_uniqueness)
        presence = (self.delta_min, self.delta_max, self.k_map)
        if all(value is None for value in (*asked, *risks, *presence)):
            raise ValueError(
                "needs at least one privacy model: {k}, {l}, {t}, {beta}, {delta_disclosure}, "
                "{average_risk}, {sample_uniqueness}, {population_uniqueness}, {delta_min}/{delta_max} "
                "or {k_map}"
            )
        if (
            self.l is not None
            and self.l_variant in ("distinct", "recursive")
            and not float(self.l).is_integer()
        ):
            raise ValueError(f"needs a whole number {{l}} for {self.l_variant} l-diversity, got {self.l:g}")
        return self

    #: Parameters added after the methods' first documents (β-likeness, δ-disclosure privacy), left out
    #: of their recipes at their default (a run without them writes its summary and recipe as before).
    omitted_at_default: ClassVar[dict[str, Any]] = {
        "beta": None,
        "beta_variant": "basic",
        "delta_disclosure": None,
        "average_risk": None,
        "highest_risk": None,
        "records_at_risk": None,
        "attacker": "prosecutor",
        "sample_uniqueness": None,
        "population_uniqueness": None,
        "uniqueness_model": "dankar",
        "sampling_fraction": None,
        "population_size": None,
        "research_subset": None,
        "delta_min": None,
        "delta_max": None,
        "k_map": None,
        "k_map_estimator": "poisson",
        "significance_level": 0.01,
    }

    @property
    def _estimated_k_map(self) -> bool:
        return self.k_map is not None and self.research_subset is None

    @model_validator(mode="after")
    def _presence_rules(self) -> Self:
        """δ-presence needs the research subset; k-map takes the research subset or a population
        (sampling_fraction or population_size); nothing else reads the research subset."""
        presence = self.delta_min is not None or self.delta_max is not None
        if presence and self.research_subset is None:
            raise ValueError("delta-presence ({delta_min}/{delta_max}) needs {research_subset}")
        low = 0.0 if self.delta_min is None else self.delta_min
        if presence and low > (1.0 if self.delta_max is None else self.delta_max):
            raise ValueError("{delta_min} must be at most {delta_max}")
        population_risk = self.attacker != "prosecutor"
        if self.research_subset is not None and not presence and self.k_map is None and not population_risk:
            raise ValueError(
                "{research_subset} is only used by delta-presence, {k_map} and the journalist's or "
                "marketer's {average_risk} ({attacker})"
            )
        population = self.sampling_fraction is not None or self.population_size is not None
        if self._estimated_k_map and not population:
            raise ValueError("{k_map} needs {research_subset}, or {sampling_fraction} or {population_size}")
        if not self._estimated_k_map and (
            self.k_map_estimator != "poisson" or self.significance_level != 0.01
        ):
            raise ValueError("{k_map_estimator} and {significance_level} are only used by estimated {k_map}")
        return self

    @model_validator(mode="after")
    def _average_risk_rules(self) -> Self:
        """The relaxed variant and the attacker refine {average_risk}; journalist and marketer need
        the population table (research_subset); a marketer's risk has no highest risk."""
        if self.average_risk is None:
            for name in ("highest_risk", "records_at_risk"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{{{name}}} is only used with {{average_risk}}")
            if self.attacker != "prosecutor":
                raise ValueError("{attacker} is only used with {average_risk}")
        if self.records_at_risk is not None and self.highest_risk is None:
            raise ValueError("{records_at_risk} needs {highest_risk}")
        if self.attacker != "prosecutor" and self.research_subset is None:
            raise ValueError(
                f"{{attacker}} {self.attacker} needs the population: give {{research_subset}} (the column "
                "of the population table marking the records released)"
            )
        if self.attacker == "marketer" and self.highest_risk is not None:
            raise ValueError("{highest_risk} applies to the prosecutor and journalist, not marketer")
        return self

    @model_validator(mode="after")
    def _population_given(self) -> Self:
        """Population uniqueness needs one population (size or sampling fraction); either needs it."""
        given = [name for name in ("sampling_fraction", "population_size") if getattr(self, name) is not None]
        if len(given) == 2:
            raise ValueError("takes {sampling_fraction} or {population_size}, not both")
        if self.population_uniqueness is None:
            if given and not self._estimated_k_map:
                raise ValueError(
                    f"{{{given[0]}}} is only used by {{population_uniqueness}} and estimated {{k_map}}"
                )
            if self.uniqueness_model != "dankar":
                raise ValueError("{uniqueness_model} is only used by {population_uniqueness}")
        elif not given:
            raise ValueError("{population_uniqueness} needs {sampling_fraction} or {population_size}")
        return self

    def to_recipe(self) -> dict[str, Any]:
        """Every parameter but those of :attr:`omitted_at_default` left at their default."""
        recipe = super().to_recipe()
        for name, default in self.omitted_at_default.items():
            if name in recipe and recipe[name] == default:
                recipe.pop(name)
        return recipe

    def privacy_models(self, table: Any) -> list[Any]:
        """The models these parameters ask for on ``table``: k-anonymity, and l-diversity / t-closeness
        / β-likeness / δ-disclosure privacy of every attribute with role sensitive. Raises
        ``ConfigError`` when a model cannot apply to the table (k above its number of records, no
        sensitive attribute, no hierarchy for hierarchical t-closeness)."""
        from sdckit.anonymize.base import check_k_at_most_records
        from sdckit.hierarchy import Hierarchy
        from sdckit.models import (
            BETA_LIKENESS,
            DeltaDisclosure,
            DistinctLDiversity,
            EntropyLDiversity,
            KAnonymity,
            RecursiveCLDiversity,
            TCloseness,
        )
        from sdckit.table import Role

        k, l, t = self.k, self.l, self.t  # noqa: E741
        beta, delta = self.beta, self.delta_disclosure
        sensitive = table.schema.with_role(Role.SENSITIVE)
        if (l is not None or t is not None) and not sensitive:
            raise ConfigError("l and t need at least one attribute with role sensitive in the configuration")
        if (beta is not None or delta is not None) and not sensitive:
            asked = [
                spell(name)
                for name, value in (("beta", beta), ("delta_disclosure", delta))
                if value is not None
            ]
            raise ConfigError(
                f"{' and '.join(asked)} need{'s' if len(asked) == 1 else ''} at least one attribute with "
                "role sensitive in the configuration"
            )
        models: list[Any] = []
        if k is not None:
            check_k_at_most_records(k, table.n_records)
            models.append(KAnonymity(k))
        for attribute in sensitive:
            if l is not None:
                if self.l_variant == "distinct":
                    models.append(DistinctLDiversity(attribute.name, int(l)))
                elif self.l_variant == "entropy":
                    models.append(EntropyLDiversity(attribute.name, l))
                else:
                    models.append(RecursiveCLDiversity(attribute.name, self.c, int(l)))
            if t is not None:
                hierarchy = attribute.hierarchy if isinstance(attribute.hierarchy, Hierarchy) else None
                models.append(TCloseness(attribute.name, t, distance=self.t_distance, hierarchy=hierarchy))
            if beta is not None:
                models.append(BETA_LIKENESS[self.beta_variant](attribute.name, beta))
            if delta is not None:
                models.append(DeltaDisclosure(attribute.name, delta))
        return models + self._risk_models(table)

    def _risk_models(self, table: Any) -> list[Any]:
        """The risk-based models asked for (:mod:`sdckit.models.risk_based`)."""
        from sdckit.models.risk_based import (
            AverageRisk,
            PopulationAverageRisk,
            PopulationUniqueness,
            SampleUniqueness,
        )

        models: list[Any] = []
        relaxed = (self.highest_risk, self.records_at_risk)
        if self.average_risk is not None and self.attacker == "prosecutor":
            models.append(AverageRisk(self.average_risk, *relaxed))
        elif self.average_risk is not None:
            assert self.research_subset is not None  # _average_risk_rules
            column = self.research_subset
            if column not in table.data.columns:
                raise ConfigError(
                    f"{spell('research_subset')} '{column}' is not a column of the data "
                    f"(columns: {', '.join(table.data.columns)})"
                )
            models.append(PopulationAverageRisk(self.average_risk, self.attacker, column, *relaxed))
        if self.sample_uniqueness is not None:
            models.append(SampleUniqueness(self.sample_uniqueness))
        if self.population_uniqueness is not None:
            if self.population_size is not None and self.population_size < table.n_records:
                raise ConfigError(
                    f"{spell('population_size')} must be at least the number of records "
                    f"({table.n_records:,}), got {self.population_size:g}"
                )
            models.append(
                PopulationUniqueness(
                    self.population_uniqueness,
                    self.uniqueness_model,
                    population_size=self.population_size,
                    sampling_fraction=self.sampling_fraction,
                )
            )
        return models + self._presence_models(table)

    def _presence_models(self, table: Any) -> list[Any]:
        """δ-presence and k-map, when asked (the research-subset column checked on ``table``)."""
        from sdckit.models.kmap import EstimatedKMap, KMap
        from sdckit.models.presence import DeltaPresence

        models: list[Any] = []
        subset = self.research_subset
        if subset is not None:
            if subset not in table.data.columns:
                raise ConfigError(
                    f"{spell('research_subset')} '{subset}' is not a column of the data "
                    f"(columns: {', '.join(table.data.columns)})"
                )
            if self.delta_min is not None or self.delta_max is not None:
                low = 0.0 if self.delta_min is None else self.delta_min
                high = 1.0 if self.delta_max is None else self.delta_max
                models.append(DeltaPresence(subset, low, high))
            if self.k_map is not None:
                models.append(KMap(self.k_map, subset))
        elif self.k_map is not None:
            n = table.n_records
            fraction = self.sampling_fraction
            if self.population_size is not None:
                if self.population_size < n:
                    raise ConfigError(
                        f"{spell('population_size')} must be at least the number of records ({n:,}), "
                        f"got {self.population_size:g}"
                    )
                fraction = n / self.population_size
            assert fraction is not None  # _presence_rules
            estimator = self.k_map_estimator
            models.append(EstimatedKMap(self.k_map, fraction, self.significance_level, estimator, n))
        return models


def privacy_models(
    table: Any,
    *,
    k: int | None,
    l: float | None,  # noqa: E741
    l_variant: str = "distinct",
    c: float = 2.0,
    t: float | None = None,
    t_distance: str = "equal",
    beta: float | None = None,
    beta_variant: str = "basic",
    delta_disclosure: float | None = None,
    method: str | None = None,
    risk: dict[str, Any] | None = None,
    presence: dict[str, Any] | None = None,
) -> list[Any]:
    """Privacy model objects for ``table`` (none when no model is asked): the parameters checked by
    :class:`PrivacyModelParams` (``method`` names the caller in a message about two of them), then
    :meth:`PrivacyModelParams.privacy_models`. ``risk`` holds the risk-based models' parameters
    (average_risk, sample_uniqueness, population_uniqueness, uniqueness_model, sampling_fraction,
    population_size), when asked; ``presence`` those of δ-presence and k-map (research_subset,
    delta_min, delta_max, k_map, k_map_estimator, significance_level)."""
    risk = risk or {}
    presence = presence or {}
    thresholds = ("average_risk", "sample_uniqueness", "population_uniqueness")
    if (
        k is None
        and l is None
        and t is None
        and beta is None
        and delta_disclosure is None
        and all(risk.get(name) is None for name in thresholds)
        and all(presence.get(name) is None for name in ("delta_min", "delta_max", "k_map"))
    ):
        return []
    fields = PrivacyModelParams.model_fields
    asked = {"k": k, "l": l, "l_variant": l_variant, "c": c, "t": t, "t_distance": t_distance}
    asked.update(beta=beta, beta_variant=beta_variant, delta_disclosure=delta_disclosure, **risk, **presence)
    params = PrivacyModelParams.parse(
        asked,
        spell=lambda name: spell(name, option_name(name, fields.get(name))),
        method=method,
    )
    return params.privacy_models(table)


def finite_or_none(value: float | None) -> float | None:
    """A figure for JSON: None for NaN and infinities, else rounded to 6 decimals."""
    return None if value is None or not math.isfinite(value) else round(float(value), 6)
