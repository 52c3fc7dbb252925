"""Synthetic student microdata shaped like the data of Orooji & Knapp (2019).

The paper measures its combined record-level disclosure risk on 1,009,993 Louisiana public school
students (school years 1999-2011, 27 attributes: age, gender, ethnicity, homelessness, dropout flag,
LADOC and LAOJJ contact, ...). That data is confidential; this module makes a stand-in with the
same shape: one identifier, ten demographic and school quasi-identifiers with realistic skew and
correlation, and sixteen rare "Yes"/"No" sensitive flags (prevalence 0.1% to 10%) driven by latent
hardship and justice-involvement scores, so that they are correlated with lunch status and with
each other.

Everything is vectorized numpy/polars, so a million records take a few seconds. The geography (64
parishes with Zipf-like sizes, about 1,900 schools nested in them, their ethnic mix and poverty) is
fixed, like a real state; ``seed`` draws the students. Same seed, same frame.

Usage, from the repository root::

    python -m examples.generate --records 100000 --seed 1 --output out/example.parquet
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

# Louisiana's 64 parishes, most populous first (roughly, 2010 census order).
PARISHES: tuple[str, ...] = (
    "East Baton Rouge", "Jefferson", "Orleans", "Caddo", "St. Tammany", "Lafayette", "Calcasieu",
    "Ouachita", "Livingston", "Tangipahoa", "Rapides", "Bossier", "Terrebonne", "Ascension",
    "Lafourche", "St. Landry", "Iberia", "Acadia", "St. Charles", "Vermilion", "St. Mary",
    "St. John the Baptist", "Washington", "Vernon", "Webster", "Lincoln", "St. Martin", "Iberville",
    "Beauregard", "Evangeline", "Avoyelles", "Natchitoches", "Jefferson Davis", "St. Bernard",
    "Plaquemines", "Allen", "Morehouse", "De Soto", "Assumption", "St. James", "Union",
    "Pointe Coupee", "Richland", "Sabine", "Franklin", "Grant", "Concordia", "Winn", "Claiborne",
    "Jackson", "Madison", "Bienville", "West Baton Rouge", "East Feliciana", "West Carroll",
    "Caldwell", "Red River", "La Salle", "Catahoula", "Tensas", "East Carroll", "St. Helena",
    "West Feliciana", "Cameron",
)  # fmt: skip

# Approximate share of Black students where it is far from what the parish's rank would suggest.
_BLACK_SHARE = {
    "Orleans": 0.90, "East Baton Rouge": 0.72, "Caddo": 0.64, "Jefferson": 0.46, "St. Tammany": 0.19,
    "Livingston": 0.06, "Lafayette": 0.40, "Calcasieu": 0.37, "Madison": 0.84, "East Carroll": 0.90,
    "Tensas": 0.82, "St. Helena": 0.88, "St. John the Baptist": 0.68, "Cameron": 0.03, "Vernon": 0.20,
    "Ascension": 0.30, "Bossier": 0.33, "Terrebonne": 0.30, "Lafourche": 0.18, "St. Bernard": 0.20,
    "Plaquemines": 0.33, "West Carroll": 0.18, "La Salle": 0.12, "Grant": 0.14, "Vermilion": 0.22,
}  # fmt: skip
_HISPANIC_SHARE = {"Jefferson": 0.10, "Orleans": 0.04, "St. Bernard": 0.05, "Lafayette": 0.04, "Vernon": 0.07}
_ASIAN_SHARE = {"Jefferson": 0.045, "Orleans": 0.03, "East Baton Rouge": 0.025, "Lafayette": 0.02}
_AMERICAN_INDIAN_SHARE = {
    "Terrebonne": 0.07,
    "Lafourche": 0.03,
    "Allen": 0.03,
    "St. Mary": 0.025,
    "Sabine": 0.03,
}
# Katrina (August 2005): displaced students were counted homeless under McKinney-Vento.
_KATRINA_PARISHES = ("Orleans", "Jefferson", "St. Bernard", "Plaquemines")

GENDERS = ("M", "F")
ETHNICITIES = ("White", "Black", "Hispanic", "Asian", "American Indian")
LUNCH_STATUSES = ("Free", "Reduced", "Paid")
FIRST_YEAR = 1999  # entry school years 1999..2011
N_SCHOOLS = 1900
_GEOGRAPHY_SEED = 20190501  # fixed: the state is the same whatever students are drawn


@dataclass(frozen=True)
class Flag:
    """A rare yes/no sensitive attribute: ``prevalence`` among all records, ``loading`` on the latent
    score it is driven by, and who can have it at all."""

    name: str
    prevalence: float
    loading: float
    factor: str = "risk"  # "risk" (school/family hardship) or "justice" (justice-system involvement)
    born_by: int | None = None  # only students born in or before this year (old enough by 2011)
    male_shift: float = 0.0  # added to the latent value of boys (negative: girls)


FLAGS: tuple[Flag, ...] = (
    Flag("special_education", 0.10, 0.25, male_shift=0.45),
    Flag("retained", 0.06, 0.45, male_shift=0.20),
    Flag("out_of_school_suspension", 0.05, 0.5, male_shift=0.45),
    Flag("truancy", 0.03, 0.5),
    Flag("dropout", 0.03, 0.5, born_by=1997, male_shift=0.15),
    Flag("homeless", 0.02, 0.4),
    Flag("laojj_contact", 0.015, 0.55, factor="justice", born_by=2000, male_shift=0.60),
    Flag("mental_health_referral", 0.008, 0.3),
    Flag("teen_parent", 0.008, 0.45, born_by=1996, male_shift=-0.60),
    Flag("expelled", 0.005, 0.55, factor="justice", born_by=2001, male_shift=0.40),
    Flag("substance_incident", 0.004, 0.5, factor="justice", born_by=1999, male_shift=0.30),
    Flag("foster_care", 0.004, 0.4),
    Flag("ladoc_contact", 0.003, 0.6, factor="justice", born_by=1993, male_shift=0.80),
    Flag("weapon_incident", 0.002, 0.55, factor="justice", born_by=2001, male_shift=0.70),
    Flag("migrant", 0.002, 0.25),
    Flag("laojj_custody", 0.001, 0.65, factor="justice", born_by=1998, male_shift=0.80),
)

QUASI_IDENTIFIERS = (
    "birth_year",
    "gender",
    "ethnicity",
    "parish",
    "school",
    "entry_school_year",
    "entry_grade",
    "lunch_status",
    "limited_english",
    "gifted",
)
COLUMNS = ("student_id", *QUASI_IDENTIFIERS, *(flag.name for flag in FLAGS))

MISSING_SHARE = {"lunch_status": 0.01, "entry_grade": 0.005, "ethnicity": 0.002}


@dataclass(frozen=True)
class _Geography:
    school_codes: np.ndarray  # str, "PPPSSS": parish code then school number
    school_parish: np.ndarray  # int, index into PARISHES
    school_weight: np.ndarray  # probability that a student attends the school
    school_ethnicity: np.ndarray  # (schools, ethnicities) cumulative probabilities
    school_poverty: np.ndarray  # logit-scale poverty of the school's catchment
    parish_effect: np.ndarray  # latent risk shift of each parish


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1.0 - p))


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _geography() -> _Geography:
    rng = np.random.default_rng(_GEOGRAPHY_SEED)
    n_parishes = len(PARISHES)
    rank = np.arange(1, n_parishes + 1)
    parish_size = (rank + 2.0) ** -1.4  # Zipf-like: the largest parish is ~75x the smallest
    parish_size /= parish_size.sum()

    black = np.array([_BLACK_SHARE.get(p, np.nan) for p in PARISHES])
    unknown = np.isnan(black)
    black[unknown] = 0.08 + 0.75 * rng.beta(2.0, 2.5, size=unknown.sum())
    hispanic = np.array([_HISPANIC_SHARE.get(p, 0.02) for p in PARISHES])
    asian = np.array([_ASIAN_SHARE.get(p, 0.007) for p in PARISHES])
    american_indian = np.array([_AMERICAN_INDIAN_SHARE.get(p, 0.004) for p in PARISHES])
    poverty = -0.1 + 2.2 * (black - 0.4) + rng.normal(0.0, 0.35, n_parishes)
    poverty[PARISHES.index("St. Tammany")] -= 0.8
    parish_effect = rng.normal(0.0, 0.15, n_parishes)

    # Schools per parish grow less than proportionally with parish size; at least three each.
    share = parish_size**0.9
    n_schools = np.maximum(3, np.round(N_SCHOOLS * share / share.sum())).astype(np.int64)
    school_parish = np.repeat(np.arange(n_parishes), n_schools)
    school_number = np.arange(school_parish.size) - np.repeat(np.cumsum(n_schools) - n_schools, n_schools) + 1
    # Parish codes are alphabetical, as Louisiana numbers them (Acadia 001 .. Winn 064).
    by_name = sorted(range(n_parishes), key=lambda i: PARISHES[i].replace(" ", "").replace(".", "").lower())
    parish_code = np.argsort(by_name)[school_parish] + 1
    school_codes = np.char.add(
        np.char.zfill(parish_code.astype(str), 3), np.char.zfill(school_number.astype(str), 3)
    )
    size = rng.lognormal(0.0, 0.6, school_parish.size)
    within = size / np.bincount(school_parish, weights=size)[school_parish]
    school_weight = within * parish_size[school_parish]
    school_weight /= school_weight.sum()

    # Schools are more segregated than parishes: perturb each parish's mix on the logit scale.
    school_black = _expit(_logit(black[school_parish]) + rng.normal(0.0, 1.0, school_parish.size))
    others = np.stack([hispanic, asian, american_indian], axis=1)[school_parish]
    others = others * np.exp(rng.normal(0.0, 0.4, others.shape))
    white = np.clip(1.0 - school_black - others.sum(axis=1), 0.01, None)
    probabilities = np.column_stack([white, school_black, others])
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    school_poverty = poverty[school_parish] + 1.5 * (school_black - black[school_parish])
    school_poverty += rng.normal(0.0, 0.5, school_parish.size)
    return _Geography(
        school_codes=school_codes,
        school_parish=school_parish,
        school_weight=school_weight,
        school_ethnicity=np.cumsum(probabilities, axis=1),
        school_poverty=school_poverty,
        parish_effect=parish_effect,
    )


def _categorical(uniform: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """Category index of each record given its uniform draw and its row of cumulative probabilities
    (one row per record, or one row for all)."""
    codes = np.zeros(uniform.shape, dtype=np.int8)
    for j in range(cumulative.shape[-1] - 1):
        codes += uniform > cumulative[..., j]
    return codes


def _labels(codes: np.ndarray, labels: tuple[str, ...], missing: np.ndarray | None = None) -> pl.Series:
    index = pl.Series(codes, dtype=pl.UInt32)
    if missing is not None:
        index = index.scatter(np.flatnonzero(missing), None)
    return pl.Series(labels, dtype=pl.String).gather(index)


def _yes_no(mask: np.ndarray) -> pl.Series:
    return _labels(mask.astype(np.uint8), ("No", "Yes"))


def _threshold(latent: np.ndarray, eligible: np.ndarray, count: int) -> float:
    """The latent value above which exactly ``count`` eligible records lie."""
    values = latent[eligible]
    count = min(count, values.size)
    if count == 0:
        return np.inf
    return float(np.partition(values, values.size - count)[values.size - count])


def generate(n_records: int = 100_000, seed: int = 1) -> pl.DataFrame:
    """``n_records`` synthetic students with the 27 columns of :data:`COLUMNS`.

    Quasi-identifiers: ``birth_year`` (follows entry year and grade), ``gender``, ``ethnicity``
    (depends on the school), ``parish`` (64, Zipf-like sizes), ``school`` (about 1,900, nested in
    parishes), ``entry_school_year`` (1999-2011; 1999 holds everyone already enrolled),
    ``entry_grade`` (0 = kindergarten .. 12), ``lunch_status`` (Free/Reduced/Paid; depends on school
    poverty and ethnicity), ``limited_english`` and ``gifted`` ("Yes"/"No"). Sensitive flags
    (:data:`FLAGS`, "Yes"/"No") share a latent hardship score (lunch status, gender, parish) and a
    justice-involvement score built on it, so they are correlated with each other and with lunch
    status. ``lunch_status``, ``entry_grade`` and ``ethnicity`` have a few nulls
    (:data:`MISSING_SHARE`).
    """
    if n_records < 1:
        raise ValueError(f"n_records must be at least 1, got {n_records}")
    geography = _geography()
    rng = np.random.default_rng(seed)
    n = n_records

    school = rng.choice(geography.school_weight.size, size=n, p=geography.school_weight).astype(np.int32)
    parish = geography.school_parish[school]
    male = rng.random(n) < 0.513

    ethnicity = _categorical(rng.random(n), geography.school_ethnicity[school])
    black, hispanic, asian = ethnicity == 1, ethnicity == 2, ethnicity == 3

    # Everyone enrolled in fall 1999 enters the data that year, at any grade; later entrants mostly
    # start kindergarten. Fewer entries in 2005-06 (Katrina).
    year_weight = np.array([9.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.85, 0.95, 1.0, 1.0, 1.0, 1.0, 1.0])
    entry_year = FIRST_YEAR + _categorical(rng.random(n), np.cumsum(year_weight / year_weight.sum())).astype(
        np.int16
    )
    grade_1999 = np.linspace(1.1, 0.7, 13)
    grade_later = np.array([0.62] + [0.38 / 12] * 12)
    uniform = rng.random(n)
    entry_grade = np.where(
        entry_year == FIRST_YEAR,
        _categorical(uniform, np.cumsum(grade_1999 / grade_1999.sum())),
        _categorical(uniform, np.cumsum(grade_later)),
    )
    # Kindergarten at 5 (turning 6 by the fall for a quarter), plus over-age older entrants.
    over_age = (rng.random(n) < 0.25).astype(np.int16) + (rng.random(n) < 0.04 + 0.012 * entry_grade)
    birth_year = entry_year - 5 - entry_grade - over_age

    poverty = geography.school_poverty[school] + 1.1 * black + 0.8 * hispanic - 0.4 * asian
    lunch_latent = poverty + rng.logistic(0.0, 1.0, n)
    lunch = np.where(lunch_latent > 0.0, 0, np.where(lunch_latent > -0.45, 1, 2)).astype(np.int8)

    limited_english = rng.random(n) < np.where(hispanic, 0.30, np.where(asian, 0.25, 0.003))
    gifted_logit = -3.0 + 0.9 * (lunch == 2) + 0.7 * asian - 0.3 * black
    gifted = rng.random(n) < _expit(gifted_logit)

    # Latent scores: hardship (poverty, parish) and justice involvement built on it.
    risk = rng.standard_normal(n) + 0.55 * (lunch == 0) + 0.25 * (lunch == 1)
    risk += geography.parish_effect[parish] + 0.15 * (geography.school_poverty[school] > 0.5)
    justice = 0.7 * risk + 0.7 * rng.standard_normal(n)
    katrina = np.isin(parish, [PARISHES.index(p) for p in _KATRINA_PARISHES]) & (entry_year <= 2005)

    columns: dict[str, pl.Series] = {}
    width = max(7, len(str(n)))  # shuffled, so that the identifier says nothing about the row
    columns["student_id"] = "S" + pl.Series(rng.permutation(n) + 1).cast(pl.String).str.zfill(width)
    missing = {name: rng.random(n) < share for name, share in MISSING_SHARE.items()}
    columns["birth_year"] = pl.Series(birth_year, dtype=pl.Int16)
    columns["gender"] = _labels((~male).astype(np.uint8), GENDERS)
    columns["ethnicity"] = _labels(ethnicity, ETHNICITIES, missing["ethnicity"])
    columns["parish"] = _labels(parish, PARISHES)
    columns["school"] = _labels(school, tuple(geography.school_codes.tolist()))
    columns["entry_school_year"] = pl.Series(entry_year, dtype=pl.Int16)
    columns["entry_grade"] = pl.Series(entry_grade, dtype=pl.Int8).scatter(
        np.flatnonzero(missing["entry_grade"]), None
    )
    columns["lunch_status"] = _labels(lunch, LUNCH_STATUSES, missing["lunch_status"])
    columns["limited_english"] = _yes_no(limited_english)
    columns["gifted"] = _yes_no(gifted)

    for flag in FLAGS:
        factor = risk if flag.factor == "risk" else justice
        latent = flag.loading * factor + np.sqrt(1.0 - flag.loading**2) * rng.standard_normal(n)
        if flag.male_shift:
            latent += flag.male_shift * male
        if flag.name == "homeless":
            latent += 1.2 * katrina
        if flag.name == "migrant":
            latent += 1.5 * hispanic
        eligible = np.ones(n, dtype=bool) if flag.born_by is None else birth_year <= flag.born_by
        cut = _threshold(latent, eligible, round(flag.prevalence * n))
        columns[flag.name] = _yes_no((latent >= cut) & eligible)
    return pl.DataFrame(columns).select(COLUMNS)


def write(frame: pl.DataFrame, output: Path) -> None:
    """Write ``frame`` as CSV or Parquet (by extension) through a temporary file, so a reader never
    sees a half-written file."""
    suffix = output.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ValueError(f"output must end in .csv or .parquet, got '{output}'")
    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        if suffix == ".csv":
            frame.write_csv(temporary)
        else:
            frame.write_parquet(temporary)
        os.replace(temporary, output)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_partitioned(n_records: int, folder: Path, per_file: int = 1_000_000, seed: int = 1) -> int:
    """Write ``n_records`` students as a Parquet data set: files ``part-00000.parquet``, ... of
    ``per_file`` records, file ``i`` generated with seed ``seed + i``. Streams: only one file's records
    are ever in memory, so any size can be written. Returns the number of files."""
    if per_file < 1:
        raise ValueError(f"per_file must be at least 1, got {per_file}")
    folder.mkdir(parents=True, exist_ok=True)
    files = 0
    for files, start in enumerate(range(0, n_records, per_file), start=1):
        size = min(per_file, n_records - start)
        write(generate(size, seed + files - 1), folder / f"part-{files - 1:05d}.parquet")
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.generate", description="Generate synthetic student microdata."
    )
    parser.add_argument(
        "--kind",
        choices=("students", "firms", "shape"),
        default="students",
        help="students (default): the risk paper's stand-in; firms: business units for sdckit table; "
        "shape: data of a chosen shape and its risk configuration (written next to --output as .yaml)",
    )
    parser.add_argument("--records", type=int, default=100_000, help="number of records (default 100000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--output", type=Path, required=True, help="output file, .csv or .parquet")
    parser.add_argument(
        "--partition-records",
        type=int,
        default=None,
        help="write a Parquet data set: --output is a folder of files of this many records (students only)",
    )
    shape = parser.add_argument_group("--kind shape (examples/shapes.py)")
    shape.add_argument("--qis", type=int, default=10, help="quasi-identifiers (default 10)")
    shape.add_argument(
        "--cardinality", default="2-64", help="of the quasi-identifiers: N, or LOW-HIGH (default 2-64)"
    )
    shape.add_argument("--null-rate", type=float, default=0.0, help="share of missing values (default 0)")
    shape.add_argument("--skew", type=float, default=0.0, help="Zipf exponent (default 0: uniform)")
    shape.add_argument("--flags", type=int, default=16, help="yes/no sensitive flags (default 16)")
    shape.add_argument(
        "--known-sets", type=int, default=111, help="known sets kept at epsilon 0.01 (default 111)"
    )
    arguments = parser.parse_args(argv)
    if arguments.records < 1:
        parser.error("--records must be at least 1")
    if arguments.partition_records is not None:
        if arguments.kind != "students" or arguments.partition_records < 1:
            parser.error("--partition-records needs --kind students and a number >= 1")
        start = time.perf_counter()
        files = write_partitioned(
            arguments.records, arguments.output, arguments.partition_records, arguments.seed
        )
        elapsed = time.perf_counter() - start
        print(f"wrote {arguments.output}/: {arguments.records:,} records in {files} files ({elapsed:.1f} s)")
        return 0
    if arguments.output.suffix.lower() not in (".csv", ".parquet"):
        parser.error("--output must end in .csv or .parquet")
    start = time.perf_counter()
    if arguments.kind == "firms":
        from examples.firms import generate_firms

        frame = generate_firms(arguments.records, arguments.seed)
    elif arguments.kind == "shape":
        from examples.shapes import Shape, config_text, generate_shape

        chosen = Shape(
            records=arguments.records,
            qis=arguments.qis,
            cardinality=arguments.cardinality,
            null_rate=arguments.null_rate,
            skew=arguments.skew,
            flags=arguments.flags,
            known_sets=arguments.known_sets,
        )
        try:
            frame, config = generate_shape(chosen, arguments.seed)
        except ValueError as error:
            parser.error(str(error))
        configuration = arguments.output.with_suffix(".yaml")
        configuration.parent.mkdir(parents=True, exist_ok=True)
        configuration.write_text(config_text(chosen, arguments.seed, config))
        print(f"wrote {configuration}: {chosen.known_sets} known sets at epsilon 0.01")
    else:
        frame = generate(arguments.records, arguments.seed)
    write(frame, arguments.output)
    elapsed = time.perf_counter() - start
    print(
        f"wrote {arguments.output}: {frame.height:,} records, {frame.width} columns "
        f"(seed {arguments.seed}, {elapsed:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
