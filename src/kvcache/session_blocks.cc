// The block operations of a Session: GET, PUT, DELETE, PIN/UNPIN
// (session.cc: I/O, the frame loop, authentication, namespaces).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>

#include "common/checksum.h"
#include "common/encoding.h"
#include "common/log.h"
#include "energy/meter.h"
#include "kvcache/commit_pool.h"
#include "kvcache/session.h"
#include "kms/key_service.h"

namespace strata::kvcache {

using proto::FrameHeader;
using proto::Op;
using proto::WireStatus;

namespace {

WireStatus StorageStatus(const Status& st) {
  switch (st.code()) {
    case Code::kOk:
      return WireStatus::kOk;
    case Code::kNotFound:
      return WireStatus::kNotFound;
    case Code::kAlreadyExists:
      return WireStatus::kExists;
    case Code::kResourceExhausted:
      return WireStatus::kTooLarge;
    case Code::kInternal:
      return WireStatus::kInternal;
    default:
      return WireStatus::kUnavailable;
  }
}

// What a key-service failure means for a block: the key disabled or gone
// (DENIED: retrying will not help), anything else UNAVAILABLE.
WireStatus KeyStatus(const Status& st) {
  if (st.detail() == Detail::kKmsDisabled || st.detail() == Detail::kKmsKey ||
      st.detail() == Detail::kKmsCiphertext) {
    return WireStatus::kDenied;
  }
  return WireStatus::kUnavailable;
}

// An encrypted namespace (its bucket has default encryption): the new
// block's data key, wrapped as the bucket's default says, into `options`.
// kOk also when the namespace is not encrypted.
WireStatus SealWith(const ServerContext& ctx, const std::string& bucket, const std::string& key,
                    object::WriteOptions* options) {
  auto found = ctx.engine->BucketOf(bucket);  // cached in memory
  if (!found.ok()) {
    STRATA_LOG("kv: put %s: %s", bucket.c_str(), found.status().ToString().c_str());
    return StorageStatus(found.status());
  }
  const object::BucketRecord* b = found->get();
  if (b->default_sse == object::SseMode::kNone) return WireStatus::kOk;
  if (!ctx.options.kms) {
    STRATA_LOG("kv: put %s: the namespace is encrypted and the server has no key service",
               bucket.c_str());
    return WireStatus::kUnavailable;
  }
  object::Encryption& sse = options->sse;
  sse.mode = b->default_sse;
  Result<kms::DataKey> dk = Status(Code::kInternal, "unset");
  if (sse.mode == object::SseMode::kS3) {
    dk = ctx.options.kms->GenerateDataKey(kms::kSseS3Alias, "");
  } else {
    sse.context = kms::KeyService::DefaultContext(bucket, key);
    sse.bucket_key = b->default_bucket_key;
    dk = ctx.options.kms->GenerateDataKey(b->default_kms_key, sse.context);
  }
  if (!dk.ok()) {
    STRATA_LOG("kv: put %s: %s", bucket.c_str(), dk.status().ToString().c_str());
    return KeyStatus(dk.status());
  }
  sse.wrapped_key = std::move(dk->wrapped);
  if (sse.mode == object::SseMode::kKms) sse.key_arn = std::move(dk->key_arn);
  options->data_key = std::move(dk->plaintext);
  return WireStatus::kOk;
}

// Opens an encrypted block for reading (its data key from the key service);
// kOk also for a block stored in the clear.
WireStatus Unseal(const ServerContext& ctx, object::ObjectReader* reader) {
  const object::Encryption& sse = reader->record().sse;
  if (!sse.on()) return WireStatus::kOk;
  if (sse.mode == object::SseMode::kCustomer || !ctx.options.kms) {
    return WireStatus::kUnavailable;  // a block written through S3 with SSE-C: no key here
  }
  auto key = ctx.options.kms->Decrypt(sse.wrapped_key, sse.mode == object::SseMode::kKms ? sse.context : "");
  if (!key.ok()) {
    STRATA_LOG("kv: get %s: %s", reader->record().file_id.c_str(), key.status().ToString().c_str());
    return KeyStatus(key.status());
  }
  Status st = reader->Unlock(*key);
  return st.ok() ? WireStatus::kOk : KeyStatus(st);
}


}  // namespace

// ---- GET -----------------------------------------------------------------------

// The reply's head (every item's status, length, CRC and metadata size) goes
// out before any bytes, so the blocks named are acquired in the index first:
// they cannot be evicted until the reply is complete. The CRC comes from the
// index; only blocks stored with metadata need their record read before the
// head. The objects are then opened one at a time (one open file per
// connection, whatever the batch size).
//
// Copies per block: a whole-block read of a file-backed block is sent with
// sendfile (page cache -> socket; none in user space); the client checks the
// block against its CRC32C, so skipping the store's own per-64 KiB checks
// on this path loses nothing (a flipped bit is a miss, never a wrong token).
// A range, or a block without a CRC, goes through the checked reader: pread
// -> chunk_ -> send. Inline objects are sent from the record the engine read.
Status Session::HandleGet(const FrameHeader& h, std::string_view payload) {
  proto::GetRequest req;
  bool decoded = proto::DecodeGetRequest(payload, &req);
  Namespace* ns = Resolve(h, decoded, req.ns, Need::kRead);
  if (ns == nullptr) return Status::OK();
  const size_t n = req.items.size();
  std::vector<proto::GetResult> results(n, {WireStatus::kNotFound, 0});
  std::vector<bool> needs_meta(n, false);
  std::unordered_map<std::string_view, BlockIndex::BlockInfo> acquired;
  uint64_t payload_len = n * proto::kGetResultBytes;
  uint64_t budget = payload_len;  // the reply's size with every metadata at its maximum
  uint64_t hits = 0, misses = 0, requested = 0;
  {
    std::lock_guard<std::mutex> lock(ns->mu);
    const uint64_t now = ctx_->NowNs();
    for (size_t i = 0; i < n; ++i) {
      const proto::GetItem& it = req.items[i];
      auto known = acquired.find(it.key);
      if (known == acquired.end()) {
        if (auto info = ns->index.Acquire(it.key, now)) known = acquired.emplace(it.key, *info).first;
      }
      if (known == acquired.end()) {
        ++misses;
        continue;
      }
      const BlockIndex::BlockInfo& info = known->second;
      const uint64_t size = info.length;
      uint64_t len = it.length == 0 ? (it.offset <= size ? size - it.offset : 0) : it.length;
      if (it.offset > size || len > size - it.offset) {
        results[i].status = WireStatus::kInvalid;  // a range outside the block
      } else if (budget + len + (info.has_meta ? proto::kMaxBlockMetaBytes : 0) >
                 proto::kMaxPayloadBytes) {
        results[i].status = WireStatus::kTooLarge;  // the reply would exceed one frame
      } else {
        payload_len += len;
        budget += len + (info.has_meta ? proto::kMaxBlockMetaBytes : 0);
        results[i] = {WireStatus::kOk, len};
        if (it.offset == 0 && len == size && info.crc32c) {
          results[i].flags = proto::kGetCrcValid;
          results[i].crc32c = *info.crc32c;
        }
        needs_meta[i] = info.has_meta;
        ++hits;
        requested += len;
      }
    }
  }
  std::string metas;
  Status st = CheckBlockKeys(ns, req, &results, &needs_meta, &payload_len);
  if (st.ok()) st = ReadBlockMetas(ns, req, needs_meta, &results, &metas);
  for (const proto::GetResult& r : results) payload_len += r.meta_len;
  if (st.ok()) {
    ns->hits.fetch_add(hits, std::memory_order_relaxed);
    ns->misses.fetch_add(misses, std::memory_order_relaxed);
    ns->bytes_requested.fetch_add(requested, std::memory_order_relaxed);
    st = SendGetReply(h, ns, req, results, metas, payload_len);
  }
  std::lock_guard<std::mutex> lock(ns->mu);
  for (const auto& [key, info] : acquired) ns->index.Release(key);
  return st;
}

// Reads the per-block metadata of the items that have some (their records).
Status Session::ReadBlockMetas(Namespace* ns, const proto::GetRequest& req,
                               const std::vector<bool>& needs_meta,
                               std::vector<proto::GetResult>* results, std::string* metas) {
  for (size_t i = 0; i < results->size(); ++i) {
    if (!needs_meta[i]) continue;
    auto rec = ctx_->engine->HeadObject(ns->bucket(), ns->ObjectKey(req.items[i].key));
    if (!rec.ok()) return rec.status().WithContext("kv get: block deleted while read");
    for (const auto& [k, v] : rec->headers.user_metadata) {
      if (k != kBlockMetadata) continue;
      auto meta = Base64Decode(v);
      if (!meta || meta->size() > proto::kMaxBlockMetaBytes) {
        return Corruption("kv get: bad metadata on " + ns->ObjectKey(req.items[i].key));
      }
      (*results)[i].meta_len = static_cast<uint16_t>(meta->size());
      metas->append(*meta);
    }
  }
  return Status::OK();
}

// In an encrypted namespace (its bucket has default encryption), every found
// block's key is checked before the reply starts, so that a block whose key
// cannot be had (disabled, the key service down) gets its own status instead
// of ending the connection mid-reply. The data keys opened here are cached by
// the key service, so SendGetReply's own unseal costs no unwrap.
Status Session::CheckBlockKeys(Namespace* ns, const proto::GetRequest& req,
                               std::vector<proto::GetResult>* results,
                               std::vector<bool>* needs_meta, uint64_t* payload_len) {
  auto bucket = ctx_->engine->BucketOf(ns->bucket());
  if (!bucket.ok()) return bucket.status().WithContext("kv get");
  if ((*bucket)->default_sse == object::SseMode::kNone) return Status::OK();
  for (size_t i = 0; i < results->size(); ++i) {
    proto::GetResult& r = (*results)[i];
    if (r.status != WireStatus::kOk || r.length == 0) continue;
    auto reader = ctx_->engine->OpenObject(ns->bucket(), ns->ObjectKey(req.items[i].key));
    if (!reader.ok()) return reader.status().WithContext("kv get: block deleted while read");
    if (WireStatus st = Unseal(*ctx_, reader->get()); st != WireStatus::kOk) {
      *payload_len -= r.length;
      r = {st, 0};
      (*needs_meta)[i] = false;
    }
  }
  return Status::OK();
}

Status Session::SendGetReply(const FrameHeader& h, Namespace* ns, const proto::GetRequest& req,
                             const std::vector<proto::GetResult>& results,
                             std::string_view metas, uint64_t payload_len) {
  FrameHeader out;
  out.op = h.op;
  out.request_id = h.request_id;
  out.payload_len = payload_len;
  proto::AppendFrameHeader(out, &out_);
  proto::AppendGetResponseHead(results, &out_);
  out_.append(metas);
  const size_t chunk_bytes = std::max<size_t>(ctx_->options.io_chunk_bytes, 4096);
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].status != WireStatus::kOk || results[i].length == 0) continue;
    const proto::GetItem& it = req.items[i];
    // From here on a failure cannot be reported in this frame: the connection ends.
    auto opened = ctx_->engine->OpenObject(ns->bucket(), ns->ObjectKey(it.key));
    if (!opened.ok()) return opened.status().WithContext("kv get: block deleted while read");
    object::ObjectReader* reader = opened->get();
    if (WireStatus st = Unseal(*ctx_, reader); st != WireStatus::kOk) {
      // Encrypted, and not caught by CheckBlockKeys (the bucket's default
      // encryption was removed after the block was written, or the key was
      // disabled just now).
      return Status(Code::kUnavailable, "kv get: the key of encrypted block " + ns->ObjectKey(it.key) +
                                            " cannot be had: " + std::string(WireStatusName(st)));
    }
    const object::ObjectRecord& rec = reader->record();
    if (rec.size_bytes < it.offset + results[i].length) {
      return Corruption("kv get: block " + ns->ObjectKey(it.key) + " was replaced through S3");
    }
    uint64_t off = it.offset;
    uint64_t left = results[i].length;
    const int fd = reader->UnverifiedFd();  // -1 for an encrypted block
    // Counted before the bytes go out: a client that has received them and
    // then asks for STATS (on any connection) must find them counted. A
    // send that fails ends the connection; its block is then over-counted.
    ns->bytes_served.fetch_add(results[i].length, std::memory_order_relaxed);
    op_bytes_ += results[i].length;
    if (rec.is_inline && !rec.sse.on()) {
      std::string_view parts[2] = {out_, std::string_view(rec.inline_data).substr(off, left)};
      RETURN_IF_ERROR(conn_->WriteAll(parts));
      out_.clear();
    } else if (fd >= 0 && (results[i].flags & proto::kGetCrcValid) && ctx_->options.zero_copy) {
      RETURN_IF_ERROR(conn_->SendFile(out_, fd, off, left));
      out_.clear();
    } else {
      if (!chunk_) chunk_ = std::make_unique<char[]>(chunk_bytes);
      while (left > 0) {
        size_t want = std::min<uint64_t>(left, chunk_bytes);
        size_t got = 0;
        while (got < want) {
          ASSIGN_OR_RETURN(size_t r, reader->ReadAt(off + got, chunk_.get() + got, want - got));
          if (r == 0) return Corruption("kv get: short object " + rec.file_id);
          got += r;
        }
        std::string_view parts[2] = {out_, std::string_view(chunk_.get(), want)};
        RETURN_IF_ERROR(conn_->WriteAll(parts));
        out_.clear();
        off += want;
        left -= want;
      }
    }
  }
  return Status::OK();
}

