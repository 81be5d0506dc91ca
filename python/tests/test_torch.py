# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""torch tensors as buffers (Debian's python3-torch, CPU): registered,
sent, received into and moved by batches, by data pointer and size."""

import numpy as np
import pytest

import rdmad

torch = pytest.importorskip("torch")


def _exposed(a, b, tensor):
    """b's tensor registered, and a's descriptor of it."""
    region = b.register(tensor)
    b.send(region.descriptor.serialize())
    return region, rdmad.RegionDescriptor.parse(a.recv(timeout=10))


def test_a_tensor_is_registered_sent_and_received_into(channels):
    a, b = channels
    sent = torch.arange(4096, dtype=torch.float32)
    a.send(sent)
    assert b.recv(timeout=10) == sent.numpy().tobytes()
    target = torch.zeros(4096, dtype=torch.float32)
    a.send(sent * 2)
    assert b.recv_into(target, timeout=10) == 4096 * 4  # registered for the call
    assert torch.equal(target, sent * 2)
    region = b.register(target)
    assert region.size == 4096 * 4
    a.send(sent * 3)
    assert b.recv_into(region, timeout=10) == 4096 * 4
    assert torch.equal(target, sent * 3)


def test_batches_write_and_read_tensors_of_any_dtype(channels):
    a, b = channels
    kv = torch.zeros(8, 256, dtype=torch.bfloat16)  # no numpy dtype: by pointer and size
    _, remote = _exposed(a, b, kv)
    rows = torch.randn(8, 256).to(torch.bfloat16)
    row_bytes = 256 * 2
    ops = [rdmad.Op.write(rows, i * row_bytes, remote, (7 - i) * row_bytes, row_bytes)
           for i in range(8)]
    a.submit(ops, notification=b"rows").wait(timeout=30)
    assert b.recv_notification(timeout=10) == b"rows"
    assert torch.equal(kv, rows.flip(0))
    back = torch.zeros(256, dtype=torch.bfloat16)
    a.submit([rdmad.Op.read(back, 0, remote, 0, row_bytes)]).wait(timeout=30)
    assert torch.equal(back, rows[7])


def test_a_tensor_that_is_not_contiguous_is_refused_with_the_hint(channels):
    a, _ = channels
    strided = torch.zeros(64, 64).t()
    with pytest.raises(ValueError, match=r"\.contiguous\(\)"):
        a.register(strided)
    with pytest.raises(ValueError, match=r"\.contiguous\(\)"):
        a.send(strided)
    with pytest.raises(ValueError, match=r"\.contiguous\(\)"):
        rdmad.Op.write(strided, 0, rdmad.RegionDescriptor(), 0, 8)
    a.register(strided.contiguous()).close()


def test_a_tensor_off_the_cpu_is_refused(channels):
    a, _ = channels
    meta = torch.empty(1024, device="meta")  # no GPU here: a device that is not the CPU
    with pytest.raises(ValueError, match="CPU tensors"):
        a.register(meta)
    with pytest.raises(ValueError, match="CPU tensors"):
        a.send(meta)


def test_a_registered_tensor_stays_alive_with_its_region(channels):
    a, b = channels
    region, remote = _exposed(a, b, torch.full((1024,), 7, dtype=torch.uint8))
    import gc
    gc.collect()  # only the region holds the tensor now
    back = np.zeros(1024, dtype=np.uint8)
    a.submit([rdmad.Op.read(back, 0, remote, 0, 1024)]).wait(timeout=30)
    assert (back == 7).all()
    region.close()
