"""The wheel as a user gets it (scripts/test-dist.sh runs this in a fresh venv where only the
wheel and pytest are installed, from a directory outside the repository, with no cargo or
rustc on PATH; the release workflow on each platform's runner): the package imports from
site-packages with its native module, type information and pytest plugin; a workload runs
against a throwaway redis-server (`respload.testing`); the `respload` console script runs the
CLI against the same server; the examples of the PyPI page run.

    python installed_smoke.py VERSION
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import respload
from respload.testing import redis_server

SPEC = """
[load]
connections = 2
requests = 500
[keys]
prefix = "cli:"
range = [0, 499]
distribution = "sequential"
[[commands]]
name = "set"
"""


def check_installed(version: str) -> None:
    package = Path(respload.__file__).parent
    assert "site-packages" in package.parts, f"respload imported from {package}"
    assert respload.__version__ == version, respload.__version__
    assert metadata.version("respload") == version
    # The files a user relies on besides the modules: type information and the plugin's
    # registration (the plugin itself runs in test_installed_plugin.py).
    for name in ("py.typed", "_native.pyi", "pytest_plugin.py", "testing.py", "cli.py"):
        assert (package / name).is_file(), f"missing from the wheel: respload/{name}"
    plugins = metadata.entry_points(group="pytest11")
    assert [e.value for e in plugins if e.name == "respload"] == ["respload.pytest_plugin"]


def check_run(url: str) -> None:
    report = respload.run(
        target={"url": url},
        load={"connections": 2, "requests": 1_000},
        keys={"prefix": "lib:", "range": [0, 999], "distribution": "sequential"},
        commands=[{"name": "set"}],
    )
    assert report.totals.ops == 1_000, report.totals.ops
    assert report.totals.errors == 0, report.totals.errors_by_kind


def check_console_script(url: str, version: str) -> None:
    script = Path(sys.executable).parent / "respload"
    shown = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == f"respload {version}", shown.stdout
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.toml"
        spec.write_text(SPEC)
        out = Path(tmp) / "report.json"
        subprocess.run(
            [script, "run", str(spec), "--url", url, "--json", str(out), "-q"],
            capture_output=True,
            check=True,
        )
        totals = json.loads(out.read_text())["totals"]
    assert totals["ops"] == 500, totals


def check_readme_examples() -> None:
    """The PyPI page (the wheel's description, bindings-python/README.md) shows code that runs:
    the first example as it is, the test function of the second on a throwaway server."""
    description = metadata.metadata("respload").get_payload()
    assert isinstance(description, str)
    blocks = re.findall(r"```python\n(.*?)```", description, re.S)
    assert len(blocks) >= 2, f"{len(blocks)} Python examples in the readme"
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(blocks[0], namespace)  # a workload against its own throwaway server
        exec(blocks[1], namespace)
        test = namespace["test_session_cache_meets_its_budget"]
        assert callable(test)
        with redis_server() as server:
            test(server.url)
    assert "ops/s" in out.getvalue(), out.getvalue()


def main() -> None:
    version = sys.argv[1]
    check_installed(version)
    with redis_server() as server:
        check_run(server.url)
        check_console_script(server.url, version)
        assert server.call("DBSIZE") == 1_500  # the library's 1,000 keys and the CLI's 500
    check_readme_examples()
    print(f"installed_smoke: respload {version} from the wheel: library, console script, readme ok")


if __name__ == "__main__":
    main()
