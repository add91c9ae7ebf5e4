"""The exceptions of respload: one class per kind of core error, under :class:`RespLoadError`,
and the warning :class:`UntrustedReportWarning`.

The native module raises these directly, mapped from the core's error codes
(``ERR_RESPLOAD_SPEC``, ``ERR_RESPLOAD_CONNECT``, ...). Error replies from the server during a
run are not exceptions: they are counted in the report (``report.totals.errors_by_kind``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import ValidityCheck

__all__ = [
    "AuthError",
    "BarrierError",
    "ConnectError",
    "FileError",
    "InternalError",
    "ProtocolError",
    "RespLoadError",
    "SpecError",
    "TlsError",
    "UntrustedReportWarning",
]


class RespLoadError(Exception):
    """Base class of every error respload raises.

    Attributes:
        code: the core's stable error code, e.g. ``"ERR_RESPLOAD_SPEC"``.
        reason: the underlying reason, without the context of the message (the operating
            system's text for a connect or file error, e.g. ``"Connection refused (os error
            111)"``); the message itself when none was given.
    """

    code: str = "ERR_RESPLOAD"

    def __init__(self, message: str, *, code: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.reason = message if reason is None else reason

    @property
    def message(self) -> str:
        """The full message (the same as ``str(err)``)."""
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        return self.message


class SpecError(RespLoadError, ValueError):
    """The workload spec is invalid; raised before any traffic is sent.

    Attributes:
        path: dotted path of the field, e.g. ``"load.connections"`` or
            ``"phases[1].keys.range"`` (``""`` for the spec as a whole).
        reason: what is wrong and what is allowed, including the bad value.
    """

    code = "ERR_RESPLOAD_SPEC"

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        reason: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code, reason=reason)
        self.path = path


class ConnectError(RespLoadError, ConnectionError):
    """The server could not be reached (refused, unreachable, timed out).

    Attributes:
        address: the address that was tried, e.g. ``"127.0.0.1:6379"``.
        errno: the operating system's error number, when there is one.
        reason: the operating system's text, e.g. ``"Connection refused (os error 111)"``.
    """

    code = "ERR_RESPLOAD_CONNECT"

    def __init__(
        self,
        message: str,
        *,
        address: str = "",
        errno: int | None = None,
        reason: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code, reason=reason)
        self.address = address
        self.errno = errno


class TlsError(ConnectError):
    """The TLS handshake failed: the server's certificate was not trusted (unknown CA, wrong
    name, expired), the server wants or refused a client certificate, or the port does not
    speak TLS. Raised before any traffic; a :class:`ConnectError` too.

    Attributes:
        address: the server's address.
        reason: what went wrong and which setting changes it (``target.tls.ca_file``, ...).
    """

    code = "ERR_RESPLOAD_TLS"

    def __init__(
        self,
        message: str,
        *,
        address: str = "",
        reason: str = "",
        code: str | None = None,
    ) -> None:
        super().__init__(message, address=address, reason=reason, code=code)


class AuthError(RespLoadError):
    """The server refused the credentials or the connection setup (AUTH, HELLO, SELECT).

    Attributes:
        address: the server's address.
        reason: the server's error reply.
    """

    code = "ERR_RESPLOAD_AUTH"

    def __init__(
        self,
        message: str,
        *,
        address: str = "",
        reason: str = "",
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code, reason=reason)
        self.address = address


class ProtocolError(RespLoadError):
    """The server answered the connection setup with something RESP does not allow.

    Attributes:
        address: the server's address.
        reason: what was wrong.
    """

    code = "ERR_RESPLOAD_PROTOCOL"

    def __init__(
        self,
        message: str,
        *,
        address: str = "",
        reason: str = "",
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code, reason=reason)
        self.address = address


class FileError(RespLoadError, OSError):
    """Reading a spec file (or writing an output file) failed.

    Attributes:
        path: the file.
        errno: the operating system's error number, when there is one.
        reason: the operating system's text, e.g. ``"No such file or directory (os error 2)"``.
    """

    code = "ERR_RESPLOAD_FILE"

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        errno: int | None = None,
        reason: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code, reason=reason)
        self.path = path
        self.filename = path
        self.errno = errno


class BarrierError(RespLoadError):
    """The hosts of a run with phases in step (``barrier=``) did not all meet before a phase:
    one never arrived within ``barrier_timeout``, one gave up or was stopped, or another run
    uses the same barrier id. Nothing of that phase was sent.

    Attributes:
        phase: the phase the hosts were to start together.
        reason: how many hosts arrived, which shards were missing, the barrier's id and server.
    """

    code = "ERR_RESPLOAD_BARRIER"

    def __init__(
        self,
        message: str,
        *,
        phase: str = "",
        reason: str = "",
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code, reason=reason)
        self.phase = phase


class InternalError(RespLoadError, RuntimeError):
    """A failure inside respload itself (please report it); ``reason`` is what failed."""

    code = "ERR_RESPLOAD_INTERNAL"


class UntrustedReportWarning(RuntimeWarning):
    """``Report.check()`` on a report whose ``validity.trusted`` is false: one of the run's
    own checks failed (the client fell behind its send schedule, the achieved rate or the
    arrivals were not the ones asked for, a worker thread was too busy), so its figures
    describe the load generator as much as the server. The message names each failed check,
    its phase and its detail. It does not fail the check by itself: turn it into an error
    with ``warnings.simplefilter("error", respload.UntrustedReportWarning)`` (or pytest's
    ``-W error::respload.UntrustedReportWarning``).

    Attributes:
        checks: the failed checks (:class:`respload.ValidityCheck`).
    """

    def __init__(self, message: str, checks: Sequence[ValidityCheck] = ()) -> None:
        super().__init__(message)
        self.checks = list(checks)
