#include "server/checkpointer.h"

#include <filesystem>

#include "common/log.h"

namespace strata::server {

Checkpointer::Checkpointer(meta::KvStore* kv, io::FileSystem* fs, std::vector<std::string> drives,
                           int interval_s)
    : kv_(kv), fs_(fs), drives_(std::move(drives)), interval_s_(interval_s) {
  if (drives_.size() > 3) drives_.resize(3);
}

Checkpointer::~Checkpointer() { Stop(); }

void Checkpointer::Start() {
  if (interval_s_ > 0 && !drives_.empty()) thread_ = std::thread([this] { Run(); });
}

void Checkpointer::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// A checkpoint is made beside the old one and swapped in by rename, so a
// crash leaves either the old or the new copy complete.
Status Checkpointer::CheckpointNow() {
  namespace fsys = std::filesystem;
  Status result;
  for (const std::string& drive : drives_) {
    std::string fresh = drive + "/meta-checkpoint.new";
    std::string current = drive + "/meta-checkpoint";
    std::string old = drive + "/meta-checkpoint.old";
    std::error_code ec;
    fsys::remove_all(fresh, ec);
    fsys::remove_all(old, ec);
    Status st = kv_->Checkpoint(fresh);
    if (st.ok()) {
      if (fsys::exists(current)) fsys::rename(current, old, ec);
      fsys::rename(fresh, current, ec);
      if (ec) st = IOError("rename checkpoint on " + drive + ": " + ec.message());
      fsys::remove_all(old, ec);
      fs_->SyncDir(drive).IgnoreError();
    }
    if (!st.ok()) {
      STRATA_LOG("metadata checkpoint on %s failed: %s", drive.c_str(), st.ToString().c_str());
      result = st;
    }
  }
  return result;
}

void Checkpointer::Run() {
  while (true) {
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, std::chrono::seconds(interval_s_), [this] { return stop_; })) return;
    lock.unlock();
    CheckpointNow().IgnoreError();
  }
}

}  // namespace strata::server
