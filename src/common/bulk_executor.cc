#include "common/bulk_executor.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#include "common/thread_priority.h"

namespace strata {
namespace {

thread_local bool on_bulk_thread = false;

class BulkExecutor {
 public:
  BulkExecutor(int threads, const char* name) : name_(name) {
    for (int i = 0; i < threads; ++i) {
      try {
        std::thread([this] { Run(); }).detach();  // lives as long as the process
        ++threads_;
      } catch (const std::system_error&) {  // out of threads: make do with those started
        break;
      }
    }
  }
  int threads() const { return threads_; }
  void Add(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(task));
      queued_.store(queue_.size(), std::memory_order_relaxed);
    }
    cv_.notify_one();
  }
  size_t Queued() const { return queued_.load(std::memory_order_relaxed); }

 private:
  void Run() {
    NameThisThread(name_);
    on_bulk_thread = true;
    LowerThisThreadPriority();
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        task = std::move(queue_.front());
        queue_.pop_front();
        queued_.store(queue_.size(), std::memory_order_relaxed);
      }
      task();
    }
  }
  const char* name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::atomic<size_t> queued_{0};
  int threads_ = 0;  // set before any task is added
};

BulkExecutor& Executor() {
  static auto* executor = new BulkExecutor(BulkThreads(), "bulk");  // never destroyed: threads outlive exit
  return *executor;
}

// Direct writes of large PUTs have threads of their own: queued behind every
// GET's check-ahead steps, a PUT would get one chunk through per round of them.
BulkExecutor& WriteExecutor() {
  static auto* executor = new BulkExecutor(BulkThreads(), "bulk-write");
  return *executor;
}

}  // namespace

int BulkThreads() {
  return std::max(8, 2 * static_cast<int>(std::thread::hardware_concurrency()));
}

void RunBulkTask(std::function<void()> task) { Executor().Add(std::move(task)); }

void RunBulkWrite(std::function<void()> task) { WriteExecutor().Add(std::move(task)); }

bool BulkWriteThreadsRunning() { return WriteExecutor().threads() > 0; }

size_t BulkTasksQueued() { return Executor().Queued(); }

bool BulkThreadsRunning() { return Executor().threads() > 0; }

bool OnBulkThread() { return on_bulk_thread; }

}  // namespace strata
