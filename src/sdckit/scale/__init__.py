"""Beyond one machine's memory: methods that run over the partitions of a data set, in this process
(out of core) or on a Dask cluster. See docs/scaling.md.

The seam is the distinct patterns of the attributes a method reads: pass 1 aggregates the records of
every partition to patterns with their counts (:mod:`sdckit.scale.aggregate`), the method runs on
the aggregate (:mod:`sdckit.scale.methods`), pass 2 maps the result back over the records.
"""

from __future__ import annotations

from sdckit.scale.dataset import Dataset, Partition, open_dataset
from sdckit.scale.engine import DaskEngine, Engine, LocalEngine, make_engine


def covered_commands() -> list[str]:
    """The commands that run over partitions."""
    from sdckit.scale.methods import MEASURES, METHODS

    return ["check", *(f"risk {name}" for name in MEASURES), *(f"anonymize {name}" for name in METHODS)]


__all__ = [
    "DaskEngine",
    "Dataset",
    "Engine",
    "LocalEngine",
    "Partition",
    "covered_commands",
    "make_engine",
    "open_dataset",
]
