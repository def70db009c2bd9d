#include "storage/archive_store.h"

#include <zstd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "common/checksum.h"
#include "common/log.h"
#include "io/dirs.h"
#include "storage/archive_format.h"

namespace strata::storage {

using archive::Codec;
using archive::Type;

namespace {

struct FrameLoc {
  uint64_t raw_off;   // where the frame's bytes start in the data
  uint64_t file_off;  // where its stored bytes start in the segment
  uint32_t stored_len;
  uint32_t raw_len;
  Codec codec;
};

struct Entry {
  uint64_t segment = 0;
  DataHeader header;
  uint64_t data_size = 0;
  std::vector<FrameLoc> frames;
  uint64_t trailer_off = 0;
  uint32_t trailer_len = 0;
  uint64_t stored_bytes = 0;
};

struct Tomb {
  std::string id;
  uint64_t stamp;
  uint64_t segment;               // where the tombstone is
  std::vector<uint64_t> targets;  // segments that held what it removes
};

struct SegmentInfo {
  bool open = false;  // appended to by this process (never deleted while open)
  size_t live = 0;
  std::vector<Tomb> tombs;
};

struct OpenSegment {
  uint64_t no;
  std::unique_ptr<io::WritableFile> file;
  uint64_t size = 0;
  bool broken = false;  // an append failed: its tail is unknown; sealed

  Status Append(std::string_view bytes) {
    Status st = file->Append(bytes);
    if (!st.ok()) {
      broken = true;
      return st;
    }
    size += bytes.size();
    return Status::OK();
  }
};

std::string SegmentName(uint64_t no) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64 ".seg", no);
  return buf;
}

bool ParseSegmentName(const std::string& name, uint64_t* no) {
  if (name.size() != 20 || !name.ends_with(".seg")) return false;
  uint64_t v = 0;
  for (int i = 0; i < 16; ++i) {
    char c = name[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *no = v;
  return true;
}

// Frames are compressed with a context per thread (zstd contexts are not
// thread-safe; making one per frame costs more than the frame).
std::string CompressFrame(std::string_view raw, int level) {
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(),
                                                                       ZSTD_freeCCtx);
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  size_t n = ZSTD_compressCCtx(cctx.get(), out.data(), out.size(), raw.data(), raw.size(), level);
  if (ZSTD_isError(n)) return {};
  out.resize(n);
  return out;
}

Status DecompressFrame(std::string_view stored, char* out, size_t raw_len) {
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(),
                                                                       ZSTD_freeDCtx);
  size_t n = ZSTD_decompressDCtx(dctx.get(), out, raw_len, stored.data(), stored.size());
  if (ZSTD_isError(n) || n != raw_len) return Corruption("an archive frame does not decompress");
  return Status::OK();
}

}  // namespace

class ArchiveStore : public DataStore {
 public:
  ArchiveStore(io::FileSystem* fs, ArchiveOptions o) : fs_(fs), o_(std::move(o)) {}
  ~ArchiveStore() override {
    for (auto& s : idle_) s->file->Close().IgnoreError();
  }

  Status Init();

  Result<std::unique_ptr<DataWriter>> Create(const std::string& id, const DataHeader& header) override;
  Result<std::unique_ptr<DataReader>> Open(const std::string& id, uint64_t size) override;
  Status Remove(const std::string& id) override;
  size_t inline_max_bytes() const override { return 0; }
  Result<std::vector<std::string>> ListIds() override {
    std::lock_guard lock(mu_);
    std::vector<std::string> ids;
    ids.reserve(index_.size());
    for (const auto& [id, e] : index_) ids.push_back(id);
    return ids;
  }
  Result<std::pair<DataHeader, std::string>> ReadHeaderAndTrailer(const std::string& id) override;

