"""sdckit: statistical disclosure control and privacy-preserving data publishing.

The public API, re-exported from the modules that define it.
"""

from sdckit.config import Config, load_config, parse_config
from sdckit.errors import ConfigError, InputError, SdcError, SdcWarning
from sdckit.frequency import encode, frequencies
from sdckit.risk.combined import RecordRisk, combined_risk, enumerate_known_sets
from sdckit.table import Attribute, Kind, Role, Schema, Table, ValueRange, read_table, write_table

__version__ = "0.1.0"

__all__ = [
    "Attribute",
    "Config",
    "ConfigError",
    "InputError",
    "Kind",
    "RecordRisk",
    "Role",
    "Schema",
    "SdcError",
    "SdcWarning",
    "Table",
    "ValueRange",
    "__version__",
    "combined_risk",
    "encode",
    "enumerate_known_sets",
    "frequencies",
    "load_config",
    "parse_config",
    "read_table",
    "write_table",
]
