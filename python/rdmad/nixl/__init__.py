# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""NIXL's Python agent API on rdmad (docs/nixl.md).

    from rdmad.nixl import nixl_agent, nixl_agent_config

A program written for NIXL (``from nixl._api import nixl_agent``) runs
unchanged when started as ``python3 -m rdmad.nixl PROGRAM.py ARGS``, or with
``compat_path()`` on its PYTHONPATH: both put a package named ``nixl`` that
is this one first on the path, for that program only. A real NIXL installed
beside rdmad is never shadowed otherwise.
"""

import os

from rdmad.nixl._api import (DEFAULT_COMM_PORT, NIXL_INIT_AGENT, SERVED_BACKENDS, nixl_agent,
                             nixl_agent_config)
from rdmad.nixl._xfer import nixl_prepped_dlist_handle, nixl_xfer_handle, nixlNotPostedError
from rdmad.nixl._descs import (BLK_SEG, DRAM_SEG, FILE_SEG, OBJ_SEG, VRAM_SEG, nixl_mem_t,
                               nixlBackendError, nixlInvalidParamError, nixlNotAllowedError,
                               nixlNotFoundError, nixlNotSupportedError, nixlRegDList,
                               nixlRepostActiveError, nixlXferDList)


def compat_path() -> str:
    """The directory holding the ``nixl`` compatibility package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "compat")


__all__ = [
    "BLK_SEG", "DEFAULT_COMM_PORT", "DRAM_SEG", "FILE_SEG", "NIXL_INIT_AGENT", "OBJ_SEG",
    "SERVED_BACKENDS", "VRAM_SEG", "compat_path", "nixl_agent", "nixl_agent_config",
    "nixl_mem_t", "nixl_prepped_dlist_handle", "nixl_xfer_handle", "nixlBackendError",
    "nixlInvalidParamError", "nixlNotAllowedError", "nixlNotFoundError", "nixlNotPostedError",
    "nixlNotSupportedError", "nixlRegDList", "nixlRepostActiveError", "nixlXferDList",
]
