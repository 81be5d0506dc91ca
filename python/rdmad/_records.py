# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Records of the local API (a device, a port, a GID, a path, ...).

A record is a dict (``port["rate_gbps"]``, ``json.dumps(port)``) whose keys
are also attributes (``port.rate_gbps``), shown with its kind::

    Port(port=1, state='ACTIVE', ..., gids=[Gid(index=0, ...)])

Every field of the API's message is there, named as in
proto/rdmad/v1/rdmad.proto: the C++ side fills them from one field list
(rdmad/fields.h).
"""

from typing import Any


class Record(dict[str, Any]):
    """A dict of one API message's fields, also readable as attributes."""

    __slots__ = ("_kind",)

    def __init__(self, kind: str, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        object.__setattr__(self, "_kind", kind)

    def _name(self) -> str:
        return str(object.__getattribute__(self, "_kind"))

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{self._name()} has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self._name()} is read as a record; change it as a dict")

    def __reduce__(self) -> tuple[Any, ...]:  # copy, deepcopy, pickle
        return (Record, (self._name(), dict(self)))

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.keys()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.items())
        return f"{self._name()}({inner})"
