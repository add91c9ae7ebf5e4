"""The keyword fields of ``run()``, ``Runner()`` and ``Workload()`` and the limits of
``check()`` are typed from the core's schema (spec_types.pyi, _limits.pyi): mypy, run on a
user's code against the installed package, rejects an unknown or mistyped field and accepts
the fields the spec has."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GOOD = """
import respload
from respload.spec_types import TargetSpec

target: TargetSpec = {"url": "redis://127.0.0.1:1", "connect_timeout": "1s"}
workload = respload.Workload(
    target=target,
    load={"connections": 4, "requests": "all_keys", "rate": 1000.0},
    keys={"prefix": "k:", "range": [0, 99], "distribution": {"kind": "zipf"}},
    values={"size": [64, 512]},
    commands=[{"name": "get", "weight": 3}, {"template": ["SET", "{key}", "{value}"]}],
    thresholds={"p99_ms": 5.0, "commands": {"GET": {"error_rate": 0.0}}},
)
runner = respload.Runner(workload, load={"requests": 10}, shard=(0, 2))


def check(report: respload.Report) -> None:
    report.check(p99_ms=5, error_rate=0.0, commands={"GET": {"p50_ms": 1}})
    respload.compare(report, report).check(p99_ms="+10%", ops_per_sec=-5)
"""

BAD = """
import respload


def bad(report: respload.Report) -> None:
    respload.run(target={"url": "redis://127.0.0.1:1"}, lod={"connections": 4})
    respload.Workload(load={"connections": "four"})
    respload.Workload(keys={"distribution": "zipfian"})
    respload.Runner(None, target={"prot": 6379})
    report.check(p98_ms=5)
    respload.compare(report, report).check(p98_ms="+10%")
"""


def mypy(tmp_path: Path, name: str, code: str) -> tuple[int, str]:
    source = tmp_path / f"{name}.py"
    source.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--config-file",
            "",  # not the repository's: the user's code against the installed package
            str(source),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_mypy_accepts_the_specs_fields(tmp_path: Path) -> None:
    code, out = mypy(tmp_path, "good", GOOD)
    assert code == 0, out


def test_mypy_rejects_unknown_and_mistyped_fields(tmp_path: Path) -> None:
    code, out = mypy(tmp_path, "bad", BAD)
    assert code == 1, out
    lines = [line for line in out.splitlines() if ": error:" in line]
    assert len(lines) == 6, out
    assert 'Unexpected keyword argument "lod" for "run"' in lines[0]
    assert 'has type "str", TypedDict item "connections" has type "int"' in lines[1]
    assert "'zipfian'" in lines[2]
    assert "'zipf'" in lines[2]
    assert 'Extra key "prot" for TypedDict "TargetSpec"' in lines[3]
    assert 'Unexpected keyword argument "p98_ms" for "check" of "Report"' in lines[4]
    assert 'Unexpected keyword argument "p98_ms" for "check" of "Comparison"' in lines[5]
