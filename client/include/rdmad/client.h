// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmad::Client: a local process's connection to its host's rdmad over the
// daemon's Unix socket. It hides the RPC layer: no gRPC or protobuf type
// appears in this header.
//
// Thread safety: a Client may be used from many threads at once. An
// EventStream is used by one thread at a time, except Cancel(), which may be
// called from any thread to end a blocked Next().

#ifndef RDMAD_CLIENT_H_
#define RDMAD_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdmad/channel.h"
#include "rdmad/cluster.h"
#include "rdmad/daemon_status.h"
#include "rdmad/devices.h"
#include "rdmad/events.h"
#include "rdmad/export.h"
#include "rdmad/log.h"
#include "rdmad/peers.h"
#include "rdmad/status.h"
#include "rdmad/topology.h"

namespace rdmad {

struct Event {
  uint64_t sequence = 0;
  int64_t unix_time_ms = 0;
  EventKind kind = EventKind::kUnspecified;
  std::string message;
  std::string device;  // device, port and GID events
  uint32_t port = 0;   // port and GID events
};

class RDMAD_EXPORT EventStream {
 public:
  virtual ~EventStream() = default;
  // Blocks for the next event. Returns false when the stream has ended; then
  // Finish() tells why (OK when the daemon ended it while stopping).
  virtual bool Next(Event* event) = 0;
  virtual Status Finish() = 0;
  virtual void Cancel() = 0;
};

struct ClientOptions {
  // The daemon's socket; empty: DefaultSocketPath().
  std::string socket_path;
  // How long Open waits for the daemon to answer.
  std::chrono::milliseconds connect_timeout{2000};
  // Deadline of each unary call.
  std::chrono::milliseconds call_timeout{5000};
  // Follow rdmad's pool ([[pool]] in its config): keep that many channels
  // per (peer, service) established in this process, for Connect to hand
  // out at once. Prewarm() follows the pool whatever this says.
  bool follow_pool = false;
  // When rdmad goes away (killed, restarted, upgraded) channels keep
  // carrying data, and their lifelines re-attach to the next rdmad; a
  // channel whose rdmad is not back within this long fails with
  // UNAVAILABLE (0: at once). docs/channels.md, "When rdmad restarts".
  std::chrono::milliseconds reattach_timeout{10000};
  // The library's log, process-wide (rdmad/log.h): set when Open is
  // called, if given. By default warnings and errors go to stderr.
  std::optional<LogLevel> log_level;
  LogSink log_sink;
  // How often the library tells rdmad what this client's channels moved
  // (bytes and operations each way, completion latency, Connect times),
  // in one call for all of them; rdmad serves it in its metrics
  // (docs/operations.md, "Metrics"). 0: never.
  std::chrono::milliseconds traffic_report_interval{1000};
};

// One row of rdmad's pool table (rdmactl pools): a following client's
// target for (peer, service) and what its library reported.
struct PoolSummary {
  uint64_t client_id = 0;
  int pid = 0;
  std::string peer;
  std::string service;
  uint32_t target = 0;
  std::string source;   // "config" ([[pool]]) or "api" (Prewarm)
  uint32_t warm = 0;    // established, waiting in the pool
  uint32_t in_use = 0;  // handed out by Connect
  std::string last_error;
};

// What a channel's application reported it moved (its library does so
// about once a second, and when the channel closes): messages each way and
// this side's one-sided operations, with their completion latency as
// counts per bucket (docs/operations.md, "Metrics": the bounds, 1 us to
// 1 s, then slower; empty when none).
struct ChannelTraffic {
  uint64_t channel_id = 0;
  uint64_t messages_sent = 0, bytes_sent = 0;
  uint64_t messages_received = 0, bytes_received = 0;
  uint64_t writes = 0, bytes_written = 0;
  uint64_t reads = 0, bytes_read = 0;
  std::vector<uint64_t> latency_buckets;
  uint64_t latency_sum_ns = 0;
};

// One row of the daemon's channel table (rdmactl channels).
struct ChannelSummary {
  uint64_t id = 0;
  std::string peer;
  std::string service;
  std::string role;       // "initiator", "acceptor"
  std::string transport;  // "RDMA", "TCP", "" before the endpoints are known
  std::string state;      // "planned", "opening", "established", "failed", "closed"
  std::string reason;
  double age_seconds = 0;
  // The local client it belongs to: its uid (none: not known, a channel
  // adopted after a restart and ended before it was held) and process.
  std::optional<uint32_t> owner_uid;
  uint32_t owner_pid = 0;
  // RDMA: every rail, the first the one messages take, with the bytes its
  // application last reported (weight is not known to the daemon: 0).
  std::vector<ChannelRail> rails;
  ChannelTraffic traffic;
};

// How Client::Connect sets a channel up.
struct ConnectOptions {
  bool force_tcp = false;                    // skip RDMA even with a path
  std::chrono::milliseconds timeout{15000};  // the whole handshake
};

// A service this application listens on (Client::Listen). The daemon keeps
// the name registered while the Listener lives.
//
// Thread safety: every method may be called from any thread at once; each
// channel request goes to one Accept or Reject.
class RDMAD_EXPORT Listener {
 public:
  virtual ~Listener() = default;
  virtual const std::string& service() const = 0;
  // Waits for the next channel request and sets the channel up (RDMA when
  // both sides have a path, else TCP with the reason in its info).
  // DEADLINE_EXCEEDED after timeout; the listener's stream ending (the
  // daemon stopping) is UNAVAILABLE.
  virtual StatusOr<std::unique_ptr<Channel>> Accept(
      std::chrono::milliseconds timeout = kForever) = 0;
  // Refuses the next channel request; the initiator gets PERMISSION_DENIED
  // "rejected: REASON". A batch (an initiator's ConnectMany) is accepted
  // or refused as a whole: Accept sets up all its channels, returns the
  // first and the next Accepts the others at once; Reject refuses all.
  virtual Status Reject(const std::string& reason,
                        std::chrono::milliseconds timeout = kForever) = 0;
  // An fd for poll, epoll or an event loop, readable while Accept and
  // Reject would not wait for a request: one is queued, a batch has
  // channels left, or the listener has ended or was closed (Accept with
  // timeout 0 then takes it; the handshake itself still takes its round
  // trips). The listener owns the fd; it is opened on the first call.
  virtual StatusOr<int> RequestFd() = 0;
  // Unregisters the service: requests not yet accepted are dropped (their
  // initiators time out or see the service gone), and a waiting Accept or
  // Reject and every later one get CANCELLED. Channels already accepted
  // are not touched. Idempotent; the destructor closes.
  virtual void Close() = 0;
};

// An application's handle on the local rdmad: queries (status, devices,
// paths, peers, the channel and pool tables), events, and channels
// (Connect, Listen, Prewarm). Open() makes one.
//
// Thread safety: every method may be called from any thread at once.
class RDMAD_EXPORT Client {
 public:
  // $RDMAD_SOCKET if set, else /run/rdmad/rdmad.sock.
  static std::string DefaultSocketPath();

