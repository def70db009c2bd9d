// Copies the metadata store onto data drives on a schedule (RocksDB
// checkpoints), so that losing the metadata directory loses at most the
// changes since the last copy — and rebuild-index recovers even those.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/file_system.h"
#include "meta/kv_store.h"

namespace strata::server {

class Checkpointer {
 public:
  // Keeps DRIVE/meta-checkpoint on each of `drives` (at most 3 are used).
  Checkpointer(meta::KvStore* kv, io::FileSystem* fs, std::vector<std::string> drives,
               int interval_s);
  ~Checkpointer();
  void Start();
  void Stop();
  Status CheckpointNow();

 private:
  void Run();
  meta::KvStore* kv_;
  io::FileSystem* fs_;
  std::vector<std::string> drives_;
  int interval_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace strata::server
