// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
// rdmad: the RDMA connection daemon. All logic lives in the libraries.

#include <malloc.h>

#include "common/grpc_runtime.h"
#include "daemon/echo/echo_factory.h"
#include "daemon/lifecycle/daemon_main.h"
#include "daemon/metrics/metrics_server.h"
#include "daemon/rpc/etcd_store.h"
#include "daemon/rpc/grpc_api_server.h"
#include "daemon/rpc/peer_server.h"

int main(int argc, char** argv) {
  rdmad::UseReleaseMutexChecks();  // gRPC's locks, without debug-build lock-order checks
  // Every thread on the main malloc arena, which brk grows ahead: glibc
  // grows a thread's own arena one mprotect(2) per page or two
  // (client/src/heap_reserve.h). The daemon's threads are few and off the
  // data path; 1,000 channels opened cost each daemon ~2 KiB of heap apiece.
  mallopt(M_ARENA_MAX, 1);
  const rdmad::GrpcApiServerFactory local;
  const rdmad::GrpcPeerTransportFactory peer;
  const rdmad::EchoServiceFactory echo;
  const rdmad::EtcdStoreFactory cluster;
  const rdmad::PrometheusMetricsFactory metrics;
  return rdmad::DaemonMain(
      argc, argv,
      {.local = &local, .peer = &peer, .echo = &echo, .cluster = &cluster, .metrics = &metrics});
}