  ArchiveStats Stats() {
    std::lock_guard lock(mu_);
    ArchiveStats s;
    s.segments = segments_.size();
    for (const auto& [no, info] : segments_) {
      auto size = fs_->FileSize(Path(no));
      if (size.ok()) s.segment_bytes += *size;
    }
    s.live_entries = index_.size();
    for (const auto& [id, e] : index_) {
      s.raw_bytes += e->data_size;
      s.stored_bytes += e->stored_bytes;
    }
    return s;
  }

  // ---- for the writer
  Result<std::unique_ptr<OpenSegment>> TakeSegment();
  void GiveBack(std::unique_ptr<OpenSegment> s);
  void Publish(const std::string& id, std::shared_ptr<const Entry> e);
  const ArchiveOptions& options() const { return o_; }

 private:
  std::string Dir() const { return o_.root + "/segments"; }
  std::string Path(uint64_t no) const { return Dir() + "/" + SegmentName(no); }
  Status Scan(uint64_t no, std::vector<std::pair<std::string, Entry>>* entries,
              std::vector<Tomb>* tombs);
  void CollectSegmentsLocked();
  void Unref(const Entry& e) {
    auto it = segments_.find(e.segment);
    if (it != segments_.end() && it->second.live > 0) --it->second.live;
  }

  io::FileSystem* fs_;
  ArchiveOptions o_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Entry>> index_;
  std::map<uint64_t, SegmentInfo> segments_;
  std::vector<std::unique_ptr<OpenSegment>> idle_;
  uint64_t next_segment_ = 1;
};

namespace {

class ArchiveWriter : public DataWriter {
 public:
  ArchiveWriter(ArchiveStore* store, std::unique_ptr<OpenSegment> seg, std::string id,
                DataHeader header)
      : store_(store), seg_(std::move(seg)), id_(std::move(id)) {
    entry_.segment = seg_->no;
    entry_.header = std::move(header);
  }
  ~ArchiveWriter() override {
    if (seg_) Abort();
  }

  Status Start() { return seg_->Append(archive::EncodeRecord(Type::kEntry,
                                                            archive::EntryPayload(id_, entry_.header))); }

  Status Append(std::string_view data) override {
    if (!seg_) return Internal("append after finish");
    while (!data.empty()) {
      size_t take = std::min(data.size(), archive::kFrameBytes - frame_.size());
      frame_.append(data.substr(0, take));
      data.remove_prefix(take);
      if (frame_.size() == archive::kFrameBytes) RETURN_IF_ERROR(Flush());
    }
    return Status::OK();
  }

  Status Finish(std::string_view trailer) override {
    if (!seg_) return Internal("finish twice");
    Status st = frame_.empty() ? Status::OK() : Flush();
    entry_.trailer_off = seg_->size + archive::kRecordHeadBytes + 8;
    entry_.trailer_len = static_cast<uint32_t>(trailer.size());
    if (st.ok()) st = seg_->Append(archive::EncodeRecord(Type::kEnd,
                                                         archive::EndPayload(entry_.data_size, trailer)));
    if (st.ok()) st = seg_->file->Sync();
    if (!st.ok()) {
      seg_->broken = true;
      store_->GiveBack(std::move(seg_));
      return st.WithContext("archive segment");
    }
    store_->Publish(id_, std::make_shared<const Entry>(std::move(entry_)));
    store_->GiveBack(std::move(seg_));
    return Status::OK();
  }

  void Abort() override {
    if (!seg_) return;
    if (!seg_->broken) seg_->Append(archive::EncodeRecord(Type::kAbort, "")).IgnoreError();
    store_->GiveBack(std::move(seg_));
  }

