# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""nixl._api, served by rdmad.nixl."""

from rdmad.nixl import *  # noqa: F401,F403
from rdmad.nixl._api import DEFAULT_COMM_PORT, nixl_agent, nixl_agent_config  # noqa: F401
