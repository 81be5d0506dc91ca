# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""What two agents say to each other over their rdmad channel, and an
agent's metadata.

A message is one kind byte and its body: JSON for the structured kinds,
the raw bytes for a notification. Nothing a peer sends is unpickled or
evaluated: a malformed message is a ``WireError`` and the connection ends.

Metadata (``get_agent_metadata``) is ``MAGIC`` and JSON: the agent's name,
where its rdmad listens for it (host and service) and the ranges it has
registered. The remote keys travel on the channel itself, once the two
agents are connected (``REGIONS``), since they belong to the channel's
device and transport.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

MAGIC = b"RDMAD-NIXL/1\n"

HELLO = b"H"         # {"agent": name}: who is on this end
METADATA = b"M"      # {"metadata": text}: load it (send_local_metadata, a fetch's answer)
FETCH = b"F"         # {"agent": name}: answer with METADATA if that is you
REGIONS = b"R"       # {"regions": [[addr, len, dev, descriptor hex], ...]}: all of them
NOTIF = b"N"         # the notification's bytes
INVALIDATE = b"I"    # {"agent": name}: forget its metadata
ERROR = b"E"         # {"error": text}: a FETCH that could not be answered

MAX_JSON = 16 << 20  # bytes a structured message may have


class WireError(ValueError):
    """A message or metadata that does not parse."""


def encode(kind: bytes, body: Any) -> bytes:
    if kind == NOTIF:
        return kind + bytes(body)
    return kind + json.dumps(body, separators=(",", ":")).encode()


def decode(message: bytes) -> tuple[bytes, Any]:
    if not message:
        raise WireError("an empty message")
    kind, body = message[:1], message[1:]
    if kind == NOTIF:
        return kind, bytes(body)
    if kind not in (HELLO, METADATA, FETCH, REGIONS, INVALIDATE, ERROR):
        raise WireError(f"unknown message kind {kind!r}")
    if len(body) > MAX_JSON:
        raise WireError(f"a {kind!r} message of {len(body)} bytes")
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise WireError(f"a {kind!r} message that is not JSON: {e}") from None
    if not isinstance(value, dict):
        raise WireError(f"a {kind!r} message that is not an object")
    return kind, value


def text(value: Any, name: str, limit: int = 4096) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise WireError(f"{name}: a string of at most {limit} characters")
    return value


def count(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
        raise WireError(f"{name}: an unsigned 64-bit integer")
    return value


@dataclass
class Metadata:
    """What an agent tells others of itself."""

    agent: str
    host: str = ""
    service: str = ""
    # (addr, len, dev) of every registered range the metadata covers.
    ranges: list[tuple[int, int, int]] = field(default_factory=list)
    connection: bool = True  # carries host and service (partial metadata may not)

    def encode(self) -> bytes:
        body = {"agent": self.agent, "ranges": [list(r) for r in self.ranges]}
        if self.connection:
            body.update(host=self.host, service=self.service)
        return MAGIC + json.dumps(body, separators=(",", ":")).encode()

    @staticmethod
    def decode(data: bytes) -> Metadata:
        data = bytes(data)
        if not data.startswith(MAGIC):
            raise WireError("not the metadata of an rdmad NIXL agent")
        try:
            body = json.loads(data[len(MAGIC):])
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise WireError(f"metadata that is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise WireError("metadata that is not an object")
        ranges = body.get("ranges", [])
        if not isinstance(ranges, list):
            raise WireError("ranges: a list")
        md = Metadata(agent=text(body.get("agent"), "agent", 256),
                      connection="service" in body)
        if md.connection:
            md.host = text(body.get("host", ""), "host", 255)
            md.service = text(body.get("service", ""), "service", 64)
        for i, r in enumerate(ranges):
            if not isinstance(r, list) or len(r) != 3:
                raise WireError(f"ranges[{i}]: [addr, len, dev]")
            md.ranges.append((count(r[0], "addr"), count(r[1], "len"), count(r[2], "dev")))
        if not md.agent:
            raise WireError("agent: a name")
        return md


def service_name(prefix: str, key: str) -> str:
    """An rdmad service name for key (letters, digits, '.', '_', '-'; at most 64)."""
    safe = re.sub(r"[^A-Za-z0-9_-]", lambda m: f".{ord(m.group()):x}.", key)
    name = f"{prefix}.{safe}"
    if len(name) > 64:
        import hashlib
        name = f"{prefix}.h.{hashlib.sha256(key.encode()).hexdigest()[:40]}"
    return name


def agent_service(agent: str) -> str:
    return service_name("nixl.agent", agent)


def port_service(port: int) -> str:
    return f"nixl.port.{int(port)}"


def optional_text(body: dict[str, Any], key: str) -> Optional[str]:
    value = body.get(key)
    return None if value is None else text(value, key)
