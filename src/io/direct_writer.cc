#include "io/direct_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "common/bulk_executor.h"

namespace strata::io {
namespace {

// Aligned chunk buffers, kept for the next file: a buffer used before has
// its pages faulted in already. At most kPoolMax are kept idle (16 MiB).
constexpr size_t kPoolMax = 8;

struct BufferPool {
  std::mutex mu;
  std::vector<char*> idle;
};
BufferPool& Pool() {
  static auto* pool = new BufferPool;  // never destroyed: files may close during exit
  return *pool;
}

char* TakeBuffer() {
  {
    BufferPool& p = Pool();
    std::lock_guard lock(p.mu);
    if (!p.idle.empty()) {
      char* b = p.idle.back();
      p.idle.pop_back();
      return b;
    }
  }
  void* b = nullptr;
  if (::posix_memalign(&b, DirectWriter::kAlign, DirectWriter::kChunkBytes) != 0) return nullptr;
  return static_cast<char*>(b);
}

void GiveBuffer(char* b) {
  BufferPool& p = Pool();
  {
    std::lock_guard lock(p.mu);
    if (p.idle.size() < kPoolMax) {
      p.idle.push_back(b);
      return;
    }
  }
  std::free(b);
}

}  // namespace

struct DirectWriter::Chunk {
  char* buf = nullptr;
  size_t fill = 0;
  uint64_t offset = 0;
  bool busy = false;  // guarded by mu_: submitted and not yet written
};

DirectWriter::DirectWriter(uint64_t start, WriteFn fn) : fn_(std::move(fn)), end_(start) {}

DirectWriter::~DirectWriter() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return in_flight_ == 0; });
  for (Chunk*& c : chunks_) {
    if (c == nullptr) continue;
    GiveBuffer(c->buf);
    delete c;
    c = nullptr;
  }
}

bool DirectWriter::direct() const {
  std::lock_guard lock(mu_);
  return direct_;
}

DirectWriter::Chunk* DirectWriter::FreeChunkLocked(std::unique_lock<std::mutex>& lock) {
  Chunk** slot = nullptr;
  cv_.wait(lock, [&] {
    for (Chunk*& c : chunks_) {
      if (c == nullptr || !c->busy) {
        slot = &c;
        return true;
      }
    }
    return false;
  });
  if (*slot == nullptr) {
    char* buf = TakeBuffer();
    if (buf == nullptr) return nullptr;
    auto* c = new (std::nothrow) Chunk;
    if (c == nullptr) {
      GiveBuffer(buf);
      return nullptr;
    }
    c->buf = buf;
    *slot = c;
  }
  return *slot;
}

int DirectWriter::Append(std::string_view data) {
  if (finished_) return EBADF;
  {
    std::lock_guard lock(mu_);
    if (error_ != 0) return error_;
  }
  while (!data.empty()) {
    if (filling_ == nullptr) {
      std::unique_lock lock(mu_);
      filling_ = FreeChunkLocked(lock);
      if (filling_ == nullptr) return error_ = ENOMEM;
      if (error_ != 0) {  // a write failed while we waited
        filling_ = nullptr;
        return error_;
      }
      filling_->fill = 0;
      filling_->offset = end_;  // every chunk before was full: aligned
    }
    const size_t take = std::min(kChunkBytes - filling_->fill, data.size());
    std::memcpy(filling_->buf + filling_->fill, data.data(), take);
    filling_->fill += take;
    end_ += take;
    data.remove_prefix(take);
    if (filling_->fill == kChunkBytes) {
      Submit(filling_);
      filling_ = nullptr;
    }
  }
  std::lock_guard lock(mu_);
  return error_;
}

void DirectWriter::Submit(Chunk* c) {
  {
    std::lock_guard lock(mu_);
    c->busy = true;
    ++in_flight_;
  }
  if (BulkWriteThreadsRunning() && !OnBulkThread()) {
    try {
      RunBulkWrite([this, c] { Write(c); });
      return;
    } catch (const std::exception&) {  // the task could not be queued: write it here
    }
  }
  Write(c);
}

void DirectWriter::Write(Chunk* c) {
  bool direct;
  {
    std::lock_guard lock(mu_);
    direct = direct_;
  }
  int err = fn_(direct, c->buf, c->fill, c->offset);
  const bool fell_back = direct && err == EINVAL;
  if (fell_back) err = fn_(false, c->buf, c->fill, c->offset);
  std::lock_guard lock(mu_);  // notified under the lock: the destructor cannot run past it
  if (fell_back) direct_ = false;
  if (err != 0 && error_ == 0) error_ = err;
  c->busy = false;
  --in_flight_;
  cv_.notify_all();
}

int DirectWriter::Finish() {
  if (finished_) {
    std::lock_guard lock(mu_);
    return error_ != 0 ? error_ : EBADF;
  }
  finished_ = true;
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return in_flight_ == 0; });
  Chunk* c = filling_;
  filling_ = nullptr;
  if (error_ != 0 || c == nullptr || c->fill == 0) return error_;
  bool direct = direct_;
  lock.unlock();
  // The aligned head directly, the tail through the page cache (O_DIRECT
  // cannot write a partial block).
  const size_t head = c->fill & ~(kAlign - 1);
  int err = 0;
  if (head > 0) {
    err = fn_(direct, c->buf, head, c->offset);
    if (direct && err == EINVAL) {
      err = fn_(false, c->buf, head, c->offset);
      direct = false;
    }
  }
  if (err == 0 && c->fill > head) err = fn_(false, c->buf + head, c->fill - head, c->offset + head);
  lock.lock();
  direct_ = direct;
  if (err != 0 && error_ == 0) error_ = err;
  return error_;
}

}  // namespace strata::io
