# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""rdmad.v1: the raw gRPC API from Python, beside the library in one process."""

import grpc
import pytest

import rdmad
from rdmad import v1


@pytest.fixture
def stub(pair):
    with grpc.insecure_channel("unix:" + pair.a.socket) as channel:
        yield v1.RdmadStub(channel)


def test_the_stubs_call_the_daemon(pair, stub):
    status = stub.GetStatus(v1.GetStatusRequest(), timeout=10)
    assert status.pid == pair.a.process.pid
    assert status.socket_path == pair.a.socket
    peers = stub.ListPeers(v1.ListPeersRequest(), timeout=10)
    assert [p.name for p in peers.peers] == ["B"]
    # The same daemon through the library, in the same process.
    assert pair.client_a.status()["pid"] == status.pid


def test_a_malformed_request_is_invalid_argument(stub):
    with pytest.raises(grpc.RpcError) as failed:
        stub.PlanChannel(v1.PlanChannelRequest(peer="B", service="svc", count=65), timeout=10)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_listener_seen_through_both_apis(pair, stub):
    """A service registered by the raw Listen stream is taken for the library."""
    stream = stub.Listen(v1.ListenRequest(service="py.raw"))
    first = next(stream)
    assert first.WhichOneof("event") == "registered"
    with pytest.raises(rdmad.AlreadyExists):
        pair.client_a.listen("py.raw")
    stream.cancel()


def test_every_status_code_has_its_error_class():
    """rdmad's exception classes name gRPC's status codes, one each."""
    for status in grpc.StatusCode:
        number, _ = status.value
        if number == 0:
            continue
        cls = rdmad.error_class(number)
        assert issubclass(cls, rdmad.Error) and cls is not rdmad.Error, status
        assert (cls.code, cls.code_name) == (number, status.name)
        error = cls("what happened")
        assert str(error) == f"{status.name}: what happened"
    assert rdmad.error_class(99) is rdmad.Error
