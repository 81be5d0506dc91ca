# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""rdmad's errors: one exception class per status code.

Every failing call raises a subclass of :class:`Error` whose ``code`` is the
status code's number (gRPC's numbering) and ``code_name`` its name; the
message is the library's or the daemon's own. Where a built-in exception
means the same, the class is one of those too, so code written against the
standard library catches it: :class:`DeadlineExceeded` is a
:class:`TimeoutError`, :class:`Unavailable` a :class:`ConnectionError`,
:class:`PermissionDenied` a :class:`PermissionError`,
:class:`InvalidArgument` and :class:`OutOfRange` are :class:`ValueError`,
:class:`Unimplemented` is a :class:`NotImplementedError`.
"""

from typing import Dict, Optional, Type

__all__ = [
    "Error",
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
    "error_class",
]


class Error(Exception):
    """A call failed; ``code``, ``code_name`` and ``message`` say why."""

    code: int = 2
    code_name: str = "UNKNOWN"

    def __init__(self, message: str = "", code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None and code != type(self).code:
            self.code = code

    def __str__(self) -> str:
        return f"{self.code_name}: {self.message}"


class Cancelled(Error):
    """The call was cancelled (the channel was closed here)."""

    code = 1
    code_name = "CANCELLED"


class Unknown(Error):
    """An error without a better code."""

    code = 2
    code_name = "UNKNOWN"


class InvalidArgument(Error, ValueError):
    """The request was malformed."""

    code = 3
    code_name = "INVALID_ARGUMENT"


class DeadlineExceeded(Error, TimeoutError):
    """The timeout passed first."""

    code = 4
    code_name = "DEADLINE_EXCEEDED"


class NotFound(Error):
    """No such peer, service, channel or device."""

    code = 5
    code_name = "NOT_FOUND"


class AlreadyExists(Error):
    """The name is taken."""

    code = 6
    code_name = "ALREADY_EXISTS"


class PermissionDenied(Error, PermissionError):
    """Refused: rejected by the peer, or not the caller's."""

    code = 7
    code_name = "PERMISSION_DENIED"


class ResourceExhausted(Error):
    """A limit was reached (memlock, queue depth, a quota)."""

    code = 8
    code_name = "RESOURCE_EXHAUSTED"


class FailedPrecondition(Error):
    """Not possible in the current state."""

    code = 9
    code_name = "FAILED_PRECONDITION"


class Aborted(Error):
    """The operation was aborted."""

    code = 10
    code_name = "ABORTED"


class OutOfRange(Error, ValueError):
    """A range does not fit the region."""

    code = 11
    code_name = "OUT_OF_RANGE"


class Unimplemented(Error, NotImplementedError):
    """Not supported by this transport or device."""

    code = 12
    code_name = "UNIMPLEMENTED"


class Internal(Error):
    """An internal error."""

    code = 13
    code_name = "INTERNAL"


class Unavailable(Error, ConnectionError):
    """The daemon, the peer or the channel is gone."""

    code = 14
    code_name = "UNAVAILABLE"


class DataLoss(Error):
    """The peer sent what the protocol does not allow."""

    code = 15
    code_name = "DATA_LOSS"


class Unauthenticated(Error):
    """The peer could not be authenticated."""

    code = 16
    code_name = "UNAUTHENTICATED"


_BY_CODE: Dict[int, Type[Error]] = {
    cls.code: cls
    for cls in (
        Cancelled,
        Unknown,
        InvalidArgument,
        DeadlineExceeded,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        OutOfRange,
        Unimplemented,
        Internal,
        Unavailable,
        DataLoss,
        Unauthenticated,
    )
}


def error_class(code: int) -> Type[Error]:
    """The Error subclass for a status code (Error itself for an unknown one)."""
    return _BY_CODE.get(code, Error)
