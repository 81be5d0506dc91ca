// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: peer sessions, daemon to daemon. A peer's Hello and Session
// requests through PeerService's conversions into PeerInbound (with
// streams written by a fake writer that checks the stream contract: one
// write at a time, Finish exactly once, nothing after it), heartbeats and
// events, and what a peer answers this daemon (its Hello reply, the events
// of its Session stream) through the checks the gRPC link applies. Input:
// a script of records (fuzz_support.h); ops in peer_session_fuzz.h.

#include "tests/fuzz/peer_session_fuzz.h"

#include <memory>
#include <vector>

#include "daemon/peers/peer_inbound.h"
#include "daemon/rpc/peer_convert.h"
#include "tests/fuzz/channel_world.h"
#include "tests/fuzz/fuzz_support.h"

using namespace rdmad;
using fuzz::SessionOp;

namespace {

// A Session call's reactor, as SessionReactor is, with the gRPC side
// played by the script.
class Writer final : public PeerStreamWriter {
 public:
  void Write(const PeerEvent& event) override {
    FUZZ_CHECK(!finished_);
    FUZZ_CHECK(!writing_);
    FUZZ_CHECK(event.sequence == last_sequence_ + 1);
    last_sequence_ = event.sequence;
    writing_ = true;
    ToProto(event, &out_);
  }
  void Finish(const Status& status) override {
    FUZZ_CHECK(!finished_);
    FUZZ_CHECK(!writing_);
    fuzz::CheckStatus(status);
    finished_ = true;
  }

  bool writing_ = false;
  bool finished_ = false;
  bool done_ = false;
  uint64_t last_sequence_ = 0;
  v1::PeerEvent out_;
  std::shared_ptr<InboundStream> stream_;
};

struct World {
  ManualClock clock;
  FixedHello hello{fuzz::SelfHello()};
  PeerInbound inbound{hello, clock};
  std::vector<std::unique_ptr<Writer>> writers;
  std::vector<std::string> instances;  // of the sessions opened

  Writer* Pick(std::string_view payload) {
    if (writers.empty()) return nullptr;
    return writers[fuzz::RawU32(payload.substr(0, 1)) % writers.size()].get();
  }

  // What gRPC does once a stream is finished and its last write completed.
  void Done(Writer* w) {
    if (w->done_ || !w->finished_ || w->writing_) return;
    w->done_ = true;
    w->stream_->Detach();
    w->stream_.reset();
  }

  ~World() {
    for (auto& w : writers) {
      if (w->done_) continue;
      if (w->writing_) {
        w->writing_ = false;
        w->stream_->OnWriteDone(false);
      }
      if (!w->finished_) w->stream_->Cancel();
      while (w->writing_) {  // a write started before the cancel took
        w->writing_ = false;
        w->stream_->OnWriteDone(false);
      }
      FUZZ_CHECK(w->finished_);
      Done(w.get());
    }
    inbound.Close();
  }

  void Run(SessionOp op, std::string_view payload) {
    switch (op) {
      case SessionOp::kHello: {
        v1::HelloRequest req;
        if (!fuzz::Parse(payload, &req)) return;
        if (!req.has_self()) return;  // the handler: "self: required"
        PeerHello remote = FromProto(req.self());
        auto local = inbound.Hello(remote, "ipv4:192.0.2.7:40000");
        fuzz::CheckStatus(local.status());
        // A malformed Hello is refused; a well-formed one too when its
        // instance belongs to another node (or to this daemon), or when
        // the registry of nodes is full.
        if (!ValidateHello(remote, "self").ok()) {
          FUZZ_CHECK(!local.ok());
        } else {
          StatusCode code = local.status().code();
          FUZZ_CHECK(local.ok() || code == StatusCode::kPermissionDenied ||
                     code == StatusCode::kResourceExhausted);
        }
        if (local.ok()) {
          v1::HelloResponse response;
          ToProto(local.value(), response.mutable_self());
        }
        break;
      }
      case SessionOp::kSession: {
        v1::SessionRequest req;
        if (!fuzz::Parse(payload, &req) || writers.size() >= 16) return;
        auto w = std::make_unique<Writer>();
        w->stream_ = inbound.NewStream(w.get());
        SessionOpen open = FromProto(req);
        w->stream_->Start(open, "ipv4:192.0.2.7:40000");
        FUZZ_CHECK(w->finished_ || ValidateSessionOpen(open).ok());
        if (!w->finished_) instances.push_back(open.instance_id);
        writers.push_back(std::move(w));
        break;
      }
      case SessionOp::kWriteDone: {
        Writer* w = Pick(payload);
        if (w == nullptr || !w->writing_) return;
        w->writing_ = false;
        w->stream_->OnWriteDone((fuzz::RawU32(payload, 1) & 0xFF) % 4 != 0);
        break;
      }
      case SessionOp::kCancel: {
        Writer* w = Pick(payload);
        if (w == nullptr || w->done_) return;
        w->stream_->Cancel();
        break;
      }
      case SessionOp::kDone: {
        Writer* w = Pick(payload);
        if (w != nullptr) Done(w);
        break;
      }
      case SessionOp::kTick: {
        clock.Advance(std::chrono::milliseconds(fuzz::RawU32(payload.substr(0, 3))));
        inbound.Tick();
        break;
      }
      case SessionOp::kSend: {
        v1::PeerEvent wire;
        if (!fuzz::Parse(payload, &wire)) return;
        PeerEvent event = FromProto(wire);
        std::string instance = instances.empty() ? std::string(fuzz::kPeerInstance)
                                                 : instances[event.channel_id % instances.size()];
        Status sent = inbound.Send(instance, event);
        fuzz::CheckStatus(sent);
        break;
      }
      case SessionOp::kHelloReply: {
        v1::HelloResponse reply;
        if (!fuzz::Parse(payload, &reply)) return;
        if (!reply.has_self()) return;  // the link: "the peer's reply has no self"
        PeerHello hello = FromProto(reply.self());
        Status valid = ValidateHello(hello, "the peer's reply: self");
        fuzz::CheckStatus(valid);
        if (!valid.ok()) return;
        fuzz::CheckStatus(CheckProtocol(LocalProtocolVersion(), hello.protocol, hello.host_name));
        (void)FormatProtocol(hello.protocol);
        break;
      }
      case SessionOp::kEvent: {
        v1::PeerEvent wire;
        if (!fuzz::Parse(payload, &wire)) return;
        PeerEvent event = FromProto(wire);
        FUZZ_CHECK(event.reason.size() <= 1024);
        v1::PeerEvent back;
        ToProto(event, &back);
        break;
      }
      case SessionOp::kClose: inbound.Close(); break;
      case SessionOp::kCount: break;
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInit();
  World world;
  fuzz::Script script(data, size);
  uint8_t op;
  std::string_view payload;
  while (script.Next(&op, &payload)) {
    world.Run(static_cast<SessionOp>(op % uint8_t(SessionOp::kCount)), payload);
  }
  return 0;
}