 private:
  Status Flush() {
    const uint32_t raw_len = static_cast<uint32_t>(frame_.size());
    std::string packed = CompressFrame(frame_, store_->options().zstd_level);
    // Compressed only where it pays: at least an eighth smaller.
    const bool zstd = !packed.empty() && packed.size() < frame_.size() - frame_.size() / 8;
    const Codec codec = zstd ? Codec::kZstd : Codec::kRaw;
    std::string_view stored = zstd ? std::string_view(packed) : std::string_view(frame_);
    std::string payload = archive::FramePrefix(codec, raw_len);
    payload += stored;
    FrameLoc loc{entry_.data_size, seg_->size + archive::kRecordHeadBytes + archive::kFramePrefixBytes,
                 static_cast<uint32_t>(stored.size()), raw_len, codec};
    RETURN_IF_ERROR(seg_->Append(archive::EncodeRecord(Type::kFrame, payload)));
    entry_.frames.push_back(loc);
    entry_.data_size += raw_len;
    entry_.stored_bytes += stored.size();
    frame_.clear();
    return Status::OK();
  }

  ArchiveStore* store_;
  std::unique_ptr<OpenSegment> seg_;
  std::string id_;
  Entry entry_;
  std::string frame_;
};

class ArchiveReader : public DataReader {
 public:
  ArchiveReader(std::shared_ptr<const Entry> e, std::unique_ptr<io::ReadableFile> f)
      : e_(std::move(e)), file_(std::move(f)) {}

  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    size_t done = 0;
    while (done < n && offset + done < e_->data_size) {
      const uint64_t at = offset + done;
      // The frame holding `at`: the last whose start is at or before it.
      auto it = std::upper_bound(e_->frames.begin(), e_->frames.end(), at,
                                 [](uint64_t v, const FrameLoc& f) { return v < f.raw_off; });
      if (it == e_->frames.begin()) return Corruption("archive entry frames do not cover its data");
      const FrameLoc& f = *std::prev(it);
      ASSIGN_OR_RETURN(const std::string* raw, Frame(f));
      const size_t in = static_cast<size_t>(at - f.raw_off);
      const size_t take = std::min(n - done, raw->size() - in);
      std::memcpy(buf + done, raw->data() + in, take);
      done += take;
    }
    return done;
  }
  uint64_t size() const override { return e_->data_size; }

 private:
  // The frame's raw bytes, checked (CRC of its record) and decompressed; the
  // last one is kept, since sequential reads come in pieces smaller than it.
  Result<const std::string*> Frame(const FrameLoc& f) {
    if (cached_ == f.raw_off && !raw_.empty()) return &raw_;
    const uint64_t rec = f.file_off - archive::kFramePrefixBytes - archive::kRecordHeadBytes;
    const size_t total = archive::kRecordHeadBytes + archive::kFramePrefixBytes + f.stored_len +
                         archive::kRecordTailBytes;
    std::string bytes(total, '\0');
    size_t got = 0;
    while (got < total) {
      ASSIGN_OR_RETURN(size_t n, file_->ReadAt(rec + got, bytes.data() + got, total - got));
      if (n == 0) return Corruption("an archive segment is shorter than its index says");
      got += n;
    }
    auto r = archive::DecodeRecord(bytes);
    Codec codec;
    uint32_t raw_len;
    if (!r || r->type != Type::kFrame || !archive::ParseFramePrefix(r->payload, &codec, &raw_len) ||
        raw_len != f.raw_len) {
      return Corruption("an archive frame fails its checksum");
    }
    std::string_view stored = r->payload.substr(archive::kFramePrefixBytes);
    raw_.resize(raw_len);
    if (codec == Codec::kZstd) {
      Status st = DecompressFrame(stored, raw_.data(), raw_len);
      if (!st.ok()) {
        raw_.clear();
        return st;
      }
    } else {
      std::memcpy(raw_.data(), stored.data(), raw_len);
    }
    cached_ = f.raw_off;
    return &raw_;
  }

  std::shared_ptr<const Entry> e_;
  std::unique_ptr<io::ReadableFile> file_;
  std::string raw_;
  uint64_t cached_ = 0;
};

}  // namespace

