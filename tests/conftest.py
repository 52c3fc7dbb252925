"""What the tests share: the table builder, the reference data and hypothesis' profiles.

* :func:`make_table` builds a :class:`~sdckit.table.Table` from a frame and the roles of some of its
  columns (the others get :meth:`Schema.infer`'s defaults).
* The ``shared_data`` fixture finds the reference data of ``../shared/data`` (sdcMicro's and ARX's
  data sets, Adult): a test that needs a file the machine lacks is skipped with the path it looked
  for, or fails when ``SDCKIT_REQUIRE_DATA=1`` (``.ci/run`` sets it whenever the data is there, so
  the comparisons with sdcMicro and ARX never skip silently in CI).
* The longest files are collected first (:data:`LONGEST_FIRST`): ``make test`` hands whole files to
  two workers in collection order, so the long ones start at once and the short ones fill in, and
  both workers finish together instead of one running a long file alone at the end.
* hypothesis' profiles: ``dev`` (the default) and ``ci`` (deterministic: the same examples on every
  run), selected with ``HYPOTHESIS_PROFILE`` (``make test`` selects ``ci``). Both lift the deadline
  and the too-slow health check, which measure time: on a loaded machine they fail tests that are
  right. A test keeps its own ``max_examples``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

from sdckit.table import Attribute, Kind, Role, Schema, Table  # noqa: E402

# Reference data -----------------------------------------------------------------------------------

# Beside the project folder, as the benchmarks and sdckit.experiments look for it.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REQUIRE_DATA = "SDCKIT_REQUIRE_DATA"


class SharedData:
    """The reference data folder; calling it with a path inside gives that path once it exists."""

    def __init__(self, root: Path, required: bool) -> None:
        self.root = root
        self.required = required

    def __call__(self, *parts: str) -> Path:
        """``root / parts`` when it exists; else the test is skipped (or fails when the data is
        required), naming the path it looked for."""
        path = self.root.joinpath(*parts)
        if not path.exists():
            reason = f"the reference data {path} is absent (../shared/data)"
            if self.required:
                pytest.fail(f"{reason}, and {REQUIRE_DATA}=1 requires it", pytrace=False)
            pytest.skip(reason)
        return path


def data_required() -> bool:
    """Whether ``SDCKIT_REQUIRE_DATA`` asks that no test skips for want of the reference data."""
    return os.environ.get(REQUIRE_DATA, "").strip() not in ("", "0")


@pytest.fixture(scope="session")
def shared_data() -> SharedData:
    """The reference data of ``../shared/data``: ``shared_data("adult", "adult.csv")`` is the path
    of that file, or a skip naming it (a failure with ``SDCKIT_REQUIRE_DATA=1``)."""
    return SharedData(SHARED_DATA, data_required())


@pytest.fixture(scope="session")
def attack_server(tmp_path_factory):
    """One ``sdckit serve`` of tests/_attack_server.py for the query-server attacks' files, each with
    its own analyst's key (``.keys``), started once per worker."""
    from tests._attack_server import start

    server = start(tmp_path_factory.mktemp("attack-server"))
    yield server
    server.stop()


# Tables -------------------------------------------------------------------------------------------

ColumnDescription = Role | Kind | tuple[Role, Kind] | Attribute


def make_table(
    frame,
    *,
    weights: str | None = None,
    roles: Mapping[str, ColumnDescription] | None = None,
    **columns: ColumnDescription,
) -> Table:
    """A table of ``frame`` whose named columns are described and the others take
    :meth:`Schema.infer`'s defaults (insensitive; numeric if the column is numeric, else categorical).

    Each keyword names a column and says what it is: a :class:`Role` (with the default kind,
    categorical), a :class:`Kind` (insensitive), a ``(Role, Kind)`` pair, or a whole
    :class:`Attribute`. ``roles`` takes the same for column names that are not Python names.
    ``weights`` names the sampling weights column.
    """
    described = []
    for name, description in {**(roles or {}), **columns}.items():
        if isinstance(description, Attribute):
            assert description.name == name, (name, description)
            described.append(description)
        elif isinstance(description, Role):
            described.append(Attribute(name, role=description))
        elif isinstance(description, Kind):
            described.append(Attribute(name, kind=description))
        else:
            role, kind = description
            described.append(Attribute(name, role=role, kind=kind))
    data = Table.from_frame(frame).data
    missing = [attribute.name for attribute in described if attribute.name not in data.columns]
    assert not missing, f"make_table: {missing} are not columns of the frame ({data.columns})"
    return Table(data, Schema.infer(data, described), weights=weights)


# Order ---------------------------------------------------------------------------------------------

#: The files that take longest in ``make test`` (``pytest --durations``, longest first); the rest follow
#: in pytest's own order. Only the order of whole files changes: a file's tests keep theirs.
LONGEST_FIRST = (
    "test_install.py",
    "test_docs.py",
    "test_tables_optimal.py",
    "test_faults_server.py",
    "test_query_server.py",
    "test_cli_contract.py",
    "test_recoding.py",
    "test_types.py",
    "test_query_engine.py",
    "test_faults_processes.py",
    "test_ui.py",
    # Long in the fast lane too (10 s of CPU or more each, make test-fast under load): early, so that
    # test_vmdav_tree (late in the alphabet) no longer runs alone at the end.
    "test_scale.py",
    "test_sdcmicro_golden.py",
    "test_vmdav_tree.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the files of :data:`LONGEST_FIRST` first, in its order (a stable sort)."""
    rank = {name: position for position, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# Hypothesis ----------------------------------------------------------------------------------------

_TIMELESS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
# "dev" says derandomize=False itself: under a CI variable Hypothesis's default is derandomized.
settings.register_profile("dev", derandomize=False, **_TIMELESS)
settings.register_profile("ci", derandomize=True, print_blob=True, **_TIMELESS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
