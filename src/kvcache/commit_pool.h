// Threads that make stored KV blocks durable (ObjectWriter::Commit: the data
// file's sync, its rename and the metadata batch) while the session that
// received a block goes on reading the next one from its connection. A PUT
// frame's blocks are then synced side by side (and their metadata batches
// share the WAL's group commit) instead of one after another. Internal to
// the server.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "kvcache/server.h"

namespace strata::kvcache {

class CommitPool {
 public:
  explicit CommitPool(int threads) : threads_wanted_(threads) {}
  ~CommitPool() { Stop(); }
  CommitPool(const CommitPool&) = delete;
  CommitPool& operator=(const CommitPool&) = delete;

  // Starts the threads and returns how many did: a thread that cannot be
  // made is logged and done without. Until then, and with none, Submit runs
  // the task on the caller's thread.
  int Start(const ThreadFactory& make);
  // Runs every task already submitted, then joins the threads. Idempotent.
  void Stop();
  // Runs `task` on a pool thread, in submission order as threads free up;
  // on the caller's thread when the pool has no threads or is stopping.
  void Submit(std::function<void()> task);

 private:
  void Loop();

  const int threads_wanted_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace strata::kvcache
