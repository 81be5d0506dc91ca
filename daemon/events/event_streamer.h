// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// EventStreamer connects one subscriber stream (WatchEvents) to the EventBus
// through a small StreamWriter interface, so the queueing and shutdown logic
// is tested without gRPC. It writes through a BoundedStream (kFail): one
// write in flight at a time, events arriving meanwhile wait in a bounded
// queue. Events are not dropped silently: a
// client that stops reading and lets the queue fill is ended with
// RESOURCE_EXHAUSTED "the client is not reading" (after the write in flight)
// and the queue is freed at once.
// When the bus closes (daemon stopping) the queue is drained and the stream
// finished with OK.
//
// Thread safety: OnEvent/OnClose come from the bus, OnWriteDone/Cancel from
// the RPC runtime; all are safe to call concurrently. After the writer's
// Finish has been called the streamer makes no further writer calls.

#ifndef RDMAD_DAEMON_EVENTS_EVENT_STREAMER_H_
#define RDMAD_DAEMON_EVENTS_EVENT_STREAMER_H_

#include <cstddef>
#include <mutex>
#include <set>

#include "daemon/events/bounded_stream.h"
#include "daemon/events/event_bus.h"
#include "rdmad/status.h"

namespace rdmad {

// Where a stream's events go (a gRPC write reactor in the daemon): the
// BoundedStream writer, and Begin.
class StreamWriter : public BoundedStream<DaemonEvent>::Writer {
 public:
  // Opens the stream (sends headers), telling the client it is subscribed;
  // completes with EventStreamer::OnWriteDone like a write.
  virtual void Begin() = 0;
};

class EventStreamer : public EventSink {
 public:
  static constexpr size_t kDefaultMaxQueued = 1024;

  EventStreamer(EventBus* bus, StreamWriter* writer, size_t max_queued = kDefaultMaxQueued);
  ~EventStreamer() override;

  // Subscribes to the bus for kinds (empty: all), then calls writer->Begin();
  // events that arrive before Begin completes are queued.
  void Start(std::set<EventKind> kinds);

  // The writer finished one write (ok=false: the client is gone).
  void OnWriteDone(bool ok) { stream_.OnWriteDone(ok); }
  // The client cancelled the call.
  void Cancel();
  // Unsubscribes; call before destroying (not from within OnEvent).
  void Detach();

  // EventSink:
  void OnEvent(const DaemonEvent& event) override;
  void OnClose() override;

 private:
  EventBus* bus_;
  StreamWriter* writer_;
  BoundedStream<DaemonEvent> stream_;
  std::mutex mu_;
  uint64_t subscription_ = 0;  // guarded by mu_
  bool bus_closed_ = false;    // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_EVENTS_EVENT_STREAMER_H_
