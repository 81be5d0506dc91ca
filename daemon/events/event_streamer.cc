// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/events/event_streamer.h"

namespace rdmad {

EventStreamer::EventStreamer(EventBus* bus, StreamWriter* writer, size_t max_queued)
    : bus_(bus), writer_(writer), max_queued_(max_queued) {}

EventStreamer::~EventStreamer() { Detach(); }

void EventStreamer::Start(std::set<DaemonEventKind> kinds) {
  {
    std::lock_guard lock(mu_);
    writing_ = true;  // Begin() is the first operation in flight
  }
  uint64_t id = bus_->Subscribe(this, std::move(kinds));
  {
    std::lock_guard lock(mu_);
    if (!closing_) subscription_ = id;  // OnClose may have run already
  }
  writer_->Begin();
}

void EventStreamer::Detach() {
  uint64_t id;
  {
    std::lock_guard lock(mu_);
    id = subscription_;
    subscription_ = 0;
  }
  if (id != 0) bus_->Unsubscribe(id);
}

EventStreamer::Action EventStreamer::NextLocked(DaemonEvent* next, Status* final) {
  if (finished_ || writing_) return Action::kNone;
  if (!queue_.empty() && final_.ok()) {
    *next = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    return Action::kWrite;
  }
  if (closing_) {
    finished_ = true;
    *final = final_;
    return Action::kFinish;
  }
  return Action::kNone;
}

void EventStreamer::Perform(Action action, const DaemonEvent& next, const Status& final) {
  // Nothing may touch members after Finish: the stream may be torn down.
  if (action == Action::kWrite) writer_->Write(next);
  if (action == Action::kFinish) writer_->Finish(final);
}

void EventStreamer::OnEvent(const DaemonEvent& event) {
  DaemonEvent next;
  Status final;
  Action action;
  {
    std::lock_guard lock(mu_);
    if (finished_ || closing_) return;
    if (queue_.size() >= max_queued_) {
      // A write is in flight (the queue only grows then); finish after it.
      closing_ = true;
      queue_.clear();
      final_ = Status::ResourceExhausted("event stream closed: the client is not reading (" +
                                         std::to_string(max_queued_) + " events queued)");
      return;
    }
    queue_.push_back(event);
    action = NextLocked(&next, &final);
  }
  Perform(action, next, final);
}

void EventStreamer::OnClose() {
  DaemonEvent next;
  Status final;
  Action action;
  {
    std::lock_guard lock(mu_);
    subscription_ = 0;  // the bus already dropped us
    closing_ = true;
    action = NextLocked(&next, &final);
  }
  Perform(action, next, final);
}

void EventStreamer::OnWriteDone(bool ok) {
  DaemonEvent next;
  Status final;
  Action action;
  {
    std::lock_guard lock(mu_);
    writing_ = false;
    if (!ok && !closing_) {
      closing_ = true;
      queue_.clear();
      final_ = Status::Unavailable("event stream write failed; client gone");
    }
    action = NextLocked(&next, &final);
  }
  Perform(action, next, final);
}

void EventStreamer::Cancel() {
  Detach();
  DaemonEvent next;
  Status final;
  Action action;
  {
    std::lock_guard lock(mu_);
    if (!closing_) {
      closing_ = true;
      queue_.clear();
      final_ = Status::Cancelled("cancelled by the client");
    }
    action = NextLocked(&next, &final);
  }
  Perform(action, next, final);
}

}  // namespace rdmad
