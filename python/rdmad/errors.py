# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""rdmad's errors: one exception class per status code.

Every failing call raises a subclass of :class:`Error` whose ``code`` is the
status code's number (gRPC's numbering) and ``code_name`` its name; the
message is the library's or the daemon's own.
"""


class Error(Exception):
    """A call failed; ``code``, ``code_name`` and ``message`` say why."""

    code = 2
    code_name = "UNKNOWN"

    def __init__(self, message="", code=None):
        super().__init__(message)
        self.message = message
        if code is not None and code != type(self).code:
            self.code = code

    def __str__(self):
        return f"{self.code_name}: {self.message}"


def _error(name, code, doc):
    cls = type(name, (Error,), {"code": code, "code_name": _snake(name), "__doc__": doc})
    globals()[name] = cls
    return cls


def _snake(name):
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out += "_"
        out += ch.upper()
    return out


_BY_CODE = {
    code: _error(name, code, doc)
    for code, name, doc in [
        (1, "Cancelled", "The call was cancelled (the channel was closed here)."),
        (2, "Unknown", "An error without a better code."),
        (3, "InvalidArgument", "The request was malformed."),
        (4, "DeadlineExceeded", "The timeout passed first."),
        (5, "NotFound", "No such peer, service, channel or device."),
        (6, "AlreadyExists", "The name is taken."),
        (7, "PermissionDenied", "Refused: rejected by the peer, or not the caller's."),
        (8, "ResourceExhausted", "A limit was reached (memlock, queue depth, a quota)."),
        (9, "FailedPrecondition", "Not possible in the current state."),
        (10, "Aborted", "The operation was aborted."),
        (11, "OutOfRange", "A range does not fit the region."),
        (12, "Unimplemented", "Not supported by this transport or device."),
        (13, "Internal", "An internal error."),
        (14, "Unavailable", "The daemon, the peer or the channel is gone."),
        (15, "DataLoss", "The peer sent what the protocol does not allow."),
        (16, "Unauthenticated", "The peer could not be authenticated."),
    ]
}


def error_class(code):
    """The Error subclass for a status code (Error itself for an unknown one)."""
    return _BY_CODE.get(code, Error)
