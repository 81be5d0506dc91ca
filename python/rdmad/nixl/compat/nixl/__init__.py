# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""NIXL's package names, served by rdmad (rdmad.nixl; docs/nixl.md).

Only on the path of a program started with ``python3 -m rdmad.nixl`` or
given ``rdmad.nixl.compat_path()`` in its PYTHONPATH.
"""

from rdmad.nixl._api import nixl_agent, nixl_agent_config

__all__ = ["nixl_agent", "nixl_agent_config"]
