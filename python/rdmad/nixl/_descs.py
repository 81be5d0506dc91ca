# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""NIXL's descriptor lists (``nixlXferDList``, ``nixlRegDList``) and memory
types, as NIXL's Python bindings offer them, in plain Python.

A transfer descriptor is ``(addr, len, dev_id)``; a registration descriptor
``(addr, len, dev_id, meta)``. Lists pickle (``get_serialized_descs``) and
compare by value. Only host memory (``DRAM_SEG``) moves through rdmad; the
other types exist so that programs naming them load, and fail where NIXL
fails for a backend that lacks them.
"""

from __future__ import annotations

import enum
import logging
import sys
from typing import Any, Iterable, Iterator, Optional, Sequence, Tuple

__all__ = [
    "BLK_SEG", "DRAM_SEG", "FILE_SEG", "OBJ_SEG", "VRAM_SEG", "nixl_mem_t", "nixlBackendError",
    "nixlInvalidParamError", "nixlNotAllowedError", "nixlNotFoundError", "nixlNotSupportedError",
    "nixlRegDList", "nixlRepostActiveError", "nixlXferDList",
]

XferDesc = Tuple[int, int, int]
RegDesc = Tuple[int, int, int, str]


class nixl_mem_t(enum.IntEnum):  # noqa: N801 - NIXL's name
    DRAM_SEG = 0
    VRAM_SEG = 1
    BLK_SEG = 2
    OBJ_SEG = 3
    FILE_SEG = 4


DRAM_SEG = nixl_mem_t.DRAM_SEG
VRAM_SEG = nixl_mem_t.VRAM_SEG
BLK_SEG = nixl_mem_t.BLK_SEG
OBJ_SEG = nixl_mem_t.OBJ_SEG
FILE_SEG = nixl_mem_t.FILE_SEG


class nixlInvalidParamError(ValueError):  # noqa: N801, N818 - NIXL's name
    """A malformed argument (NIXL_ERR_INVALID_PARAM)."""


class nixlNotFoundError(LookupError):  # noqa: N801, N818
    """An unknown agent, descriptor or handle (NIXL_ERR_NOT_FOUND)."""


class nixlBackendError(RuntimeError):  # noqa: N801, N818
    """The transport failed (NIXL_ERR_BACKEND)."""


class nixlNotSupportedError(NotImplementedError):  # noqa: N801, N818
    """Asked of rdmad that it does not do: VRAM, files, plugins (NIXL_ERR_NOT_SUPPORTED)."""


class nixlRepostActiveError(RuntimeError):  # noqa: N801, N818
    """A transfer posted again while it is still in flight (NIXL_ERR_REPOST_ACTIVE)."""


class nixlNotAllowedError(RuntimeError):  # noqa: N801, N818
    """Not allowed in this state (NIXL_ERR_NOT_ALLOWED)."""


def _int(value: Any, what: str) -> int:
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise nixlInvalidParamError(f"{what}: an integer, not {value!r}") from None
    if out < 0:
        raise nixlInvalidParamError(f"{what}: >= 0, not {out}")
    return out


def _mem(mem_type: Any) -> nixl_mem_t:
    try:
        return nixl_mem_t(int(mem_type))
    except (TypeError, ValueError):
        raise nixlInvalidParamError(f"unknown memory type {mem_type!r}") from None


def _rows(descs: Any, width: int) -> Iterable[Sequence[Any]]:
    """The rows of descs: a list of tuples, or an N x 3 numpy array."""
    shape = getattr(descs, "shape", None)
    if shape is not None:
        if len(shape) != 2 or shape[1] != 3:
            raise nixlInvalidParamError(f"descs: an N x 3 array, not shape {tuple(shape)}")
        return [tuple(int(v) for v in row) + (("",) if width == 4 else ()) for row in descs]
    rows = list(descs)
    for i, row in enumerate(rows):
        if not isinstance(row, tuple):
            raise nixlInvalidParamError(f"descs[{i}]: a tuple, not {type(row).__name__}")
        if len(row) != width:
            raise nixlInvalidParamError(f"descs[{i}]: a {width}-tuple, not {len(row)} elements")
    return rows


class _DList:
    _width = 3

    def __init__(self, type: Any, descs: Any = 0, is_sorted: bool = False) -> None:  # noqa: A002
        self._type = _mem(type)
        self._descs: list[Any] = []
        self._sorted = bool(is_sorted)
        if isinstance(descs, int):  # NIXL's init_size: room, not descriptors
            return
        for row in _rows(descs, self._width):
            self._descs.append(self._make(row))

    def _make(self, row: Sequence[Any]) -> Any:
        addr = _int(row[0], "addr")
        length = _int(row[1], "len")
        dev = _int(row[2], "dev_id")
        if self._width == 3:
            return (addr, length, dev)
        meta = row[3]
        if isinstance(meta, bytes):
            meta = meta.decode("utf-8", "replace")
        return (addr, length, dev, str(meta))

    def getType(self) -> nixl_mem_t:  # noqa: N802 - NIXL's names from here on
        return self._type

    def descCount(self) -> int:  # noqa: N802
        return len(self._descs)

    def isEmpty(self) -> bool:  # noqa: N802
        return not self._descs

    def isSorted(self) -> bool:  # noqa: N802
        return self._sorted

    def __len__(self) -> int:
        return len(self._descs)

    def __getitem__(self, index: int) -> Any:
        return self._descs[index]

    def __setitem__(self, index: int, desc: Sequence[Any]) -> None:
        self._descs[index] = self._make(desc)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._descs))

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and other._type == self._type  # type: ignore[attr-defined]
                and other._descs == self._descs)  # type: ignore[attr-defined]

    def __bool__(self) -> bool:  # a list is a list, even an empty one (NIXL: "if not descs")
        return True

    def addDesc(self, desc: Sequence[Any]) -> None:  # noqa: N802
        self._descs.append(self._make(desc))

    append = addDesc

    def index(self, desc: Sequence[Any]) -> int:
        try:
            return self._descs.index(self._make(desc))
        except ValueError:
            raise nixlNotFoundError(f"{tuple(desc)} is not in the list") from None

    def remDesc(self, index: int) -> None:  # noqa: N802
        del self._descs[index]

    def clear(self) -> None:
        self._descs.clear()

    def print(self) -> None:
        print(repr(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._type.name}, {self._descs!r})"


class nixlXferDList(_DList):  # noqa: N801
    """Transfer descriptors: (addr, len, dev_id)."""

    _width = 3


class nixlRegDList(_DList):  # noqa: N801
    """Registration descriptors: (addr, len, dev_id, meta)."""

    _width = 4

    def trim(self) -> nixlXferDList:
        """The same ranges as transfer descriptors (the meta dropped)."""
        return nixlXferDList(self._type, [d[:3] for d in self._descs], self._sorted)


# --- What the agent makes lists from (tensors, arrays, tuples) ---

logger = logging.getLogger("rdmad.nixl")

MEM_TYPES = {"DRAM": nixl_mem_t.DRAM_SEG, "cpu": nixl_mem_t.DRAM_SEG,
              "VRAM": nixl_mem_t.VRAM_SEG, "cuda": nixl_mem_t.VRAM_SEG,
              "FILE": nixl_mem_t.FILE_SEG, "BLOCK": nixl_mem_t.BLK_SEG,
              "OBJ": nixl_mem_t.OBJ_SEG}


def torch_tensor(obj: object) -> bool:
    torch = sys.modules.get("torch")  # never imported here: only a program's own tensors
    return torch is not None and isinstance(obj, torch.Tensor)


def tensor_desc(t: Any) -> tuple[int, int, int]:
    if t.device.type != "cpu":
        raise nixlNotSupportedError(f"a tensor on {t.device}: rdmad moves host memory only")
    if not t.is_contiguous():
        raise nixlInvalidParamError("the tensor is not contiguous: pass tensor.contiguous()")
    return (int(t.data_ptr()), int(t.numel() * t.element_size()), 0)


def mem_type_of(mem_type: Optional[str]) -> nixl_mem_t:
    if mem_type not in MEM_TYPES:
        raise nixlInvalidParamError(f"mem_type: one of {sorted(MEM_TYPES)}, not {mem_type!r}")
    return MEM_TYPES[mem_type]


def dlist(kind: type, other: type, descs: Any, mem_type: Optional[str], is_sorted: bool,
           meta: tuple[str, ...]) -> Any:
    """descs as a list of kind (nixlXferDList, or nixlRegDList with meta for
    a tensor's descriptor), as NIXL takes them: such a list, a tensor, a list
    of tensors (or of a tensor's rows), an N x 3 numpy array or tuples (with
    mem_type). A list of the other kind: logged and None, as NIXL does."""
    if isinstance(descs, kind):
        return descs
    if isinstance(descs, other):
        logger.error("%s type detected, please use %s", other.__name__, kind.__name__)
        return None
    if torch_tensor(descs):
        return kind(DRAM_SEG, [tensor_desc(descs) + meta], is_sorted)
    if hasattr(descs, "shape"):  # an N x 3 numpy array
        return kind(mem_type_of(mem_type), descs, is_sorted)
    items = list(descs)
    if items and torch_tensor(items[0]):
        return kind(DRAM_SEG, [tensor_desc(t) + meta for t in items], is_sorted)
    if mem_type is None:
        raise nixlInvalidParamError("mem_type is needed for a list of tuples")
    return kind(mem_type_of(mem_type), items, is_sorted)



def covers(ranges: Iterable[Any], desc: Any) -> bool:
    addr, length, dev = desc[0], desc[1], desc[2]
    return any(r[2] == dev and r[0] <= addr and addr + length <= r[0] + r[1] for r in ranges)
