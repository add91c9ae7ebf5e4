"""The exceptions of respload: one class per kind of core error, under :class:`RespLoadError`,
and the warning :class:`UntrustedReportWarning`.

The native module raises these directly, mapped from the core's error codes
(``ERR_RESPLOAD_SPEC``, ``ERR_RESPLOAD_CONNECT``, ...). Error replies from the server during a
run are not exceptions: they are counted in the report (``report.totals.errors_by_kind``).

The class of each kind is generated from the core's list (``respload schema bindings``) by
scripts/gen_reference.py, between the ``# generated`` marks: a new kind in the core appears here
without a hand edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import ValidityCheck

# generated: __all__ (from core/src/error.rs by scripts/gen_reference.py)
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
# end generated: __all__


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


# generated: errors (from core/src/error.rs by scripts/gen_reference.py)
class SpecError(RespLoadError, ValueError):
    """The workload spec is invalid; raised before any traffic is sent.

    Attributes:
        path: The field's dotted path, e.g. ``load.connections`` or ``phases[1].keys.range`` (empty
            for the spec as a whole).
        reason: What is wrong and what is allowed, including the bad value.
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
        super().__init__(message, reason=reason, code=code)
        self.path = path


class ConnectError(RespLoadError, ConnectionError):
    """The server could not be reached (refused, unreachable, timed out).

    Attributes:
        address: The address that was tried, e.g. ``127.0.0.1:6379``.
        errno: The operating system's error number (positive, as in C), when there is one.
        reason: The operating system's text, e.g. ``Connection refused (os error 111)``.
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
        super().__init__(message, reason=reason, code=code)
        self.address = address
        self.errno = errno


class TlsError(ConnectError):
    """The TLS handshake failed: the server's certificate was not trusted (unknown CA, wrong name,
    expired), the server wants or refused a client certificate, or the port does not speak TLS.
    Raised before any traffic; a connect error too.

    Attributes:
        address: The server's address, e.g. ``127.0.0.1:6379``.
        errno: The operating system's error number (positive, as in C), when there is one.
        reason: What went wrong and which setting changes it (``target.tls.ca_file``, ...).
    """

    code = "ERR_RESPLOAD_TLS"


class AuthError(RespLoadError):
    """The server refused the credentials or the connection setup (AUTH, HELLO, SELECT).

    Attributes:
        address: The server's address, e.g. ``127.0.0.1:6379``.
        reason: The server's error reply.
    """

    code = "ERR_RESPLOAD_AUTH"

    def __init__(
        self,
        message: str,
        *,
        address: str = "",
        reason: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, reason=reason, code=code)
        self.address = address


class ProtocolError(RespLoadError):
    """The server answered the connection setup with something RESP does not allow.

    Attributes:
        address: The server's address, e.g. ``127.0.0.1:6379``.
        reason: What was wrong.
    """

    code = "ERR_RESPLOAD_PROTOCOL"

    def __init__(
        self,
        message: str,
        *,
        address: str = "",
        reason: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, reason=reason, code=code)
        self.address = address


class FileError(RespLoadError, OSError):
    """Reading a spec file (or writing an output file) failed.

    Attributes:
        path: The file.
        errno: The operating system's error number (positive, as in C), when there is one.
        reason: The operating system's text, e.g. ``No such file or directory (os error 2)``.
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
        super().__init__(message, reason=reason, code=code)
        self.path = path
        self.errno = errno
        self.filename = path  # OSError's name of the file


class BarrierError(RespLoadError):
    """The hosts of a run with phases in step (a barrier) did not all meet before a phase: one
    never arrived within the timeout, one gave up or was stopped, or another run uses the same
    barrier id. Nothing of that phase was sent.

    Attributes:
        phase: The phase the hosts were to start together.
        reason: How many hosts arrived, which shards were missing, the barrier's id and server.
    """

    code = "ERR_RESPLOAD_BARRIER"

    def __init__(
        self,
        message: str,
        *,
        phase: str = "",
        reason: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, reason=reason, code=code)
        self.phase = phase


class InternalError(RespLoadError, RuntimeError):
    """A failure inside respload itself (please report it).

    Attributes:
        reason: What failed.
    """

    code = "ERR_RESPLOAD_INTERNAL"


# The class of each code, as the core names them.
ERROR_CLASSES: dict[str, type[RespLoadError]] = {
    "ERR_RESPLOAD_SPEC": SpecError,
    "ERR_RESPLOAD_CONNECT": ConnectError,
    "ERR_RESPLOAD_TLS": TlsError,
    "ERR_RESPLOAD_AUTH": AuthError,
    "ERR_RESPLOAD_PROTOCOL": ProtocolError,
    "ERR_RESPLOAD_FILE": FileError,
    "ERR_RESPLOAD_BARRIER": BarrierError,
    "ERR_RESPLOAD_INTERNAL": InternalError,
}
# end generated: errors


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
