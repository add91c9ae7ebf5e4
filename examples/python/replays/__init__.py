"""Replays of the published benchmark procedures in ``examples/scenarios/`` (docs/scenarios.md).

Each module holds one procedure: ``local()`` starts the servers it needs on this machine and
gives the scenario's variables for them, ``check(report, local)`` turns the report into a
:class:`Verdict` (the figures the publication showed, and what must hold). ``replay.py`` runs
them from the command line. The notebooks under ``examples/notebooks/`` run the same scenario
files with the package's public API alone (they import nothing from here).
"""

from __future__ import annotations

from types import ModuleType

from . import cluster_sizing_3x2, instance_comparison, managed_cache_guide, ram_flash_tiering
from .common import (
    SCENARIOS_DIR,
    DestructiveDrillError,
    Verdict,
    run_scenario,
    spec_path,
)

#: Every replay, by scenario file name (without ``.toml``).
REPLAYS: dict[str, ModuleType] = {
    "managed-cache-guide": managed_cache_guide,
    "cluster-sizing-3x2": cluster_sizing_3x2,
    "ram-flash-tiering": ram_flash_tiering,
    "instance-comparison": instance_comparison,
}

__all__ = [
    "REPLAYS",
    "SCENARIOS_DIR",
    "DestructiveDrillError",
    "Verdict",
    "run_scenario",
    "spec_path",
]