  // A client of the local rdmad, through its socket (options.socket_path,
  // else DefaultSocketPath()). UNAVAILABLE (naming the socket and why) when
  // no daemon answers. Channels are then made with Connect and Listen.
  // Turns off abseil's lock-order checks in the process, as a release build
  // of abseil has them (Debian's abseil, built without NDEBUG, checks every
  // gRPC lock): absl::SetMutexDeadlockDetectionMode turns them back on.
  static StatusOr<std::unique_ptr<Client>> Open(const ClientOptions& options = {});

  virtual ~Client() = default;

  virtual const std::string& socket_path() const = 0;
  virtual StatusOr<DaemonStatus> GetStatus() = 0;
  // Events of the given kinds (empty: all) from now on.
  virtual StatusOr<std::unique_ptr<EventStream>> WatchEvents(
      const std::vector<EventKind>& kinds = {}) = 0;

  virtual StatusOr<std::vector<Device>> ListDevices() = 0;
  // NOT_FOUND for an unknown device.
  virtual StatusOr<Device> GetDevice(const std::string& name) = 0;
  virtual StatusOr<PortCounters> GetPortCounters(const std::string& device, uint32_t port) = 0;
  // The path to peer_address (an IP literal); peer_active_mtu 0 if unknown.
  // FAILED_PRECONDITION when no RDMA path exists (channels then use TCP).
  virtual StatusOr<Path> ResolvePath(const std::string& peer_address,
                                     uint32_t peer_active_mtu = 0) = 0;
  // The daemon's sessions with peer daemons, configured ones first.
  virtual StatusOr<std::vector<PeerInfo>> ListPeers() = 0;
  // The host's PCIe topology: RDMA devices, GPUs and the paths between
  // them (docs/topology.md).
  virtual StatusOr<HostTopology> GetTopology() = 0;
  // The rails (RDMA devices) this process should use near a GPU or its
  // CPUs (request.cpus "": this thread's affinity), balanced with the
  // host's other processes; the plan lasts while this process lives
  // (docs/topology.md). NOT_FOUND for an unknown GPU.
  virtual StatusOr<RailPlan> PlanRails(const RailRequest& request) = 0;

