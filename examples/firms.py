"""Synthetic business-survey microdata for the table examples (``sdckit table``): local units of
enterprises with a district (``N1``..``S6``: the letter is the region), a 3-digit economic activity
(``G471``: the letter is the section, the letter and two digits the division), a size class, the number of
employees, a skewed turnover and the enterprise (holding) each unit belongs to.

Turnover is log-normal and grows with size, so a few large units dominate some cells — what the
dominance rules (p%, (n,k)) are for; most enterprises have one unit, some have several in one activity
across districts. Both dimensions are coded so that the mask hierarchy builder of the configuration
(``{mask: true}``) gives their natural hierarchy: ``N1`` → ``N*`` → ``**`` and ``G471`` → ``G47*`` →
``G4**`` → ``G***`` → ``****``. Same seed, same frame.

Usage, from the repository root::

    python -m examples.generate --kind firms --records 3000 --seed 1 --output out/firms.csv
"""

from __future__ import annotations

import numpy as np
import polars as pl

REGIONS = {"N": 4, "S": 6, "E": 3, "W": 2}
ACTIVITIES = ("A011", "A012", "C101", "C102", "C107", "C251", "C252", "F411", "F412", "G451", "G471", "G472",
              "G473", "I561", "I562", "J620", "J631", "M691", "M692", "M711")  # fmt: skip
SIZES = ("0-9", "10-49", "50-249", "250+")
COLUMNS = ("unit_id", "enterprise", "district", "activity", "size", "employees", "turnover")


def generate_firms(n_records: int = 3_000, seed: int = 1) -> pl.DataFrame:
    """``n_records`` local units; see the module docstring."""
    rng = np.random.default_rng(seed)
    districts = np.array([f"{region}{d + 1}" for region, count in REGIONS.items() for d in range(count)])
    district_weight = 1.0 / np.arange(1, districts.size + 1) ** 0.7
    activity_weight = 1.0 / np.arange(1, len(ACTIVITIES) + 1) ** 0.9
    # Enterprises: most have one unit, a few up to eight, all in one activity.
    units_per = np.minimum(rng.geometric(0.75, n_records), 8)
    enterprise = np.repeat(np.arange(n_records), units_per)[:n_records]
    activity_of = rng.choice(len(ACTIVITIES), n_records, p=activity_weight / activity_weight.sum())
    size = np.minimum(rng.geometric(0.6, n_records) - 1, 3)
    employees = np.round(
        np.exp(rng.uniform(np.log([1, 10, 50, 250])[size], np.log([9, 49, 249, 2000])[size]))
    )
    turnover = np.round(employees * rng.lognormal(4.5, 0.8, n_records), 1)
    return pl.DataFrame(
        {
            "unit_id": [f"U{i:06d}" for i in rng.permutation(n_records)],
            "enterprise": [f"E{e:05d}" for e in enterprise],
            "district": districts[
                rng.choice(districts.size, n_records, p=district_weight / district_weight.sum())
            ],
            "activity": np.array(ACTIVITIES)[activity_of[enterprise]],
            "size": np.array(SIZES)[size],
            "employees": employees.astype(np.int64),
            "turnover": turnover,
        }
    ).select(COLUMNS)
