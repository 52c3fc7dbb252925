"""Risk measures: how exposed a record or a file is.

Importing this package registers every risk measure in :data:`sdckit.measures.RISK_MEASURES`, in
the order the command line lists them.
"""

import sdckit.risk.combined  # noqa: F401, I001
import sdckit.risk.reidentification  # noqa: F401, I001
import sdckit.risk.suda  # noqa: F401, I001
import sdckit.risk.linkage  # noqa: F401, I001
import sdckit.risk.attribute_disclosure  # noqa: F401, I001