// ---- PUT -----------------------------------------------------------------------

Status Session::HandlePut(const FrameHeader& h) {
  // The head (keys, parents, lengths) comes first; read exactly that.
  std::string head;
  proto::PutHeadScanState scan;
  size_t need = 0;
  while (true) {
    proto::HeadScan s = proto::ScanPutRequestHead(head, &need, &scan);
    if (s == proto::HeadScan::kComplete) break;
    if (s == proto::HeadScan::kMalformed || need > h.payload_len) {
      RETURN_IF_ERROR(Skip(h.payload_len - head.size()));
      Reply(h, WireStatus::kInvalid);
      return Status::OK();
    }
    size_t have = head.size();
    head.resize(need);
    RETURN_IF_ERROR(ReadExact(head.data() + have, need - have));
  }
  const uint64_t body_bytes = h.payload_len - head.size();
  proto::PutRequestHead req;
  uint64_t total = 0;
  if (!proto::DecodePutRequestHead(head, &req) || !proto::PutBlockBytes(req.items, &total) ||
      total != body_bytes) {
    RETURN_IF_ERROR(Skip(body_bytes));
    Reply(h, WireStatus::kInvalid);
    return Status::OK();
  }
  Namespace* ns = Lookup(req.ns);
  if (ns == nullptr || !rights_[req.ns - 1].write) {
    RETURN_IF_ERROR(Skip(body_bytes));
    Reply(h, ns == nullptr ? WireStatus::kNotFound : WireStatus::kDenied);
    return Status::OK();
  }
  // Each block's commit (its sync and metadata batch) runs on the commit pool
  // while the next block is read; the reply waits for all of them.
  std::vector<WireStatus> statuses(req.items.size(), WireStatus::kOk);
  std::deque<PendingPut> pending;
  Status failed;
  for (size_t i = 0; i < req.items.size() && failed.ok(); ++i) {
    if (pending.size() >= kMaxCommitsInFlight) {
      FinishPut(ns, pending.front(), &statuses);
      pending.pop_front();
    }
    failed = PutOne(ns, i, req.items[i], &pending, &statuses);
  }
  // Also when the connection failed mid-frame: what was committed is stored
  // and must be in the index (the client learns of it by LOOKUP).
  for (PendingPut& p : pending) FinishPut(ns, p, &statuses);
  RETURN_IF_ERROR(failed);
  Reply(h, WireStatus::kOk, proto::EncodeStatusList(statuses));
  return Status::OK();
}

