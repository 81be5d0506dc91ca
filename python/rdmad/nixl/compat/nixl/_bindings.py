# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""nixl._bindings' descriptor lists, memory types and errors, served by rdmad.nixl."""

from rdmad.nixl._api import DEFAULT_COMM_PORT, NIXL_INIT_AGENT  # noqa: F401
from rdmad.nixl._xfer import nixlNotPostedError  # noqa: F401
from rdmad.nixl._descs import *  # noqa: F401,F403
