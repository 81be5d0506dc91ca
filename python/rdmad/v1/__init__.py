# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""rdmad's gRPC API, generated from proto/rdmad/v1, for tools that want the raw calls.

    import grpc
    import rdmad
    from rdmad import v1

    channel = grpc.insecure_channel("unix:" + rdmad.Client.default_socket())
    stub = v1.RdmadStub(channel)
    print(stub.GetStatus(v1.GetStatusRequest(), timeout=5))

The messages (``v1.GetStatusRequest``, ...) and ``v1.RdmadStub`` are those of
``rdmad_pb2`` and ``rdmad_pb2_grpc``; the daemon-to-daemon service is in
``peer_pb2`` and ``peer_pb2_grpc``. The comments in proto/rdmad/v1/rdmad.proto
describe every call. Needs Debian's python3-grpcio and python3-protobuf.
"""

from rdmad.v1 import peer_pb2, peer_pb2_grpc, rdmad_pb2, rdmad_pb2_grpc  # noqa: F401
from rdmad.v1.rdmad_pb2 import *  # noqa: F401,F403  (the messages)
from rdmad.v1.rdmad_pb2_grpc import RdmadServicer, RdmadStub  # noqa: F401