Status Session::PutOne(Namespace* ns, size_t index, const proto::PutItem& item,
                       std::deque<PendingPut>* pending, std::vector<WireStatus>* statuses) {
  WireStatus& st = (*statuses)[index];
  // A key twice in one frame: the first one is stored (as if one after the other).
  for (const PendingPut& p : *pending) {
    if (p.item->key == item.key) {
      st = WireStatus::kExists;
      return Skip(item.length);
    }
  }
  std::vector<std::string> evicted;
  uint64_t freed = 0;
  {
    std::lock_guard<std::mutex> lock(ns->mu);
    const uint64_t before = ns->index.bytes();
    if (ns->index.Find(item.key)) {
      st = WireStatus::kExists;
    } else if (item.length > 0xffffffffu ||
               (ns->block_bytes != 0 && item.length != ns->block_bytes)) {
      st = WireStatus::kTooLarge;
    } else if (ns->quota_bytes != 0 &&
               !ns->index.MakeRoom(ns->quota_bytes, ns->reserved_bytes + item.length, item.parent,
                                   &evicted)) {
      st = WireStatus::kTooLarge;  // over quota even after evicting what may go
    } else if (!ctx_->registry->ReserveTotal(item.length)) {
      st = WireStatus::kTooLarge;  // the tier's global cap (the disk is shared with S3)
    } else {
      ns->reserved_bytes += item.length;
    }
    freed = before - ns->index.bytes();  // only eviction shrinks it here
  }
  DeleteBlocks(ctx_->engine, ns, evicted, Removal::kQuota, freed);
  if (st != WireStatus::kOk) return Skip(item.length);
  std::unique_ptr<object::ObjectWriter> writer;
  Result<WireStatus> received = ReceiveBlock(ns, item, &writer);
  if (!received.ok() || *received != WireStatus::kOk) {
    if (received.ok()) st = *received;
    ReleaseReservation(ns, item, false);
    return received.status();
  }
  // Committed on the pool: the writer moves there (shared, as std::function
  // must be copyable); the result comes back through the promise.
  auto done = std::make_shared<std::promise<WireStatus>>();
  pending->push_back(PendingPut{index, &item, done->get_future()});
  std::shared_ptr<object::ObjectWriter> w(std::move(writer));
  ctx_->commits->Submit([w, done, bucket = ns->bucket(), meter = ctx_->options.energy] {
    const double cpu = meter ? energy::ThreadCpuSeconds() : 0;
    auto committed = w->Commit([](const std::optional<object::ObjectRecord>& current) {
      return current ? AlreadyExists("block exists") : Status::OK();
    });
    if (meter) {  // the commit's CPU is the namespace's too (its bytes were counted by the PUT)
      meter->Record({{energy::WorkloadKind::kKvNamespace, bucket}},
                    energy::ThreadCpuSeconds() - cpu, 0);
    }
    if (committed.ok()) {
      done->set_value(WireStatus::kOk);
    } else if (committed.status().code() == Code::kAlreadyExists) {
      done->set_value(WireStatus::kExists);
    } else {
      STRATA_LOG("kv: put %s: %s", bucket.c_str(), committed.status().ToString().c_str());
      done->set_value(StorageStatus(committed.status()));
    }
  });
  return Status::OK();
}

