#pragma once

#include <arrow/status.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace ketch {

class MemoryManager;

/// Bytes held by one operator's permits right now and at most (explain_analyze's per-operator peak).
struct MemoryTracker {
  std::atomic<int64_t> current{0};
  std::atomic<int64_t> peak{0};
  void Add(int64_t bytes) {
    const int64_t now = current.fetch_add(bytes) + bytes;
    int64_t seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
  }
  void Sub(int64_t bytes) { current.fetch_sub(bytes); }
};

/// Bytes held from a MemoryManager; returned when the permit is destroyed (RAII).
class MemoryPermit {
 public:
  MemoryPermit() = default;
  MemoryPermit(MemoryManager* manager, int64_t bytes, MemoryTracker* tracker = nullptr)
      : manager_(manager), tracker_(tracker), bytes_(bytes) {
    if (tracker_) tracker_->Add(bytes_);
  }
  MemoryPermit(MemoryPermit&& other) noexcept { *this = std::move(other); }
  MemoryPermit& operator=(MemoryPermit&& other) noexcept;
  MemoryPermit(const MemoryPermit&) = delete;
  MemoryPermit& operator=(const MemoryPermit&) = delete;
  ~MemoryPermit() { Release(); }
  int64_t bytes() const { return bytes_; }
  void Release();

 private:
  MemoryManager* manager_ = nullptr;
  MemoryTracker* tracker_ = nullptr;
  int64_t bytes_ = 0;
};

/// The bytes a blocking sink keeps between calls (its buffered morsels or its kept state), charged to
/// a MemoryManager as one reservation that follows the count: `Add` and `Set` replace the reservation
/// (the old one is returned first, so the manager's peak never counts both), `Clear` returns it;
/// `Count` then `Charge` batch several additions into one reservation.
class HeldBytes {
 public:
  void Add(MemoryManager* memory, int64_t bytes, MemoryTracker* tracker) {
    Set(memory, bytes_ + bytes, tracker);
  }
  inline void Set(MemoryManager* memory, int64_t bytes, MemoryTracker* tracker);
  void Count(int64_t bytes) { bytes_ += bytes; }
  void Charge(MemoryManager* memory, MemoryTracker* tracker) { Set(memory, bytes_, tracker); }
  void Clear() {
    bytes_ = 0;
    permit_.Release();
  }
  int64_t bytes() const { return bytes_; }

 private:
  int64_t bytes_ = 0;
  MemoryPermit permit_;
};

/// A byte budget shared by one query's operators. `Acquire` waits while the budget is spent (one
/// request is always admitted when nothing is held, so a morsel larger than the budget still
/// runs alone instead of deadlocking); `TryAcquire` never waits. Peak use is recorded.
class MemoryManager {
 public:
  explicit MemoryManager(int64_t budget_bytes) : budget_(budget_bytes) {}

  /// Waits until `bytes` fit, or until `cancelled()` turns true (then returns an empty permit).
  /// `tracker`, when given, counts the bytes as held by one operator. `alone()` (checked while
  /// waiting) admits the request anyway when the caller knows nothing of its own is in flight to
  /// free memory: what is held then is blocking sinks' state or buffered rows that only more input
  /// can move on, so waiting would deadlock (the budget is exceeded by at most this request).
  template <typename Cancelled, typename Alone>
  MemoryPermit Acquire(int64_t bytes, Cancelled cancelled, MemoryTracker* tracker, Alone alone) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (used_ > 0 && used_ + bytes > budget_) {
      if (cancelled()) return MemoryPermit();
      if (alone()) break;
      released_.wait_for(lock, std::chrono::milliseconds(20));
    }
    used_ += bytes;
    if (used_ > peak_) peak_ = used_;
    return MemoryPermit(this, bytes, tracker);
  }

  template <typename Cancelled>
  MemoryPermit Acquire(int64_t bytes, Cancelled cancelled, MemoryTracker* tracker = nullptr) {
    return Acquire(bytes, cancelled, tracker, [] { return false; });
  }

  /// Records `bytes` as held without waiting: blocking sinks (which bound themselves by spilling)
  /// and intermediate operators' outputs (their input already waited for its permit).
  MemoryPermit Reserve(int64_t bytes, MemoryTracker* tracker = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    used_ += bytes;
    if (used_ > peak_) peak_ = used_;
    return MemoryPermit(this, bytes, tracker);
  }

  int64_t budget() const { return budget_; }
  int64_t used() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return used_;
  }
  int64_t peak() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }

 private:
  friend class MemoryPermit;
  void Release(int64_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      used_ -= bytes;
    }
    released_.notify_all();
  }

  const int64_t budget_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  int64_t used_ = 0;
  int64_t peak_ = 0;
};

inline MemoryPermit& MemoryPermit::operator=(MemoryPermit&& other) noexcept {
  if (this != &other) {
    Release();
    manager_ = other.manager_;
    tracker_ = other.tracker_;
    bytes_ = other.bytes_;
    other.manager_ = nullptr;
    other.tracker_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

inline void MemoryPermit::Release() {
  if (manager_ && bytes_ > 0) manager_->Release(bytes_);
  if (tracker_) tracker_->Sub(bytes_);
  manager_ = nullptr;
  tracker_ = nullptr;
  bytes_ = 0;
}

inline void HeldBytes::Set(MemoryManager* memory, int64_t bytes, MemoryTracker* tracker) {
  permit_.Release();
  bytes_ = bytes;
  permit_ = memory->Reserve(bytes, tracker);
}

}  // namespace ketch
