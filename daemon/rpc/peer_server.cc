// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/peer_server.h"

#include <grpcpp/grpcpp.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon/rpc/peer_link_grpc.h"
#include "daemon/rpc/peer_service.h"
#include "daemon/rpc/pem_file.h"

namespace rdmad {
namespace {

constexpr int kMaxMessage = 1 << 20;

struct TlsFiles {
  std::string cert;
  std::string key;
  std::string ca;
};

StatusOr<TlsFiles> LoadTls(const PeerTransportOptions& o) {
  TlsFiles files;
  auto cert = ReadPem(o.tls_cert, "daemon.tls_cert");
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(o.tls_key, "daemon.tls_key");
  if (!key.ok()) return key.status();
  auto ca = ReadPem(o.tls_ca, "daemon.tls_ca");
  if (!ca.ok()) return ca.status();
  return TlsFiles{*cert, *key, *ca};
}

// Binds the address once ourselves: gRPC only says that it failed, this
// says why (in use, not an address of this host).
Status ProbeBind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    return Status::FailedPrecondition("daemon.peer_address " + host + ": " + gai_strerror(rc));
  }
  Status status;
  for (addrinfo* a = found; a != nullptr && status.ok(); a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
      status = Status::FailedPrecondition(
          "cannot listen for peers on " + ListenTarget(host, port) +
          " (daemon.peer_address, daemon.peer_port): " + std::strerror(errno));
    }
    close(fd);
  }
  freeaddrinfo(found);
  return status;
}

class GrpcPeerServer final : public PeerServer {
 public:
  GrpcPeerServer(PeerInbound* inbound, const PeerTransportOptions& o, const PeerKeyAuth& auth)
      : gate_({.tls = !o.tls_cert.empty(),
               .listen_address = o.listen_address,
               .key = auth.key,
               .node = auth.node}),
        service_(inbound, &gate_) {}

  Status Start(const PeerTransportOptions& o, std::shared_ptr<grpc::ServerCredentials> creds) {
    if (o.listen_port != 0) RDMAD_RETURN_IF_ERROR(ProbeBind(o.listen_address, o.listen_port));
    grpc::ServerBuilder builder;
    builder.AddListeningPort(ListenTarget(o.listen_address, o.listen_port), creds, &port_);
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(kMaxMessage);
    // Clients ping every 1 s without calls and data; accept it.
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // Find clients that vanished, to drop their streams.
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
    // One daemon per port: without this, a second one would share it.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    server_ = builder.BuildAndStart();
    if (!server_ || port_ == 0) {
      return Status::FailedPrecondition("cannot listen for peers on " +
                                        ListenTarget(o.listen_address, o.listen_port) +
                                        " (daemon.peer_address, daemon.peer_port)");
    }
    gate_.SetPort(port_);
    return Status::Ok();
  }

  int port() const override { return port_; }

  void Shutdown(std::chrono::milliseconds deadline) override {
    server_->Shutdown(std::chrono::system_clock::now() + deadline);
    server_->Wait();
  }

 private:
  PeerGate gate_;
  PeerService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace

StatusOr<PeerTransport> MakeGrpcPeerTransport(const PeerTransportOptions& options,
                                              PeerInbound* inbound) {
  std::shared_ptr<grpc::ServerCredentials> server_creds = grpc::InsecureServerCredentials();
  std::shared_ptr<grpc::ChannelCredentials> client_creds = grpc::InsecureChannelCredentials();
  if (!options.tls_cert.empty()) {
    auto tls = LoadTls(options);
    if (!tls.ok()) return tls.status();
    grpc::SslServerCredentialsOptions server(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    server.pem_root_certs = tls->ca;
    server.pem_key_cert_pairs.push_back({tls->key, tls->cert});
    server_creds = grpc::SslServerCredentials(server);
    grpc::SslCredentialsOptions client;
    client.pem_root_certs = tls->ca;
    client.pem_private_key = tls->key;
    client.pem_cert_chain = tls->cert;
    client_creds = grpc::SslCredentials(client);
  }
  PeerKeyAuth auth;
  if (options.tls_cert.empty() && !options.peer_key_file.empty()) {
    auto loaded = PeerKey::Load(options.peer_key_file);
    if (!loaded.ok()) return loaded.status();
    auth.key = std::make_shared<PeerKey>(std::move(loaded).value());
    auth.node = options.node_name;
  }
  auto server = std::make_unique<GrpcPeerServer>(inbound, options, auth);
  RDMAD_RETURN_IF_ERROR(server->Start(options, server_creds));
  PeerTransport transport;
  transport.server = std::move(server);
  transport.connector = MakeGrpcPeerConnector(client_creds, std::move(auth));
  return transport;
}

}  // namespace rdmad