Status ArchiveStore::Init() {
  RETURN_IF_ERROR(io::CreateDirsDurably(fs_, Dir()));
  ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(Dir()));
  std::vector<uint64_t> nos;
  for (const std::string& n : names) {
    uint64_t no;
    if (ParseSegmentName(n, &no)) nos.push_back(no);
  }
  std::sort(nos.begin(), nos.end());
  std::vector<std::pair<std::string, Entry>> entries;
  std::vector<Tomb> tombs;
  for (uint64_t no : nos) {
    segments_[no];
    RETURN_IF_ERROR(Scan(no, &entries, &tombs));
    next_segment_ = no + 1;
  }
  // The newest generation of each id; then what the tombstones removed.
  std::map<std::string, std::vector<const Entry*>> all;
  for (auto& [id, e] : entries) all[id].push_back(&e);
  for (auto& [id, list] : all) {
    const Entry* best = nullptr;
    for (const Entry* e : list) {
      if (!best || e->header.version_stamp >= best->header.version_stamp) best = e;
    }
    index_[id] = std::make_shared<const Entry>(*best);
  }
  for (Tomb& t : tombs) {
    for (const Entry* e : all[t.id]) {
      if (e->header.version_stamp <= t.stamp) t.targets.push_back(e->segment);
    }
    auto it = index_.find(t.id);
    if (it != index_.end() && it->second->header.version_stamp <= t.stamp) index_.erase(it);
  }
  for (Tomb& t : tombs) segments_[t.segment].tombs.push_back(std::move(t));
  for (const auto& [id, e] : index_) ++segments_[e->segment].live;
  CollectSegmentsLocked();
  return Status::OK();
}

Status ArchiveStore::Scan(uint64_t no, std::vector<std::pair<std::string, Entry>>* entries,
                          std::vector<Tomb>* tombs) {
  ASSIGN_OR_RETURN(auto file, fs_->NewReadableFile(Path(no)));
  const uint64_t size = file->Size();
  uint64_t at = 0;
  std::optional<std::pair<std::string, Entry>> pending;
  auto read = [&](uint64_t off, size_t n, std::string* out) -> Status {
    out->resize(n);
    size_t got = 0;
    while (got < n) {
      ASSIGN_OR_RETURN(size_t r, file->ReadAt(off + got, out->data() + got, n - got));
      if (r == 0) return Corruption("short");
      got += r;
    }
    return Status::OK();
  };
  std::string head, bytes;
  while (at + archive::kRecordHeadBytes <= size) {
    RETURN_IF_ERROR(read(at, archive::kRecordHeadBytes, &head));
    auto len = archive::PayloadLength(head);
    const uint64_t total = archive::kRecordHeadBytes + (len ? *len : 0) + archive::kRecordTailBytes;
    if (!len || at + total > size) break;  // a torn tail (or not a record): the rest is ignored
    const Type type = static_cast<Type>(head[0]);
    if (type == Type::kFrame) {
      // Frames are skipped, not read (a start-up does not read the archive);
      // their checksums are checked when they are read.
      std::string prefix;
      RETURN_IF_ERROR(read(at + archive::kRecordHeadBytes, archive::kFramePrefixBytes, &prefix));
      if (*len < archive::kFramePrefixBytes) break;
      const Codec codec = static_cast<Codec>(prefix[0]);
      uint32_t raw_len = 0;
      for (int i = 0; i < 4; ++i) raw_len |= uint32_t(static_cast<unsigned char>(prefix[1 + i])) << (8 * i);
      const bool known = codec == Codec::kRaw || codec == Codec::kZstd;
      if (!known || raw_len == 0 || raw_len > archive::kFrameBytes ||
          (codec == Codec::kRaw && *len - archive::kFramePrefixBytes != raw_len)) {
        break;
      }
      if (pending) {
        Entry& e = pending->second;
        e.frames.push_back({e.data_size, at + archive::kRecordHeadBytes + archive::kFramePrefixBytes,
                            static_cast<uint32_t>(*len - archive::kFramePrefixBytes), raw_len, codec});
        e.data_size += raw_len;
        e.stored_bytes += *len - archive::kFramePrefixBytes;
      }
      at += total;
      continue;
    }
    RETURN_IF_ERROR(read(at, total, &bytes));
    auto rec = archive::DecodeRecord(bytes);
    if (!rec) break;
    switch (type) {
      case Type::kEntry: {
        pending.emplace();
        pending->second.segment = no;
        if (!archive::ParseEntry(rec->payload, &pending->first, &pending->second.header)) {
          pending.reset();
        }
        break;
      }
      case Type::kEnd: {
        uint64_t data_size;
        std::string_view trailer;
        if (pending && archive::ParseEnd(rec->payload, &data_size, &trailer) &&
            data_size == pending->second.data_size) {
          pending->second.trailer_off = at + archive::kRecordHeadBytes + 8;
          pending->second.trailer_len = static_cast<uint32_t>(trailer.size());
          entries->push_back(std::move(*pending));
        }
        pending.reset();
        break;
      }
      case Type::kAbort:
        pending.reset();
        break;
      case Type::kTombstone: {
        Tomb t;
        t.segment = no;
        if (archive::ParseTombstone(rec->payload, &t.id, &t.stamp)) tombs->push_back(std::move(t));
        break;
      }
      case Type::kFrame:
        break;
    }
    at += total;
  }
  if (at < size) {
    STRATA_LOG("archive pool %s: segment %s has %" PRIu64 " bytes past its last whole record "
               "(a write cut short); ignored", o_.root.c_str(), SegmentName(no).c_str(), size - at);
  }
  return Status::OK();
}

