"""Fixtures: real redis-server processes on free loopback ports, always killed at the end."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


class RedisReplyError(Exception):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Redis:
    """A redis-server of our own, and a minimal RESP client to look at what it holds."""

    def __init__(
        self, port: int, proc: subprocess.Popen[bytes], password: str | None = None
    ) -> None:
        self.port = port
        self.password = password
        self.proc = proc
        self.url = f"redis://127.0.0.1:{port}"
        self.address = f"127.0.0.1:{port}"

    def target(self) -> dict[str, Any]:
        return {"url": self.url}

    def calls(self, command: str) -> int:
        """How many times the server ran `command` (INFO commandstats)."""
        info = self.call("INFO", "commandstats")
        m = re.search(rf"cmdstat_{command.lower()}:calls=(\d+)", info)
        return int(m.group(1)) if m else 0

    def stat(self, name: str) -> int:
        """A counter of INFO stats, e.g. total_connections_received."""
        m = re.search(rf"{name}:(\d+)", self.call("INFO", "stats"))
        assert m, name
        return int(m.group(1))

    def call(self, *args: str | int) -> Any:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            f = s.makefile("rb")
            if self.password is not None:
                s.sendall(_encode("AUTH", self.password))
                _read_reply(f)
            s.sendall(_encode(*args))
            return _read_reply(f)


def _encode(*args: str | int) -> bytes:
    parts = [f"*{len(args)}\r\n".encode()]
    for a in args:
        b = str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(parts)


def _read_reply(f: Any) -> Any:
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)[:-2]
        return data.decode()
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise RuntimeError(f"unexpected reply {line!r}")


def start_redis(tmp: Path, password: str | None = None) -> Redis:
    exe = shutil.which("redis-server")
    if exe is None:
        raise RuntimeError("redis-server is not on PATH: apt-get install redis-server")
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [
                exe,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(tmp),
                *(["--requirepass", password] if password else []),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        server = Redis(port, proc, password)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if server.call("PING") == "PONG":
                    return server
            except OSError:
                time.sleep(0.02)
        proc.kill()
        proc.wait()
    raise RuntimeError("redis-server did not start")


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[Redis]:
    server = start_redis(tmp_path)
    try:
        yield server
    finally:
        server.proc.kill()
        server.proc.wait()


@pytest.fixture
def redis_with_password(tmp_path: Path) -> Iterator[Redis]:
    server = start_redis(tmp_path, password="hunter2")
    try:
        yield server
    finally:
        server.proc.kill()
        server.proc.wait()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    return free_port()
