// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
// rdmad: the RDMA connection daemon. All logic lives in the libraries.

#include "common/grpc_runtime.h"
#include "daemon/echo/echo_factory.h"
#include "daemon/lifecycle/daemon_main.h"
#include "daemon/metrics/metrics_server.h"
#include "daemon/rpc/etcd_store.h"
#include "daemon/rpc/grpc_api_server.h"
#include "daemon/rpc/peer_server.h"

int main(int argc, char** argv) {
  rdmad::UseReleaseMutexChecks();  // gRPC's locks, without debug-build lock-order checks
  const rdmad::GrpcApiServerFactory local;
  const rdmad::GrpcPeerTransportFactory peer;
  const rdmad::EchoServiceFactory echo;
  const rdmad::EtcdStoreFactory cluster;
  const rdmad::PrometheusMetricsFactory metrics;
  return rdmad::DaemonMain(
      argc, argv,
      {.local = &local, .peer = &peer, .echo = &echo, .cluster = &cluster, .metrics = &metrics});
}
