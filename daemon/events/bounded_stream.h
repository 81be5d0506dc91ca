// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// BoundedStream<T> is the one writer of the daemon's server streams
// (WatchEvents, Listen, WatchPool, and the peer Session stream): one write
// in flight at a time, the items that arrive meanwhile queued up to a bound,
// so a reader that stops reading costs bounded memory. What a full queue
// means is the stream's policy:
//   kFail        every item matters (requests, events): one item more than
//                max_queued ends the stream with options.overflow (after the
//                write in flight) and frees the queue at once;
//   kKeepLatest  each item is the whole state (a target list): a new item
//                replaces the ones waiting, nothing is ever refused.
// Close(status) ends the stream once the queue is written; Abort(status)
// drops the queue and ends it after the write in flight. The first ending
// wins. The writer's Finish is called exactly once, and after it no writer
// call is made and no member is touched (the reactor may delete itself).
//
// The writer is a gRPC reactor in daemon/rpc or a fake in tests; the queue
// logic lives here once, tested without gRPC.
//
// Thread safety: every method may be called from any thread. Writer calls
// are made without the lock held, in the order decided under it.

#ifndef RDMAD_DAEMON_EVENTS_BOUNDED_STREAM_H_
#define RDMAD_DAEMON_EVENTS_BOUNDED_STREAM_H_

#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

#include "rdmad/status.h"

namespace rdmad {

template <typename T>
class BoundedStream {
 public:
  class Writer {
   public:
    virtual ~Writer() = default;
    // Starts writing item; the writer calls OnWriteDone when it is done.
    // item stays valid until then.
    virtual void Write(const T& item) = 0;
    // Ends the stream with status. Called exactly once.
    virtual void Finish(const Status& status) = 0;
  };

  enum class Overflow { kFail, kKeepLatest };

  struct Options {
    size_t max_queued = 1024;  // items waiting behind the one being written
    Overflow overflow_policy = Overflow::kFail;
    Status overflow = Status::ResourceExhausted("the stream's reader is not reading");
    Status write_failed = Status::Unavailable("the stream's reader went away");
  };

  enum class Pushed { kQueued, kEnding, kOverflowed };

  BoundedStream(Writer* writer, Options options) : writer_(writer), options_(std::move(options)) {}
  BoundedStream(const BoundedStream&) = delete;
  BoundedStream& operator=(const BoundedStream&) = delete;

  // Queues item and starts writing it if nothing is in flight. stamp, if
  // given, runs on the item under the lock (e.g. to number items in the
  // order they are written). kEnding: the stream is ending, the item is
  // dropped; kOverflowed: this item overflowed a kFail stream, which now
  // ends with options.overflow.
  Pushed Push(T item) {
    return Push(std::move(item), [](T&) {});
  }
  template <typename Stamp>
  Pushed Push(T item, Stamp stamp) {
    Step step;
    Pushed pushed = Pushed::kQueued;
    {
      std::lock_guard lock(mu_);
      if (ending_) return Pushed::kEnding;
      if (options_.overflow_policy == Overflow::kKeepLatest) {
        queue_.clear();
      } else if (queue_.size() >= options_.max_queued) {
        EndLocked(options_.overflow, /*drop_queue=*/true);
        pushed = Pushed::kOverflowed;
      }
      if (pushed == Pushed::kQueued) {
        stamp(item);
        queue_.push_back(std::move(item));
      }
      step = NextLocked();
    }
    Perform(step);
    return pushed;
  }

  // Something the writer does that completes with OnWriteDone like a write
  // (sending the headers, say) is in flight: items queue behind it.
  void HoldForWrite() {
    std::lock_guard lock(mu_);
    writing_ = true;
  }

  // The write in flight completed (ok = false: the reader is gone, and the
  // stream ends with options.write_failed).
  void OnWriteDone(bool ok) {
    Step step;
    {
      std::lock_guard lock(mu_);
      writing_ = false;
      if (!ok) EndLocked(options_.write_failed, /*drop_queue=*/true);
      step = NextLocked();
    }
    Perform(step);
  }

  // Ends the stream with status once every queued item is written.
  void Close(const Status& status) { End(status, /*drop_queue=*/false); }
  // Ends the stream with status after the write in flight; drops the queue.
  void Abort(const Status& status) { End(status, /*drop_queue=*/true); }

  // Nothing in flight and nothing queued.
  bool idle() const {
    std::lock_guard lock(mu_);
    return !writing_ && queue_.empty();
  }
  bool ending() const {
    std::lock_guard lock(mu_);
    return ending_;
  }
  size_t queued() const {
    std::lock_guard lock(mu_);
    return queue_.size();
  }

 private:
  enum class Action { kNone, kWrite, kFinish };
  struct Step {
    Action action = Action::kNone;
    Status final;
  };

  void End(const Status& status, bool drop_queue) {
    Step step;
    {
      std::lock_guard lock(mu_);
      EndLocked(status, drop_queue);
      step = NextLocked();
    }
    Perform(step);
  }

  void EndLocked(const Status& status, bool drop_queue) {
    if (ending_) return;
    ending_ = true;
    final_ = status;
    if (drop_queue) queue_.clear();
  }

  Step NextLocked() {
    if (finished_ || writing_) return {};
    if (!queue_.empty()) {
      current_ = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
      return {Action::kWrite, {}};
    }
    if (ending_) {
      finished_ = true;
      return {Action::kFinish, final_};
    }
    return {};
  }

  // Nothing may touch members after Finish: the writer may be gone.
  void Perform(const Step& step) {
    if (step.action == Action::kWrite) writer_->Write(current_);
    if (step.action == Action::kFinish) writer_->Finish(step.final);
  }

  Writer* const writer_;
  const Options options_;
  mutable std::mutex mu_;
  std::deque<T> queue_;    // guarded by mu_
  T current_{};            // the item being written; guarded by writing_
  bool writing_ = false;   // guarded by mu_
  bool ending_ = false;    // guarded by mu_: no new items, finish when drained
  bool finished_ = false;  // guarded by mu_: Finish was called
  Status final_;           // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_EVENTS_BOUNDED_STREAM_H_
