"""Throwaway ``redis-server`` processes for tests, notebooks and examples.

::

    from respload.testing import redis_cluster, redis_server

    with redis_server() as redis:                 # a server on a free 127.0.0.1 port
        report = respload.run(target={"url": redis.url}, load={"requests": 1000})
        assert redis.call("DBSIZE") > 0

    with redis_cluster(primaries=3, replicas=1) as cluster:
        report = respload.run(target=cluster.target(), load={"requests": 1000})

    with redis_server(tls=True) as redis:         # TLS only, with a throwaway CA
        redis.url                                 # rediss://127.0.0.1:PORT
        report = respload.run(target=redis.target(), load={"requests": 1000})

    with ray_cluster(nodes=3):                    # 3 Ray nodes here (respload[ray])
        report = respload.distributed.run(spec, hosts=3)

The servers are started by the ``respload-testing`` crate, as the core's tests and the Node
package's ``respload/testing`` start theirs. Each runs with persistence off and its files in
a temporary directory, under a small shell watchdog holding a pipe from this process: when
the pipe closes (the ``with`` block ends, or this process exits, crashes or is killed, even
with SIGKILL) the watchdog kills ``redis-server`` and removes its directory. Nothing outlives
the Python process.

The binary is ``redis-server`` on ``PATH``, or ``$RESPLOAD_REDIS_SERVER``, or the
``redis_server`` argument; the cluster helper also needs ``redis-cli`` (``$RESPLOAD_REDIS_CLI``).
``tls=True`` makes its certificates in-process.

:func:`connect_redis` gives a server already running (its URL) the same interface, without
starting or stopping it: the pytest fixtures use it for ``--respload-url`` / ``$RESPLOAD_URL``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import ssl
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from respload import _native

if TYPE_CHECKING:
    from respload.spec_types import TargetSpec, TlsSpec

__all__ = [
    "RedisCluster",
    "RedisNotFoundError",
    "RedisServer",
    "ReplyError",
    "TlsCerts",
    "connect_redis",
    "free_port",
    "ray_cluster",
    "redis_cluster",
    "redis_server",
    "start_redis",
]

_HOST = "127.0.0.1"
Reply = Any
"""A reply: ``str`` (simple and bulk strings), ``int``, ``None``, or a list of replies."""


class RedisNotFoundError(RuntimeError):
    """A program the helpers run is not installed: ``redis-server`` or ``redis-cli``."""


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


class TlsCerts:
    """Throwaway certificates made by ``tls=True`` (EC P-256, made in-process).

    ``ca_file`` signs ``cert_file`` (the server's, for ``127.0.0.1`` and ``localhost``) and
    ``client_cert`` (for mutual TLS). The paths are strings, ready for a workload's
    ``target.tls``. The directory is removed when the server (or every node of the cluster)
    stops, or when this process ends, whatever way it ends.
    """

    dir: str
    """The directory holding every file."""
    ca_file: str
    """The CA certificate (PEM): ``target.tls.ca_file``."""
    cert_file: str
    """The server's certificate (``--tls-cert-file``)."""
    key_file: str
    """The server's private key (``--tls-key-file``)."""
    client_cert: str
    """A client certificate signed by the CA: ``target.tls.cert``."""
    client_key: str
    """Its private key: ``target.tls.key``."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        self.ca_file = os.path.join(directory, "ca.crt")
        self.cert_file = os.path.join(directory, "server.crt")
        self.key_file = os.path.join(directory, "server.key")
        self.client_cert = os.path.join(directory, "client.crt")
        self.client_key = os.path.join(directory, "client.key")

    def target_tls(self, client_cert: bool = False) -> TlsSpec:
        """A workload ``target.tls`` trusting the CA, with the client certificate if asked."""
        tls: TlsSpec = {"ca_file": self.ca_file}
        if client_cert:
            tls["cert"] = self.client_cert
            tls["key"] = self.client_key
        return tls

    def ssl_context(self, client_cert: bool = True) -> ssl.SSLContext:
        """A client :class:`ssl.SSLContext` trusting the CA (with the client certificate)."""
        context = ssl.create_default_context(cafile=self.ca_file)
        if client_cert:
            context.load_cert_chain(self.client_cert, self.client_key)
        return context

    def remove(self) -> None:
        """Remove the directory now (idempotent): stopping its servers does it too."""
        shutil.rmtree(self.dir, ignore_errors=True)

    def __repr__(self) -> str:
        return f"<TlsCerts {self.dir}>"


class RedisServer:
    """A ``redis-server`` started by :func:`redis_server` or :func:`start_redis`."""

    host: str
    """``127.0.0.1``."""
    port: int
    """Its port: the TLS port when started with ``tls=True`` (it then has no plain port)."""
    password: str | None
    dir: Path
    """Its working directory (removed when it stops)."""
    tls: TlsCerts | None
    """The certificates when started with ``tls=True``, else ``None``."""
    tls_auth_clients: bool
    """Whether it requires a client certificate (``--tls-auth-clients yes``)."""

    def __init__(
        self,
        port: int,
        password: str | None,
        directory: Path,
        native: _native.TestServer | None,
        tls: TlsCerts | None = None,
        tls_auth_clients: bool = False,
    ) -> None:
        self.host = _HOST
        self.port = port
        self.password = password
        self.dir = directory
        self.tls = tls
        self.tls_auth_clients = tls_auth_clients
        self._native = native
        # The helper's own connection (the respload-testing crate's client).
        self._conn: _native.TestClient | None = None
        # connect_redis to rediss://: TLS trusting Mozilla's roots.
        self._system_tls = False
        # Set by connect_redis: a server someone else runs, reached by its own URL.
        self._url: str | None = None
        self._user: str | None = None
        self._db = 0
        self._stopped = False

    @classmethod
    def _of(
        cls, native: _native.TestServer, password: str | None, tls_auth_clients: bool
    ) -> RedisServer:
        tls = TlsCerts(native.certs_dir) if native.certs_dir is not None else None
        return cls(native.port, password, Path(native.dir), native, tls, tls_auth_clients)

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``, as the report's ``server.address`` and cluster ``nodes`` say."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT`` (``rediss://`` with TLS), with the password when one
        was set (percent-encoded); for :func:`connect_redis`, the URL it was given."""
        if self._url is not None:
            return self._url
        auth = ""
        if self.password is not None:
            # Unencoded, a `/`, `?`, `#`, `@` or `%` in the password would end or garble it.
            auth = f":{urllib.parse.quote(self.password, safe='')}@"
        scheme = "rediss" if self.tls is not None else "redis"
        return f"{scheme}://{auth}{self.host}:{self.port}"

    def target(self) -> TargetSpec:
        """A workload ``target`` for this server: its URL and, with TLS, ``tls`` trusting the
        throwaway CA (and the client certificate when the server requires one)."""
        target: TargetSpec = {"url": self.url}
        if self.tls is not None:
            target["tls"] = self.tls.target_tls(client_cert=self.tls_auth_clients)
        return target

    @property
    def running(self) -> bool:
        """Whether the server is still up; for :func:`connect_redis`, whether ``stop()`` was
        not called yet."""
        if self._native is None:
            return not self._stopped
        return self._native.running()

    def call(self, *args: str | int | bytes) -> Reply:
        """Send one command and return its reply; an error reply raises :class:`ReplyError`.

        One connection is kept open (authenticated when a password was set; over TLS, with
        the client certificate, when the server has TLS): the respload-testing crate's
        client, as Node's ``command()`` uses. A connection that fails raises
        ``ConnectionError``; the next call connects again."""
        reply = self._send(args)
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def _send(self, args: Sequence[str | int | bytes]) -> Reply:
        if self._conn is None:
            tls = self.tls
            self._conn = _native.TestClient(
                self.host,
                self.port,
                tls=tls is not None or self._system_tls,
                ca_file=tls.ca_file if tls is not None else None,
                cert=tls.client_cert if tls is not None else None,
                key=tls.client_key if tls is not None else None,
                user=self._user,
                password=self.password,
                db=self._db,
            )
        return self._conn.call([a if isinstance(a, bytes) else str(a).encode() for a in args])

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
        self._conn = None

    def stop(self) -> None:
        """Stop the server and remove its directory, and its certificates once no server
        uses them (a cluster's nodes share the cluster's) (idempotent). For
        :func:`connect_redis`, only the helper's own connection is closed: the server is
        someone else's."""
        self._close()
        self._stopped = True
        if self._native is not None:
            self._native.stop()

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<RedisServer {self.address}{'' if self.running else ' stopped'}>"


def connect_redis(url: str, *, timeout: float = 10.0) -> RedisServer:
    """A :class:`RedisServer` for a server already running at ``url`` (``redis://`` or
    ``rediss://``, with user, password and database as respload reads them), once it answers
    PING: ``url`` and ``target()`` give ``url`` back, ``call()`` authenticates and selects the
    database, ``dir`` is the server's working directory when ``CONFIG GET dir`` tells it (else
    ``Path()``), and ``stop()`` closes only the helper's connection. ``rediss://`` is verified
    against Mozilla's trusted CAs (as respload's own runs verify it by default).
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise ValueError(f"url {url!r}: expected redis://HOST:PORT[/DB] or rediss://...")
    try:
        port = parts.port or 6379
    except ValueError as e:
        raise ValueError(f"url {url!r}: {e}") from None
    unquote = urllib.parse.unquote
    query = dict(urllib.parse.parse_qsl(parts.query))
    password = query.get("password", unquote(parts.password) if parts.password else None)
    user = query.get("user", unquote(parts.username) if parts.username else None)
    db_text = query.get("db", parts.path.strip("/") or "0")
    if not db_text.isdigit():
        raise ValueError(f"url {url!r}: database {db_text!r} is not a number")
    server = RedisServer(port, password, Path(), None)
    server.host = parts.hostname or _HOST
    server._url, server._user, server._db = url, user or None, int(db_text)
    if parts.scheme == "rediss":
        server._system_tls = True
    deadline = time.monotonic() + timeout
    while True:
        try:
            if server.call("PING") == "PONG":
                break
        except OSError as e:
            server._close()
            if time.monotonic() > deadline:
                raise ConnectionError(f"no redis server answers at {url}: {e}") from None
            time.sleep(0.1)
    with contextlib.suppress(ReplyError):
        found = server.call("CONFIG", "GET", "dir")
        if isinstance(found, list) and len(found) == 2:
            server.dir = Path(str(found[1]))
    return server


def start_redis(
    *,
    password: str | None = None,
    args: Sequence[str] = (),
    redis_server: str | None = None,
    start_timeout: float = 10.0,
    tls: bool = False,
    tls_auth_clients: bool = False,
) -> RedisServer:
    """Start a ``redis-server`` on a free 127.0.0.1 port and return it once it accepts
    connections.

    ``password`` sets ``requirepass`` (and ``masterauth``); ``args`` are extra
    ``redis-server`` arguments (``["--maxmemory", "10mb"]``). ``tls=True`` makes throwaway
    certificates (:class:`TlsCerts`, in ``server.tls``) and serves TLS only: ``--tls-port``
    on the free port, ``--port 0``; ``tls_auth_clients=True`` also requires a client
    certificate (mutual TLS). Call ``stop()`` when done, or use :func:`redis_server`, which
    always does. Raises :class:`RedisNotFoundError` when ``redis-server`` is missing,
    ``ValueError`` for options that do not fit together, ``RuntimeError`` (with the tail of
    its log) when it does not start.
    """
    [server] = _start(None, password, args, redis_server, start_timeout, tls, tls_auth_clients)
    return server


def _start(
    cluster: tuple[int, int] | None,
    password: str | None,
    args: Sequence[str],
    redis_server: str | None,
    start_timeout: float,
    tls: bool,
    tls_auth_clients: bool,
) -> list[RedisServer]:
    """The servers the native module starts (a cluster's nodes, primaries first)."""
    try:
        natives = _native.start_servers(
            cluster=cluster,
            password=password,
            args=list(args),
            tls=tls,
            tls_auth_clients=tls_auth_clients,
            redis_server=redis_server,
            start_timeout=start_timeout,
        )
    except FileNotFoundError as e:
        raise RedisNotFoundError(str(e)) from None
    return [RedisServer._of(n, password, tls_auth_clients) for n in natives]


@contextlib.contextmanager
def redis_server(
    *,
    password: str | None = None,
    args: Sequence[str] = (),
    redis_server: str | None = None,
    tls: bool = False,
    tls_auth_clients: bool = False,
) -> Iterator[RedisServer]:
    """A ``redis-server`` for the duration of a ``with`` block (see :func:`start_redis`),
    stopped and its directory (and certificates) removed whatever happens."""
    server = start_redis(
        password=password,
        args=args,
        redis_server=redis_server,
        tls=tls,
        tls_auth_clients=tls_auth_clients,
    )
    try:
        yield server
    finally:
        server.stop()


class RedisCluster:
    """A Redis Cluster of :class:`RedisServer` nodes, started by :func:`redis_cluster`."""

    nodes: list[RedisServer]
    """Every node, primaries first as created (a failover may change roles)."""
    password: str | None
    tls: TlsCerts | None
    """The certificates every node shares when started with ``tls=True``, else ``None``."""
    tls_auth_clients: bool
    """Whether the nodes require a client certificate."""

    def __init__(
        self,
        nodes: list[RedisServer],
        password: str | None,
        tls: TlsCerts | None = None,
        tls_auth_clients: bool = False,
    ) -> None:
        self.nodes = nodes
        self.password = password
        self.tls = tls
        self.tls_auth_clients = tls_auth_clients

    @property
    def seeds(self) -> list[str]:
        """``host:port`` of every node, for ``target.cluster_seeds``."""
        return [n.address for n in self.nodes]

    @property
    def seed_urls(self) -> list[str]:
        """``redis://`` (``rediss://``) URL of every node (with the password when one was
        set)."""
        return [n.url for n in self.nodes]

    @property
    def url(self) -> str:
        """The first node's URL."""
        return self.nodes[0].url

    def target(self) -> TargetSpec:
        """A workload ``target`` for this cluster: cluster mode, every node a seed, and with
        TLS, ``tls`` as :meth:`RedisServer.target` gives it."""
        target: TargetSpec = {"url": self.url, "cluster": True, "cluster_seeds": self.seeds}
        if self.tls is not None:
            target["tls"] = self.tls.target_tls(client_cert=self.tls_auth_clients)
        return target

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
        """Stop every node and remove the certificates (idempotent)."""
        for n in self.nodes:
            n.stop()
        if self.tls is not None:
            self.tls.remove()

    def __repr__(self) -> str:
        return f"<RedisCluster {' '.join(self.seeds)}>"


@contextlib.contextmanager
def redis_cluster(
    primaries: int = 3,
    replicas: int = 1,
    *,
    password: str | None = None,
    args: Sequence[str] = (),
    redis_server: str | None = None,
    start_timeout: float = 60.0,
    tls: bool = False,
    tls_auth_clients: bool = False,
) -> Iterator[RedisCluster]:
    """A Redis Cluster of ``primaries * (1 + replicas)`` local nodes for a ``with`` block.

    Each node is cluster-enabled (``cluster-node-timeout 2000``,
    ``repl-diskless-sync-delay 0``, its own bus port); the cluster is created with
    ``redis-cli --cluster create ... --cluster-yes`` and yielded once every node says
    ``cluster_state:ok`` and lists every replica in ``CLUSTER SLOTS``. Every node is stopped
    at the end, whatever happens. ``primaries`` must be at least 3 (Redis Cluster's minimum).

    ``tls=True``: one set of throwaway certificates for the cluster (``cluster.tls``), every
    node TLS only (as :func:`start_redis`) with ``--tls-cluster yes`` and
    ``--tls-replication yes``, so the cluster bus and replication use TLS too, and the
    cluster is created with ``redis-cli --tls``. ``tls_auth_clients=True`` requires client
    certificates, the nodes' own included (they present their server certificate).
    """
    if replicas < 0:
        raise ValueError(f"replicas = {replicas}: must be 0 or more")
    nodes = _start(
        (primaries, replicas), password, args, redis_server, start_timeout, tls, tls_auth_clients
    )
    cluster = RedisCluster(nodes, password, nodes[0].tls, tls_auth_clients)
    try:
        yield cluster
    finally:
        cluster.stop()


@contextlib.contextmanager
def ray_cluster(nodes: int = 3, *, cpus_per_node: int = 1) -> Iterator[str]:
    """A Ray cluster of ``nodes`` nodes on this machine (``ray.cluster_utils.Cluster``: a
    head and ``nodes - 1`` workers, ``cpus_per_node`` logical CPUs and a 100 MiB object store
    each, no dashboard), with this process connected to it, for a ``with`` block; yields its
    address. :func:`respload.distributed.run` then places one host per node. Ray is shut
    down and every node stopped at the end. Needs ``pip install 'respload[ray]'``; starting
    takes a few seconds."""
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError:
        raise ImportError(
            "ray_cluster needs Ray: pip install 'respload[ray]' (or pip install ray)"
        ) from None
    import logging

    node: dict[str, Any] = {"num_cpus": cpus_per_node, "object_store_memory": 100 * 2**20}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(**node)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, logging_level=logging.WARNING)
        yield str(cluster.address)
    finally:
        ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
