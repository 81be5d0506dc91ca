// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/events/event_bus.h"

#include <algorithm>
#include <chrono>

namespace rdmad {

EventBus::EventBus(const Clock& clock) : clock_(clock) {}

uint64_t EventBus::Subscribe(EventSink* sink, std::set<EventKind> kinds) {
  std::lock_guard lock(mu_);
  if (closed_) {
    sink->OnClose();
    return 0;
  }
  uint64_t id = next_id_++;
  entries_.push_back({id, sink, std::move(kinds)});
  return id;
}

void EventBus::Unsubscribe(uint64_t id) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [id](const Entry& e) { return e.id == id; });
}

uint64_t EventBus::Publish(EventKind kind, std::string message, std::string device, int port) {
  std::lock_guard lock(mu_);
  const int64_t unix_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.WallNow().time_since_epoch())
          .count();
  DaemonEvent event{next_sequence_++, unix_ms, kind, std::move(message), std::move(device), port};
  if (closed_) return event.sequence;
  for (const Entry& e : entries_) {
    if (e.kinds.empty() || e.kinds.count(kind)) e.sink->OnEvent(event);
  }
  return event.sequence;
}

void EventBus::Close() {
  std::vector<Entry> entries;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    entries.swap(entries_);
  }
  // Outside the lock: a sink may finish its stream and unsubscribe at once.
  for (const Entry& e : entries) e.sink->OnClose();
}

size_t EventBus::subscriber_count() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace rdmad
