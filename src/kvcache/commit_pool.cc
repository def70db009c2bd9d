#include "kvcache/commit_pool.h"

#include <exception>
#include <string>
#include <utility>

#include "common/log.h"

namespace strata::kvcache {

int CommitPool::Start(const ThreadFactory& make) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < threads_wanted_ && !stopping_; ++i) {
    try {
      threads_.push_back(make([this] { Loop(); }));
    } catch (const std::exception& e) {
      STRATA_LOG("kv: %d of %d commit threads started: %s", i, threads_wanted_, e.what());
      break;
    }
  }
  return static_cast<int>(threads_.size());
}

void CommitPool::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) {
    if (t.joinable()) t.join();
  }
}

void CommitPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && !threads_.empty()) {
      queue_.push_back(std::move(task));
      cv_.notify_one();
      return;
    }
  }
  task();
}

void CommitPool::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace strata::kvcache
