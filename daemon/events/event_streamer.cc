// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/events/event_streamer.h"

#include <string>
#include <utility>

namespace rdmad {
namespace {

BoundedStream<DaemonEvent>::Options StreamOptions(size_t max_queued) {
  BoundedStream<DaemonEvent>::Options o;
  o.max_queued = max_queued;
  o.overflow = Status::ResourceExhausted("event stream closed: the client is not reading (" +
                                         std::to_string(max_queued) + " events queued)");
  o.write_failed = Status::Unavailable("event stream write failed; client gone");
  return o;
}

}  // namespace

EventStreamer::EventStreamer(EventBus* bus, StreamWriter* writer, size_t max_queued)
    : bus_(bus), writer_(writer), stream_(writer, StreamOptions(max_queued)) {}

EventStreamer::~EventStreamer() { Detach(); }

void EventStreamer::Start(std::set<EventKind> kinds) {
  stream_.HoldForWrite();  // Begin() is the first operation in flight
  uint64_t id = bus_->Subscribe(this, std::move(kinds));
  {
    std::lock_guard lock(mu_);
    if (!bus_closed_) subscription_ = id;  // OnClose may have run already
  }
  writer_->Begin();
}

void EventStreamer::Detach() {
  uint64_t id;
  {
    std::lock_guard lock(mu_);
    id = std::exchange(subscription_, 0);
  }
  if (id != 0) bus_->Unsubscribe(id);
}

void EventStreamer::OnEvent(const DaemonEvent& event) {
  // A client that lets the queue fill is ended (RESOURCE_EXHAUSTED).
  (void)stream_.Push(event);
}

void EventStreamer::OnClose() {
  {
    std::lock_guard lock(mu_);
    subscription_ = 0;  // the bus already dropped us
    bus_closed_ = true;
  }
  stream_.Close(Status::Ok());  // the daemon is stopping: drain, then OK
}

void EventStreamer::Cancel() {
  Detach();
  stream_.Abort(Status::Cancelled("cancelled by the client"));
}

}  // namespace rdmad