// A sealed segment with no live entry can go once none of its tombstones
// still covers an entry in another segment (that entry would come back).
void ArchiveStore::CollectSegmentsLocked() {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = segments_.begin(); it != segments_.end();) {
      const SegmentInfo& info = it->second;
      bool needed = info.open || info.live > 0;
      for (const Tomb& t : info.tombs) {
        for (uint64_t target : t.targets) {
          if (target != it->first && segments_.count(target)) needed = true;
        }
      }
      if (needed) {
        ++it;
        continue;
      }
      Status st = fs_->RemoveFile(Path(it->first));
      if (!st.ok() && st.code() != Code::kNotFound) {
        STRATA_LOG("archive pool %s: cannot remove %s: %s", o_.root.c_str(),
                   SegmentName(it->first).c_str(), st.ToString().c_str());
        ++it;
        continue;
      }
      it = segments_.erase(it);
      changed = true;
    }
  }
}

Result<std::unique_ptr<OpenSegment>> ArchiveStore::TakeSegment() {
  uint64_t no;
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto s = std::move(idle_.back());
      idle_.pop_back();
      return s;
    }
    no = next_segment_++;
    segments_[no].open = true;
  }
  auto s = std::make_unique<OpenSegment>();
  s->no = no;
  auto file = fs_->NewWritableFile(Path(no));
  Status st = file.ok() ? fs_->SyncDir(Dir()) : file.status();
  if (!st.ok()) {
    std::lock_guard lock(mu_);
    segments_.erase(no);
    if (file.ok()) fs_->RemoveFile(Path(no)).IgnoreError();
    return st.WithContext("archive segment " + Path(no));
  }
  s->file = std::move(file).value();
  return s;
}

void ArchiveStore::GiveBack(std::unique_ptr<OpenSegment> s) {
  std::lock_guard lock(mu_);
  if (!s->broken && s->size < o_.segment_bytes) {
    idle_.push_back(std::move(s));
    return;
  }
  // Sealed: full, or its tail unknown after a failed append.
  s->file->Close().IgnoreError();
  segments_[s->no].open = false;
  CollectSegmentsLocked();
}

