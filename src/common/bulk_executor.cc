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

class BulkExecutor {
 public:
  explicit BulkExecutor(int threads) {
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
    NameThisThread("bulk");
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
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::atomic<size_t> queued_{0};
  int threads_ = 0;  // set before any task is added
};

BulkExecutor& Executor() {
  static auto* executor = new BulkExecutor(BulkThreads());  // never destroyed: threads outlive exit
  return *executor;
}

}  // namespace

int BulkThreads() {
  return std::max(8, 2 * static_cast<int>(std::thread::hardware_concurrency()));
}

void RunBulkTask(std::function<void()> task) { Executor().Add(std::move(task)); }

size_t BulkTasksQueued() { return Executor().Queued(); }

bool BulkThreadsRunning() { return Executor().threads() > 0; }

}  // namespace strata
