// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// EventBus fans daemon events out to subscribers (WatchEvents streams, tests).
// A subscriber is an EventSink: it must not block in OnEvent; the RPC edge
// queues and writes asynchronously. Close() tells every sink the daemon is
// stopping, after which no event is delivered.
//
// Thread safety: all methods may be called from any thread. OnEvent is called
// with the bus's lock held, so a sink must not call back into the bus from it;
// OnClose is called without the lock, after the sink was removed.

#ifndef RDMAD_DAEMON_EVENTS_EVENT_BUS_H_
#define RDMAD_DAEMON_EVENTS_EVENT_BUS_H_

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "rdmad/events.h"

namespace rdmad {

struct DaemonEvent {
  uint64_t sequence = 0;
  int64_t unix_time_ms = 0;
  EventKind kind = EventKind::kConfigReloaded;
  std::string message;
  std::string device;  // device events only
  int port = 0;        // port and GID events only
};

// Receives events. Implementations must be cheap and non-blocking.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // An event that matched the sink's filter.
  virtual void OnEvent(const DaemonEvent& event) = 0;
  // The bus is closing: deliver what is queued, then end.
  virtual void OnClose() = 0;
};

class EventBus {
 public:
  // clock: stamps the events (not owned; outlives the bus).
  explicit EventBus(const Clock& clock = Clock::System());

  // Registers sink for the given kinds (empty: all). Returns an id for
  // Unsubscribe, or 0 if the bus is already closed (the sink's OnClose has
  // then been called).
  uint64_t Subscribe(EventSink* sink, std::set<EventKind> kinds);
  void Unsubscribe(uint64_t id);

  // Stamps and delivers an event; returns its sequence number.
  uint64_t Publish(EventKind kind, std::string message, std::string device = "", int port = 0);

  // Removes every sink, calls its OnClose, and refuses further subscriptions.
  void Close();

  size_t subscriber_count() const;

 private:
  struct Entry {
    uint64_t id;
    EventSink* sink;
    std::set<EventKind> kinds;
  };
  const Clock& clock_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  uint64_t next_id_ = 1;
  uint64_t next_sequence_ = 1;
  bool closed_ = false;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_EVENTS_EVENT_BUS_H_