void ArchiveStore::Publish(const std::string& id, std::shared_ptr<const Entry> e) {
  std::lock_guard lock(mu_);
  auto& slot = index_[id];
  if (slot) Unref(*slot);  // a rewrite of the id: the older generation is dead
  ++segments_[e->segment].live;
  slot = std::move(e);
}

Result<std::unique_ptr<DataWriter>> ArchiveStore::Create(const std::string& id,
                                                         const DataHeader& header) {
  ASSIGN_OR_RETURN(auto seg, TakeSegment());
  auto w = std::make_unique<ArchiveWriter>(this, std::move(seg), id, header);
  RETURN_IF_ERROR(w->Start());
  return std::unique_ptr<DataWriter>(std::move(w));
}

Result<std::unique_ptr<DataReader>> ArchiveStore::Open(const std::string& id, uint64_t size) {
  std::shared_ptr<const Entry> e;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(id);
    if (it == index_.end()) return NotFound("archive: no data " + id);
    e = it->second;
  }
  if (e->data_size != size) {
    return Corruption("archive: data " + id + " holds " + std::to_string(e->data_size) +
                      " bytes, its record says " + std::to_string(size));
  }
  ASSIGN_OR_RETURN(auto file, fs_->NewReadableFile(Path(e->segment)));
  return std::unique_ptr<DataReader>(new ArchiveReader(std::move(e), std::move(file)));
}

Status ArchiveStore::Remove(const std::string& id) {
  std::shared_ptr<const Entry> e;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(id);
    if (it == index_.end()) return NotFound("archive: no data " + id);
    e = it->second;
  }
  ASSIGN_OR_RETURN(auto seg, TakeSegment());
  const uint64_t in = seg->no;
  Status st = seg->Append(archive::EncodeRecord(
      Type::kTombstone, archive::TombstonePayload(id, e->header.version_stamp)));
  {
    std::lock_guard lock(mu_);
    if (st.ok()) {
      auto it = index_.find(id);
      if (it != index_.end() && it->second == e) {
        index_.erase(it);
        Unref(*e);
      }
      segments_[in].tombs.push_back({id, e->header.version_stamp, in, {e->segment}});
    }
  }
  GiveBack(std::move(seg));
  {
    std::lock_guard lock(mu_);
    CollectSegmentsLocked();
  }
  return st;
}

Result<std::pair<DataHeader, std::string>> ArchiveStore::ReadHeaderAndTrailer(const std::string& id) {
  std::shared_ptr<const Entry> e;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(id);
    if (it == index_.end()) return NotFound("archive: no data " + id);
    e = it->second;
  }
  ASSIGN_OR_RETURN(auto file, fs_->NewReadableFile(Path(e->segment)));
  std::string trailer(e->trailer_len, '\0');
  size_t got = 0;
  while (got < trailer.size()) {
    ASSIGN_OR_RETURN(size_t n, file->ReadAt(e->trailer_off + got, trailer.data() + got,
                                            trailer.size() - got));
    if (n == 0) return Corruption("archive: the trailer of " + id + " is cut short");
    got += n;
  }
  return std::make_pair(e->header, std::move(trailer));
}

Result<std::unique_ptr<DataStore>> OpenArchiveDataStore(io::FileSystem* fs, ArchiveOptions options) {
  if (options.zstd_level < 1 || options.zstd_level > 19) {
    return InvalidArgument("zstd level must be 1-19");
  }
  if (options.segment_bytes < archive::kFrameBytes) {
    return InvalidArgument("an archive segment must hold at least one frame (1 MiB)");
  }
  auto store = std::make_unique<ArchiveStore>(fs, std::move(options));
  RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<DataStore>(std::move(store));
}

std::optional<ArchiveStats> ArchiveStatsOf(DataStore* store) {
  auto* a = dynamic_cast<ArchiveStore*>(store);
  if (!a) return std::nullopt;
  return a->Stats();
}

}  // namespace strata::storage
