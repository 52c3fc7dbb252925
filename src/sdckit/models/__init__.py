"""Privacy models evaluated over all equivalence classes at once.

k-anonymity; distinct, entropy and recursive (c,l)-diversity; t-closeness with equal, ordered and
hierarchical ground distance; basic and enhanced β-likeness; δ-disclosure privacy; and, judging the
whole table, average re-identification risk, sample uniqueness and population uniqueness. Each model reads
:class:`ClassStatistics` (class sizes and sparse per-class counts of the sensitive values) and returns
a :class:`ModelResult` (per class: passes, and the k, l, t, β or δ it achieves).
"""

from sdckit.models.anonymity import KAnonymity
from sdckit.models.base import (
    TOLERANCE,
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    SensitiveCounts,
    evaluate_all,
)
from sdckit.models.check import CheckReport, check_table
from sdckit.models.closeness import DISTANCES, TCloseness
from sdckit.models.disclosure import DeltaDisclosure
from sdckit.models.diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from sdckit.models.kmap import EstimatedKMap, KMap
from sdckit.models.likeness import BETA_LIKENESS, BasicBetaLikeness, EnhancedBetaLikeness
from sdckit.models.presence import DeltaPresence
from sdckit.models.risk_based import AverageRisk, PopulationUniqueness, SampleUniqueness, TableModel

__all__ = [
    "BETA_LIKENESS",
    "DISTANCES",
    "TOLERANCE",
    "AverageRisk",
    "CheckReport",
    "BasicBetaLikeness",
    "ClassStatistics",
    "DeltaDisclosure",
    "DeltaPresence",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EstimatedKMap",
    "EntropyLDiversity",
    "KAnonymity",
    "KMap",
    "ModelResult",
    "PopulationUniqueness",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SampleUniqueness",
    "SensitiveCounts",
    "TCloseness",
    "TableModel",
    "check_table",
    "evaluate_all",
]
