# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""nixl.logging: get_logger, as NIXL's programs use it."""

import logging


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
