# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""examples/kv_transfer.py between the two daemons, and against the C++ twin."""

import os
import subprocess
import sys

import pytest

EXPECTED_TRANSPORT = "RDMA" if os.environ.get("LAB_IP") else "TCP"
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "kv_transfer.py")


def _run(pair, prefill, decode, service):
    """Runs prefill on B's daemon and decode on A's; decode's output."""
    server = subprocess.Popen(
        prefill + ["--socket", pair.b.socket, "--service", service, "--blocks", "64",
                   "--rounds", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert "listening" in server.stdout.readline()
        client = subprocess.run(
            decode + ["B", "--socket", pair.a.socket, "--service", service, "--batch", "16"],
            capture_output=True, text=True, timeout=120)
        served = server.communicate(timeout=60)[0]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert client.returncode == 0, client.stdout + client.stderr
    assert server.returncode == 0, served
    assert "prefill: 2 rounds served" in served
    return client.stdout


def test_python_prefill_and_decode(pair):
    out = _run(pair, [sys.executable, EXAMPLE, "prefill"], [sys.executable, EXAMPLE, "decode"],
               "kv.py")
    assert out.count("all checked") == 2
    assert out.strip().endswith(f"KV OK over {EXPECTED_TRANSPORT}")


@pytest.mark.skipif("KV_TRANSFER" not in os.environ, reason="the C++ example is not named")
def test_python_decode_pulls_from_the_cpp_prefill(pair):
    out = _run(pair, [os.environ["KV_TRANSFER"], "prefill"], [sys.executable, EXAMPLE, "decode"],
               "kv.cc")
    assert out.count("all checked") == 2
    assert out.strip().endswith(f"KV OK over {EXPECTED_TRANSPORT}")