void Session::FinishPut(Namespace* ns, PendingPut& p, std::vector<WireStatus>* statuses) {
  const WireStatus st = p.done.get();
  (*statuses)[p.index] = st;
  ReleaseReservation(ns, *p.item, st == WireStatus::kOk);
}

void Session::ReleaseReservation(Namespace* ns, const proto::PutItem& item, bool stored) {
  std::lock_guard<std::mutex> lock(ns->mu);
  ns->reserved_bytes -= item.length;
  if (stored && !ns->index.Find(item.key)) {
    ns->index.Insert(item.key, item.parent, item.length, ctx_->NowNs(), item.crc32c,
                     !item.meta.empty());
    ns->events.Add(proto::EventKind::kStored, item.key, item.parent);
  }
  ctx_->registry->ReleaseTotal(item.length);  // committed bytes now count in the index
}

// Streams the block into a new object version, ready to be committed only if
// the key is still absent, once its bytes match the CRC32C the client sent
// (kOk and *writer set). Until the commit the object is invisible (to S3 as
// well); a writer destroyed uncommitted aborts (its data file is removed). No
// MD5 is computed: the block's ETag is "<8 hex of its CRC32C>-1"
// (kv-protocol.md). A non-OK Status: the connection failed.
Result<WireStatus> Session::ReceiveBlock(Namespace* ns, const proto::PutItem& item,
                                         std::unique_ptr<object::ObjectWriter>* writer) {
  object::ObjectHeaders headers;
  headers.content_type = "application/octet-stream";
  if (!item.parent.empty()) {
    headers.user_metadata.emplace_back(std::string(kParentMetadata), HexEncode(item.parent));
  }
  if (!item.meta.empty()) {
    headers.user_metadata.emplace_back(std::string(kBlockMetadata), Base64Encode(item.meta));
  }
  object::WriteOptions options;
  options.md5 = false;
  if (WireStatus sealed = SealWith(*ctx_, ns->bucket(), ns->ObjectKey(item.key), &options);
      sealed != WireStatus::kOk) {
    RETURN_IF_ERROR(Skip(item.length));
    return sealed;
  }
  auto made =
      ctx_->engine->NewWriter(ns->bucket(), ns->ObjectKey(item.key), headers, std::move(options));
  if (!made.ok()) {
    STRATA_LOG("kv: put %s: %s", ns->bucket().c_str(), made.status().ToString().c_str());
    RETURN_IF_ERROR(Skip(item.length));
    return StorageStatus(made.status());
  }
  std::unique_ptr<object::ObjectWriter>& w = *made;
  uint32_t crc = 0;
  Status write_status;
  uint64_t left = item.length;
  while (left > 0) {
    ASSIGN_OR_RETURN(std::string_view v, ReadView(left));  // the block bytes, no extra copy
    left -= v.size();
    if (!write_status.ok()) continue;  // drain the rest of the block
    crc = Crc32cExtend(crc, v.data(), v.size());
    write_status = w->Append(v);
  }
  if (!write_status.ok()) {
    STRATA_LOG("kv: put %s: %s", ns->bucket().c_str(), write_status.ToString().c_str());
    w->Abort();
    return StorageStatus(write_status) == WireStatus::kTooLarge ? WireStatus::kTooLarge
                                                                : WireStatus::kUnavailable;
  }
  if (crc != item.crc32c) {
    STRATA_LOG("kv: put %s: block %s arrived with CRC32C %08x, the client sent %08x",
               ns->bucket().c_str(), HexEncode(item.key).c_str(), crc, item.crc32c);
    w->Abort();
    return WireStatus::kBadChecksum;
  }
  // Stored as the object's CRC32C additional checksum (big-endian, as S3
  // spells it), so S3 readers can verify it too.
  const char be[4] = {static_cast<char>(crc >> 24), static_cast<char>(crc >> 16),
                      static_cast<char>(crc >> 8), static_cast<char>(crc)};
  w->SetChecksum("CRC32C", Base64Encode(std::string_view(be, 4)), "FULL_OBJECT");
  char etag[16];
  std::snprintf(etag, sizeof(etag), "%08x-1", crc);
  w->SetEtag(etag);
  *writer = std::move(w);
  return WireStatus::kOk;
}

