"""``python -m respload`` and ``respload.cli.main``: the Rust CLI's own code, from Python."""

from __future__ import annotations

import io
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import respload
from respload.cli import main
from respload.testing import RedisServer


def test_help_lists_the_subcommands_and_run_flags() -> None:
    out = io.StringIO()
    assert main(["--help"], stdout=out) == 0
    for sub in ["run", "check", "redis-benchmark", "memtier"]:
        assert sub in out.getvalue()
    out = io.StringIO()
    assert main(["run", "--help"], stdout=out) == 0
    assert "Usage: respload run" in out.getvalue()
    for flag in ["--json <FILE>", "--connections", "--pipeline", "--cluster", "--hdr-log"]:
        assert flag in out.getvalue()
    out = io.StringIO()
    assert main(["--version"], stdout=out) == 0
    assert out.getvalue().strip() == f"respload {respload.__version__}"


def test_usage_and_spec_errors_exit_2_with_the_message_on_stderr(tmp_path: Path) -> None:
    err = io.StringIO()
    assert main(["run", "--connections", "many"], stderr=err) == 2
    assert "invalid value 'many' for '--connections <CONNECTIONS>'" in err.getvalue()
    spec = tmp_path / "bad.toml"
    spec.write_text("[load]\nconnections = 0\n")
    err = io.StringIO()
    assert main(["check", str(spec)], stderr=err) == 2
    assert err.getvalue() == (
        "respload: invalid spec at `load.connections`: 0 is out of range: "
        f"allowed is 1 to 1000000 (in {spec})\n"
    )


def test_check_prints_the_normalized_spec(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[target]\nurl = "redis://:pw@127.0.0.1:7000"\n[load]\nrequests = 5\n')
    out = io.StringIO()
    assert main(["check", str(spec)], stdout=out) == 0
    printed = json.loads(out.getvalue())
    assert printed["load"]["requests"] == 5
    assert printed["load"]["connections"] == 50
    assert "pw" not in out.getvalue()


def test_run_prints_the_table_and_writes_the_json_report(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    out, err = io.StringIO(), io.StringIO()
    report_file = tmp_path / "r.json"
    code = main(
        [
            "run",
            "--url",
            redis_server.url,
            "-n",
            "2000",
            "-c",
            "4",
            "--seed",
            "5",
            "--json",
            str(report_file),
        ],
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    assert "ALL STATS" in out.getvalue()
    report = respload.Report.from_json(report_file.read_text())
    assert report.totals.ops == 2000
    assert report.seed == 5
    assert redis_server.calls("get") + redis_server.calls("set") == 2000
    sets = next(line for line in out.getvalue().splitlines() if line.startswith("SET"))
    # The table's SET row: ops/s and p99 as the JSON report has them.
    assert sets.split()[1] == f"{report.commands['SET'].ops_per_sec:.2f}"
    assert f"{report.commands['SET'].latency_ms.p99:.5f}" in sets.split()
    assert "[main]" in err.getvalue()  # the live progress line went to stderr


def test_python_m_respload_runs_redis_benchmark_lines(redis_server: RedisServer) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "respload",
            "redis-benchmark",
            "-p",
            str(redis_server.port),
            "-t",
            "set,get",
            "-n",
            "1000",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["SET", "GET"]
    assert all("requests per second" in line for line in lines)
    assert redis_server.calls("set") == 1000 == redis_server.calls("get")


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "respload"
    assert script.exists() or shutil.which("respload")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert done.stdout.strip() == f"respload {respload.__version__}"


def test_ctrl_c_stops_the_run_and_prints_the_partial_report(redis_server: RedisServer) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "respload",
            "run",
            "--url",
            redis_server.url,
            "--duration",
            "60s",
            "-c",
            "2",
            "-q",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A suite started in the background of a non-interactive shell inherits SIGINT
        # ignored, and so would the child: Python would then never see the Ctrl-C.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 20
        while redis_server.calls("get") < 100 and time.monotonic() < deadline:
            time.sleep(0.1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=20)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert elapsed < 3, elapsed
    assert "ALL STATS" in stdout
    assert "interrupted, the report above is partial" in stderr
    # A second Ctrl-C is not needed; nothing is left running: the server saw the traffic stop.
    calls = redis_server.calls("get")
    time.sleep(0.3)
    assert redis_server.calls("get") == calls
