// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Test doubles of the peer transport (peer_link.h), shared by the unit
// tests of the peer sessions, the circuit breaker and the broker, and by the
// fuzz targets:
//   FakePeerLink       records every call; answers a Hello at once with
//                      hello_answer, or keeps it for Answer(); a Session
//                      stream beats at once when beat_on_open; OpenChannel
//                      is answered by open_batch_answer, else by
//                      open_answer (once per channel of a batch), else
//                      kept waiting;
//                      CloseChannel calls are recorded and answered by
//                      close_answer (OK without one).
//   FakePeerConnector  makes FakePeerLinks (each set up by configure), or
//                      refuses with INVALID_ARGUMENT(refuse).
// Test code only: nothing in the daemon links it.
//
// Thread safety: the recorded calls are guarded by mu (Closes(), Hellos()
// read them safely); the rest is for the test's own thread.

#ifndef RDMAD_DAEMON_PEERS_FAKE_PEER_LINK_H_
#define RDMAD_DAEMON_PEERS_FAKE_PEER_LINK_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "daemon/peers/peer_link.h"

namespace rdmad {

// One Session stream as the fake sees it; End() ends it as the transport
// would, the stream's destruction before that counts as a cancel.
struct FakePeerStreamState {
  SessionOpen open;
  std::shared_ptr<PeerStreamObserver> observer;
  bool ended = false;
  bool cancelled = false;
  void Send(const PeerEvent& event) { observer->OnStreamEvent(event); }
  void End(const Status& status) {
    if (ended) return;
    ended = true;
    observer->OnStreamEnd(status);
  }
};

class FakePeerStream : public PeerStream {
 public:
  explicit FakePeerStream(std::shared_ptr<FakePeerStreamState> state) : state_(std::move(state)) {}
  ~FakePeerStream() override {
    if (!state_->ended) state_->cancelled = true;
    state_->End(Status::Cancelled("cancelled"));
  }

 private:
  std::shared_ptr<FakePeerStreamState> state_;
};

class FakePeerLink : public PeerLink {
 public:
  explicit FakePeerLink(std::string target = "127.0.0.1:7581") : target_(std::move(target)) {}

  // How the fake answers; set before use.
  std::function<StatusOr<PeerHello>()> hello_answer;  // none: Answer() by hand
  bool beat_on_open = false;
  std::function<StatusOr<ChannelEndpoint>(const OpenChannelCall&)> open_answer;  // none: wait
  // The whole call at once (a batch in one answer); before open_answer.
  std::function<StatusOr<ChannelEndpoints>(const OpenChannelCall&)> open_batch_answer;
  std::function<Status(const CloseChannelCall&)> close_answer;      // none: OK
  std::function<Status(const ReclaimChannelCall&)> reclaim_answer;  // none: OK

  const std::string& target() const override { return target_; }

  void Hello(const PeerHello& self, std::chrono::milliseconds, HelloDone done) override {
    {
      std::lock_guard lock(mu);
      sent.push_back(self);
    }
    pending.push_back(std::move(done));
    if (hello_answer) Answer(hello_answer());
  }

  std::unique_ptr<PeerStream> OpenSession(const SessionOpen& open,
                                          std::shared_ptr<PeerStreamObserver> observer) override {
    auto state = std::make_shared<FakePeerStreamState>();
    state->open = open;
    state->observer = std::move(observer);
    streams.push_back(state);
    if (beat_on_open) Beat();
    return std::make_unique<FakePeerStream>(state);
  }

  void OpenChannel(const OpenChannelCall& call, std::chrono::milliseconds, OpenDone done) override {
    if (open_batch_answer) return done(open_batch_answer(call));
    if (open_answer) return done(AnswerEach(call));
    std::lock_guard lock(mu);
    waiting_open = std::move(done);
  }

  void CloseChannel(const CloseChannelCall& call, CloseDone done) override {
    {
      std::lock_guard lock(mu);
      closes.push_back(call);
    }
    done(close_answer ? close_answer(call) : Status::Ok());
  }

  void ReclaimChannel(const ReclaimChannelCall& call, CloseDone done) override {
    {
      std::lock_guard lock(mu);
      reclaims.push_back(call);
    }
    done(reclaim_answer ? reclaim_answer(call) : Status::Ok());
  }

  // open_answer for each channel of call (a batch's as calls of their own).
  StatusOr<ChannelEndpoints> AnswerEach(const OpenChannelCall& call) {
    ChannelEndpoints answers;
    OpenChannelCall one = call;
    for (const ChannelOpening& channel : call.channels) {
      one.channels = {channel};
      StatusOr<ChannelEndpoint> answer = open_answer(one);
      if (!answer.ok()) return answer.status();
      answers.push_back(std::move(answer).value());
    }
    return answers;
  }

  // Answers the oldest pending Hello.
  void Answer(StatusOr<PeerHello> result) {
    if (pending.empty()) return;
    HelloDone done = std::move(pending.front());
    pending.erase(pending.begin());
    done(std::move(result));
  }
  // A heartbeat on the newest Session stream.
  void Beat() { streams.back()->Send(PeerEvent{}); }

  size_t Hellos() {
    std::lock_guard lock(mu);
    return sent.size();
  }
  std::vector<CloseChannelCall> Closes() {
    std::lock_guard lock(mu);
    return closes;
  }
  std::vector<ReclaimChannelCall> Reclaims() {
    std::lock_guard lock(mu);
    return reclaims;
  }

  std::mutex mu;
  std::vector<PeerHello> sent;                                // guarded by mu
  std::vector<CloseChannelCall> closes;                       // guarded by mu
  std::vector<ReclaimChannelCall> reclaims;                   // guarded by mu
  OpenDone waiting_open;                                      // guarded by mu
  std::vector<HelloDone> pending;                             // Hellos not yet answered
  std::vector<std::shared_ptr<FakePeerStreamState>> streams;  // every Session opened

 private:
  std::string target_;
};

class FakePeerConnector : public PeerConnector {
 public:
  StatusOr<std::shared_ptr<PeerLink>> Connect(const std::string& target) override {
    std::lock_guard lock(mu);
    if (!refuse.empty()) return Status::InvalidArgument(refuse);
    auto link = std::make_shared<FakePeerLink>(target);
    if (configure) configure(*link);
    links.push_back(link);
    return std::shared_ptr<PeerLink>(link);
  }

  // Hellos sent over every link made so far.
  size_t Hellos() {
    std::lock_guard lock(mu);
    size_t n = 0;
    for (auto& link : links) n += link->Hellos();
    return n;
  }

  std::function<void(FakePeerLink&)> configure;  // each new link, before use
  std::string refuse;                            // non-empty: Connect fails with it
  std::mutex mu;
  std::vector<std::shared_ptr<FakePeerLink>> links;  // guarded by mu
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_FAKE_PEER_LINK_H_