// ---- DELETE, PIN, UNPIN --------------------------------------------------------

void Session::HandleDelete(const FrameHeader& h, std::string_view payload) {
  proto::KeysRequest req;
  Namespace* ns = DecodeKeys(h, payload, &req, Need::kWrite);
  if (ns == nullptr) return;
  std::vector<WireStatus> statuses(req.keys.size(), WireStatus::kNotFound);
  std::vector<std::string> removed;
  {
    std::lock_guard<std::mutex> lock(ns->mu);
    for (size_t i = 0; i < req.keys.size(); ++i) {
      if (ns->index.Erase(req.keys[i], &removed)) statuses[i] = WireStatus::kOk;
    }
  }
  DeleteBlocks(ctx_->engine, ns, removed, Removal::kDeleted, 0);
  Reply(h, WireStatus::kOk, proto::EncodeStatusList(statuses));
}

void Session::HandlePin(const FrameHeader& h, std::string_view payload, bool pin) {
  proto::PinRequest req;
  bool ok;
  if (pin) {
    ok = proto::DecodePinRequest(payload, &req);
  } else {
    proto::KeysRequest k;
    ok = proto::DecodeKeysRequest(payload, &k);
    req.ns = k.ns;
    req.keys = std::move(k.keys);
  }
  Namespace* ns = Resolve(h, ok, req.ns, Need::kWrite);
  if (ns == nullptr) return;
  std::vector<WireStatus> statuses(req.keys.size(), WireStatus::kNotFound);
  {
    std::lock_guard<std::mutex> lock(ns->mu);
    uint64_t until = ctx_->NowNs() + uint64_t{req.ttl_ms} * 1000000;
    for (size_t i = 0; i < req.keys.size(); ++i) {
      bool found = pin ? ns->index.Pin(req.keys[i], until) : ns->index.Unpin(req.keys[i]);
      if (found) statuses[i] = WireStatus::kOk;
    }
  }
  Reply(h, WireStatus::kOk, proto::EncodeStatusList(statuses));
}

}  // namespace strata::kvcache