  // The daemon's channel table: this uid's channels (every channel for an
  // admin: root or daemon.admin_group).
  virtual StatusOr<std::vector<ChannelSummary>> ListChannels() = 0;
  // Closes channel id as its application would ("closed by the
  // application: REASON"): for the channel's own uid, or an admin
  // (`rdmactl close`). OK for a channel already closed; NOT_FOUND for an
  // unknown id or another uid's.
  virtual Status CloseChannel(uint64_t id, const std::string& reason) = 0;
  // Registers service with the daemon (ALREADY_EXISTS when another
  // application listens on it).
  virtual StatusOr<std::unique_ptr<Listener>> Listen(const std::string& service) = 0;
  // A channel to the application listening on service at peer (a
  // [[peers]] name or an address). NOT_FOUND unknown peer or no such
  // service; UNAVAILABLE the peer's daemon is not reachable;
  // PERMISSION_DENIED rejected; RESOURCE_EXHAUSTED at rdmad's channel
  // limits. When this client follows the pool and a warm channel to
  // (peer, service) is ready (peer spelled as in the target), it is
  // returned at once (unless force_tcp) and the pool refills; its Close()
  // gives it back to the pool, which keeps it if healthy (nothing unread).
  virtual StatusOr<std::unique_ptr<Channel>> Connect(const std::string& peer,
                                                     const std::string& service,
                                                     const ConnectOptions& options = {}) = 0;
  // count channels to service at peer at once, for an application that
  // opens many (one per worker, a KV-cache transfer's fan-out): they are
  // planned, relayed and accepted in batches of up to 64 (one call each
  // to this daemon, the peer daemon and the listener per batch, instead of
  // per channel). All or nothing: on an error, the channels already made are closed and the
  // error returned. Errors as Connect; INVALID_ARGUMENT for count 0. The
  // pool is not used. options.timeout bounds each batch.
  virtual StatusOr<std::vector<std::unique_ptr<Channel>>> ConnectMany(
      const std::string& peer, const std::string& service, size_t count,
      const ConnectOptions& options = {}) = 0;
  // Keeps channels warm ahead of Connect (docs/channels.md, "Pooling"):
  // this client's own target for (peer, service), replacing a [[pool]]
  // entry's for it; 0 removes it. Starts following the pool.
  // INVALID_ARGUMENT for a bad name or channels outside 0..1024.
  virtual Status Prewarm(const std::string& peer, const std::string& service, int channels) = 0;
  // rdmad's pool table: every following client's targets and counts.
  virtual StatusOr<std::vector<PoolSummary>> ListPools() = 0;
  // The cluster's members as the daemon sees them in etcd, the daemon
  // itself first; with service, those whose applications listen on it.
  // FAILED_PRECONDITION when the daemon has no cluster.endpoints.
  virtual StatusOr<ClusterView> ListMembers(const std::string& service = "") = 0;
};

}  // namespace rdmad

#endif  // RDMAD_CLIENT_H_
