"""Throwaway ``redis-server`` processes for tests, notebooks and examples.

::

    from respload.testing import redis_cluster, redis_server

    with redis_server() as redis:                 # a server on a free 127.0.0.1 port
        report = respload.run(target={"url": redis.url}, load={"requests": 1000})
        assert redis.call("DBSIZE") > 0

    with redis_cluster(primaries=3, replicas=1) as cluster:
        report = respload.run(target=cluster.target(), load={"requests": 1000})

Each server runs with persistence off and its files in a temporary directory, under a small
shell watchdog holding a pipe from this process: when the pipe closes (the ``with`` block
ends, or this process exits, crashes or is killed, even with SIGKILL) the watchdog stops
``redis-server`` and removes its directory. Nothing outlives the Python process.

The binary is ``redis-server`` on ``PATH``, or ``$RESPLOAD_REDIS_SERVER``, or the
``redis_server`` argument; the cluster helper also needs ``redis-cli`` (``$RESPLOAD_REDIS_CLI``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "RedisCluster",
    "RedisNotFoundError",
    "RedisServer",
    "ReplyError",
    "free_port",
    "redis_cluster",
    "redis_server",
    "start_redis",
]

# Holds the server's pid; stops it and removes its directory when stdin closes.
_WATCHDOG = """
dir=$1; shift
"$@" &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 143' HUP INT TERM
read -r _ || true
"""

_HOST = "127.0.0.1"
Reply = Any
"""A reply: ``str`` (simple and bulk strings), ``int``, ``None``, or a list of replies."""


class RedisNotFoundError(RuntimeError):
    """``redis-server`` (or ``redis-cli``) is not installed or cannot run."""


class ReplyError(Exception):
    """An error reply; ``code`` is its first word (``ERR``, ``WRONGTYPE``, ``MOVED``, ...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = message.split(" ", 1)[0]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (bound, then released)."""
    with socket.socket() as s:
        s.bind((_HOST, 0))
        return int(s.getsockname()[1])


def _binary(given: str | None, env: str, name: str, package: str) -> str:
    exe = given or os.environ.get(env) or name
    found = shutil.which(exe)
    if found is None:
        raise RedisNotFoundError(
            f"{exe} is not on PATH: install it (Debian/Ubuntu: apt-get install {package}; "
            f"macOS: brew install redis) or set {env} to the binary"
        )
    return found


def _encode(args: Sequence[str | int | bytes]) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(parts)


def _read_reply(f: BinaryIO) -> Reply:
    line = f.readline()
    if not line:
        raise ConnectionError("the server closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        return ReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace")
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise ConnectionError(f"unexpected reply {line!r}")


class RedisServer:
    """A ``redis-server`` started by :func:`redis_server` or :func:`start_redis`."""

    host: str
    """``127.0.0.1``."""
    port: int
    password: str | None
    dir: Path
    """Its working directory (removed when it stops)."""

    def __init__(
        self,
        port: int,
        password: str | None,
        directory: Path,
        watchdog: subprocess.Popen[bytes],
    ) -> None:
        self.host = _HOST
        self.port = port
        self.password = password
        self.dir = directory
        self._watchdog = watchdog
        self._conn: tuple[socket.socket, BinaryIO] | None = None

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``, as the report's ``server.address`` and cluster ``nodes`` say."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT``, with the password when one was set."""
        auth = f":{self.password}@" if self.password is not None else ""
        return f"redis://{auth}{self.host}:{self.port}"

    def target(self) -> dict[str, Any]:
        """A workload ``target`` for this server."""
        return {"url": self.url}

    @property
    def running(self) -> bool:
        """Whether the server (its watchdog) is still up."""
        return self._watchdog.poll() is None

    def call(self, *args: str | int | bytes) -> Reply:
        """Send one command and return its reply; an error reply raises :class:`ReplyError`.

        One connection is kept open (authenticated when a password was set)."""
        reply = self._send(args)
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def _send(self, args: Sequence[str | int | bytes]) -> Reply:
        if self._conn is None:
            sock = socket.create_connection((self.host, self.port), timeout=10)
            f: BinaryIO = sock.makefile("rb")
            self._conn = (sock, f)
            if self.password is not None:
                self._send(["AUTH", self.password])
        sock, f = self._conn
        try:
            sock.sendall(_encode(args))
            return _read_reply(f)
        except OSError:
            self._close()
            raise

    def info(self, section: str = "") -> dict[str, str]:
        """``INFO [section]`` as a dict of its ``name:value`` lines."""
        text = self.call("INFO", section) if section else self.call("INFO")
        return dict(
            line.split(":", 1) for line in str(text).splitlines() if ":" in line and line[0] != "#"
        )

    def calls(self, command: str) -> int:
        """How many times the server ran ``command`` (``INFO commandstats``; 0 if never)."""
        found = re.search(
            rf"cmdstat_{command.lower()}:calls=(\d+)", str(self.call("INFO", "commandstats"))
        )
        return int(found.group(1)) if found else 0

    def _close(self) -> None:
        if self._conn is not None:
            sock, f = self._conn
            self._conn = None
            with contextlib.suppress(OSError):
                f.close()
                sock.close()

    def stop(self) -> None:
        """Stop the server and remove its directory (idempotent)."""
        self._close()
        if self._watchdog.stdin is not None and not self._watchdog.stdin.closed:
            with contextlib.suppress(OSError):
                self._watchdog.stdin.close()
        try:
            self._watchdog.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._watchdog.kill()
            self._watchdog.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<RedisServer {self.address}{'' if self.running else ' stopped'}>"


def start_redis(
    *,
    password: str | None = None,
    args: Sequence[str] = (),
    redis_server: str | None = None,
    start_timeout: float = 10.0,
) -> RedisServer:
    """Start a ``redis-server`` on a free 127.0.0.1 port and return it once it answers PING.

    ``password`` sets ``requirepass`` (and ``masterauth``); ``args`` are extra
    ``redis-server`` arguments (``["--maxmemory", "10mb"]``). Call ``stop()`` when done, or
    use :func:`redis_server`, which always does. Raises :class:`RedisNotFoundError` when the
    binary is missing.
    """
    exe = _binary(redis_server, "RESPLOAD_REDIS_SERVER", "redis-server", "redis-server")
    last = ""
    for _ in range(5):  # another process may take the port between our probe and the bind
        port = free_port()
        directory = Path(tempfile.mkdtemp(prefix="respload-redis-"))
        argv = [
            exe,
            "--port",
            str(port),
            "--bind",
            _HOST,
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--dir",
            str(directory),
            "--logfile",
            "redis.log",
        ]
        if password is not None:
            argv += ["--requirepass", password, "--masterauth", password]
        argv += list(args)
        watchdog = subprocess.Popen(
            ["sh", "-c", _WATCHDOG, "respload-watchdog", str(directory), *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        server = RedisServer(port, password, directory, watchdog)
        log = directory / "redis.log"
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline and server.running:
            try:
                if server.call("PING") == "PONG":
                    return server
            except ReplyError as e:
                if e.code != "LOADING":
                    server.stop()
                    raise RuntimeError(f"redis-server on port {port}: {e}") from None
            except OSError:
                server._close()
            time.sleep(0.02)
        with contextlib.suppress(OSError):
            last = log.read_text()
        server.stop()
        if "Address already in use" not in last:
            break
    tail = "\n".join(last.strip().splitlines()[-10:])
    raise RuntimeError(f"redis-server did not start\n--- redis-server log ---\n{tail}")


@contextlib.contextmanager
def redis_server(
    *,
    password: str | None = None,
    args: Sequence[str] = (),
    redis_server: str | None = None,
) -> Iterator[RedisServer]:
    """A ``redis-server`` for the duration of a ``with`` block (see :func:`start_redis`),
    stopped and its directory removed whatever happens."""
    server = start_redis(password=password, args=args, redis_server=redis_server)
    try:
        yield server
    finally:
        server.stop()


class RedisCluster:
    """A Redis Cluster of :class:`RedisServer` nodes, started by :func:`redis_cluster`."""

    nodes: list[RedisServer]
    """Every node, primaries first as created (a failover may change roles)."""
    password: str | None

    def __init__(self, nodes: list[RedisServer], password: str | None) -> None:
        self.nodes = nodes
        self.password = password

    @property
    def seeds(self) -> list[str]:
        """``host:port`` of every node, for ``target.cluster_seeds``."""
        return [n.address for n in self.nodes]

    @property
    def seed_urls(self) -> list[str]:
        """``redis://`` URL of every node (with the password when one was set)."""
        return [n.url for n in self.nodes]

    @property
    def url(self) -> str:
        """The first node's URL."""
        return self.nodes[0].url

    def target(self) -> dict[str, Any]:
        """A workload ``target`` for this cluster: cluster mode, every node a seed."""
        return {"url": self.url, "cluster": True, "cluster_seeds": self.seeds}

    def primaries(self) -> list[RedisServer]:
        """The nodes that are primaries now (``ROLE``)."""
        return [n for n in self.nodes if n.running and n.call("ROLE")[0] == "master"]

    def replicas(self) -> list[RedisServer]:
        """The nodes that are replicas now."""
        return [n for n in self.nodes if n.running and n.call("ROLE")[0] == "slave"]

    def owner(self, key: str) -> RedisServer:
        """The primary serving ``key``'s slot now."""
        slot = int(self.nodes[0].call("CLUSTER", "KEYSLOT", key))
        for start, end, primary, *_ in self.nodes[0].call("CLUSTER", "SLOTS"):
            if int(start) <= slot <= int(end):
                return next(n for n in self.nodes if n.port == int(primary[1]))
        raise RuntimeError(f"no node serves slot {slot}")

    def stop(self) -> None:
        """Stop every node (idempotent)."""
        for n in self.nodes:
            n.stop()

    def __repr__(self) -> str:
        return f"<RedisCluster {' '.join(self.seeds)}>"


def _cluster_ready(cluster: RedisCluster, expected_nodes: int) -> bool:
    for node in cluster.nodes:
        if "cluster_state:ok" not in str(node.call("CLUSTER", "INFO")):
            return False
        # A replica is listed in CLUSTER SLOTS once it has synced with its primary.
        listed = {int(n[1]) for entry in node.call("CLUSTER", "SLOTS") for n in entry[2:]}
        if len(listed) != expected_nodes:
            return False
    return True


@contextlib.contextmanager
def redis_cluster(
    primaries: int = 3,
    replicas: int = 1,
    *,
    password: str | None = None,
    args: Sequence[str] = (),
    redis_server: str | None = None,
    start_timeout: float = 60.0,
) -> Iterator[RedisCluster]:
    """A Redis Cluster of ``primaries * (1 + replicas)`` local nodes for a ``with`` block.

    Each node is cluster-enabled (``cluster-node-timeout 2000``,
    ``repl-diskless-sync-delay 0``, its own bus port); the cluster is created with
    ``redis-cli --cluster create ... --cluster-yes`` and yielded once every node says
    ``cluster_state:ok`` and lists every replica in ``CLUSTER SLOTS``. Every node is stopped
    at the end, whatever happens. ``primaries`` must be at least 3 (Redis Cluster's minimum).
    """
    if primaries < 3:
        raise ValueError(f"primaries = {primaries}: Redis Cluster needs at least 3")
    if replicas < 0:
        raise ValueError(f"replicas = {replicas}: must be 0 or more")
    cli = _binary(None, "RESPLOAD_REDIS_CLI", "redis-cli", "redis-tools")
    cluster = RedisCluster([], password)
    try:
        for _ in range(primaries * (1 + replicas)):
            node_args = [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "2000",
                "--cluster-port",
                str(free_port()),
                "--repl-diskless-sync-delay",
                "0",
                *args,
            ]
            cluster.nodes.append(
                start_redis(password=password, args=node_args, redis_server=redis_server)
            )
        auth = ["-a", password, "--no-auth-warning"] if password is not None else []
        created = subprocess.run(
            [
                cli,
                *auth,
                "--cluster",
                "create",
                *cluster.seeds,
                "--cluster-replicas",
                str(replicas),
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=start_timeout,
        )
        if created.returncode != 0:
            raise RuntimeError(
                f"redis-cli --cluster create failed:\n{created.stdout}{created.stderr}"
            )
        deadline = time.monotonic() + start_timeout
        while not _cluster_ready(cluster, len(cluster.nodes)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster {cluster.seeds} did not come up in time")
            time.sleep(0.1)
        yield cluster
    finally:
        cluster.stop()
