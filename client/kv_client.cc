// KvClient: the operations of the KV protocol over the pipelined connection
// of kv_connection.{h,cc} (which moves the bytes and matches replies). All
// framing comes from the shared codec (kvcache/proto/frame.h).
//
// Copies: GET reads its 16-byte-per-item head into a small vector and then
// recv()s every block straight into its destination (and CRC32Cs it there);
// PUT sends the frame header + item table from one small string and the
// blocks from the caller's memory with sendmsg (scatter), never copying them.
#include "strata/kv_client.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <future>
#include <memory>

#include "common/checksum.h"
#include "common/net.h"
#include "kv_connection.h"
#include "kvcache/proto/frame.h"

namespace strata::kv {

// The wire status codes and KvCode agree value for value.
#define STRATA_KV_SAME_CODE(name, byte, text) static_assert(static_cast<int>(KvCode::name) == byte);
STRATA_KV_WIRE_STATUSES(STRATA_KV_SAME_CODE)
#undef STRATA_KV_SAME_CODE
static_assert(kMaxKeyBytes == proto::kMaxKeyBytes && kMinKeyBytes == proto::kMinKeyBytes &&
              kMaxMetaBytes == proto::kMaxBlockMetaBytes &&
              kMaxManifestBytes == proto::kMaxManifestBytes);

uint32_t ExtendCrc32c(uint32_t crc, const void* data, size_t n) {
  return strata::Crc32cExtend(crc, data, n);
}

const char* KvCodeName(KvCode code) {
  switch (code) {
#define STRATA_KV_CODE_NAME(name, byte, text) \
  case KvCode::name:                          \
    return text;
    STRATA_KV_WIRE_STATUSES(STRATA_KV_CODE_NAME)
#undef STRATA_KV_CODE_NAME
    // Client-side codes: never on the wire.
    case KvCode::kIoError:
      return "IO_ERROR";
    case KvCode::kProtocolError:
      return "PROTOCOL_ERROR";
    case KvCode::kClosed:
      return "CLOSED";
    case KvCode::kBufferTooSmall:
      return "BUFFER_TOO_SMALL";
    case KvCode::kCorrupt:
      return "CORRUPT";
  }
  return "UNKNOWN";
}

std::string KvStatus::ToString() const {
  if (ok()) return "OK";
  std::string s = KvCodeName(code_);
  if (!message_.empty()) s.append(": ").append(message_);
  return s;
}

namespace {

using detail::FromWire;
using detail::ProtocolError;
using proto::Op;
using proto::WireStatus;

KvStatus Invalid(std::string m) { return KvStatus(KvCode::kInvalid, std::move(m)); }

// How many items one frame may carry (the codec's bound).
constexpr size_t kMaxItems = proto::kMaxBatchItems;
// A GET's block bytes are received and CRC32C'd in pieces of this size (they
// stay in the L2 cache between the two).
constexpr uint64_t kRecvPieceBytes = 256 << 10;

KvStatus CheckKeys(std::span<const KeyView> keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!proto::ValidKey(keys[i])) {
      return Invalid("key " + std::to_string(i) + " has " + std::to_string(keys[i].size()) +
                     " bytes; keys are 16..64 bytes");
    }
  }
  return KvStatus::OK();
}

std::vector<std::string_view> AsViews(std::span<const KeyView> keys) {
  return std::vector<std::string_view>(keys.begin(), keys.end());
}

// Several frames that complete one call: the callback runs once, after the
// last, with the first error (frames are independent on the wire).
class Group {
 public:
  Group(size_t frames, KvCallback done) : left_(frames), done_(std::move(done)) {}
  void FrameDone(const KvStatus& s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!s.ok() && status_.ok()) status_ = s;
      if (--left_ > 0) return;
    }
    done_(status_);
  }

 private:
  std::mutex mu_;
  size_t left_;
  KvStatus status_;
  KvCallback done_;
};


}  // namespace


namespace {

// The synchronous form of an asynchronous call.
template <typename Submit>
KvStatus Wait(KvClient::Impl& impl, Submit submit) {
  std::promise<KvStatus> p;
  auto f = p.get_future();
  submit([&p](const KvStatus& s) { p.set_value(s); });
  return impl.Await(f);
}

}  // namespace

KvClient::KvClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvClient::~KvClient() = default;

KvStatus KvClient::Connect(const ConnectOptions& options, std::unique_ptr<KvClient>* out) {
  if (options.access_key.size() > proto::kMaxStrBytes) return Invalid("access key too long");
  auto dialed = Dial(options.host, options.port,
                     static_cast<int>(std::min<uint32_t>(options.timeout_ms, INT_MAX)));
  if (!dialed.ok()) return KvStatus(KvCode::kIoError, dialed.status().message());
  std::unique_ptr<Stream> stream;
  if (options.tls) {
    const std::string& name = options.tls_server_name.empty() ? options.host : options.tls_server_name;
    KvStatus s = TlsStream(*dialed, options.timeout_ms, options.tls_ca_file, name, &stream);
    if (!s.ok()) return s;
  } else {
    stream = PlainStream(*dialed, options.timeout_ms);
  }
  std::unique_ptr<KvClient> client(
      new KvClient(std::make_unique<Impl>(std::move(stream), options.timeout_ms)));
  Impl& impl = *client->impl_;
  std::string nonce;
  KvStatus s = Wait(impl, [&](KvCallback done) {
    impl.Small(Op::kHello, proto::EncodeHelloRequest(options.access_key), proto::kNonceBytes,
               [&nonce](std::string_view r) {
                 if (r.size() != proto::kNonceBytes) {
                   return ProtocolError("HELLO reply is not a 32-byte nonce");
                 }
                 nonce.assign(r);
                 return KvStatus::OK();
               },
               std::move(done));
  });
  if (!s.ok()) return s;
  std::string mac = proto::ComputeAuthMac(options.secret_key, nonce, options.access_key);
  s = Wait(impl, [&](KvCallback done) { impl.Small(Op::kAuth, mac, 0, nullptr, std::move(done)); });
  if (!s.ok()) {
    if (s.code() == KvCode::kAuthFailed) {
      return KvStatus(KvCode::kAuthFailed,
                      "authentication failed for access key '" + options.access_key + "'");
    }
    return s;
  }
  *out = std::move(client);
  return KvStatus::OK();
}

KvStatus KvClient::Ping() {
  return Wait(*impl_, [&](KvCallback done) { impl_->Small(Op::kPing, {}, 0, nullptr, std::move(done)); });
}

KvStatus KvClient::OpenNamespace(const NamespaceDescriptor& d, NamespaceInfo* info) {
  proto::NamespaceDescriptor p;
  p.model_id = d.model_id;
  p.weights_fingerprint = d.weights_fingerprint;
  p.kv_dtype = d.kv_dtype;
  p.kv_layout = d.kv_layout;
  p.tokens_per_block = d.tokens_per_block;
  p.block_bytes = d.block_bytes;
  p.tp_size = d.tp_size;
  p.tp_rank = d.tp_rank;
  p.pp_size = d.pp_size;
  p.pp_rank = d.pp_rank;
  p.hash_algorithm = d.hash_algorithm;
  p.hash_seed = d.hash_seed;
  p.tenant_salt = d.tenant_salt;
  p.quota_bytes = d.quota_bytes;
  p.ttl_s = d.ttl_s;
  p.manifest = d.manifest;
  std::string payload;
  if (!proto::EncodeNamespaceDescriptor(p, &payload)) {
    return Invalid("a namespace descriptor string exceeds 65535 bytes or the manifest 64 KiB");
  }
  return Wait(*impl_, [&](KvCallback done) {
    impl_->Small(
        Op::kOpenNamespace, payload, 8 + 32 + 2 + proto::kMaxStrBytes + 5 + proto::kMaxManifestBytes,
        [info](std::string_view reply) {
          proto::OpenNamespaceResponse r;
          if (!proto::DecodeOpenNamespaceResponse(reply, &r)) {
            return ProtocolError("OPEN_NAMESPACE reply");
          }
          info->handle = r.handle;
          std::copy(r.digest.begin(), r.digest.end(), info->digest.begin());
          info->bucket = std::move(r.bucket);
          info->manifest = std::move(r.manifest);
          info->manifest_matches = r.manifest_matches;
          return KvStatus::OK();
        },
        std::move(done));
  });
}

void KvClient::LookupAsync(uint64_t ns, std::span<const KeyView> keys, uint32_t* prefix_len,
                           KvCallback done) {
  KvStatus s = CheckKeys(keys);
  if (!s.ok()) return done(s);
  *prefix_len = 0;
  if (keys.empty()) return done(KvStatus::OK());
  // One frame (one round trip) per kMaxItems keys, all sent at once; the
  // prefix ends at the first frame that is not all hits.
  const size_t frames = (keys.size() + kMaxItems - 1) / kMaxItems;
  auto hits = std::make_shared<std::vector<uint32_t>>(frames, 0);
  auto group = std::make_shared<Group>(frames, [hits, prefix_len, keys, done](const KvStatus& st) {
    if (st.ok()) {
      uint32_t total = 0;
      for (size_t f = 0; f < hits->size(); ++f) {
        total += (*hits)[f];
        if ((*hits)[f] < std::min(kMaxItems, keys.size() - f * kMaxItems)) break;
      }
      *prefix_len = total;
    }
    done(st);
  });
  for (size_t f = 0; f < frames; ++f) {
    size_t i = f * kMaxItems, n = std::min(kMaxItems, keys.size() - i);
    impl_->Small(
        Op::kLookup, proto::EncodeKeysRequest(ns, AsViews(keys.subspan(i, n))), 4,
        [hits, f, n](std::string_view reply) {
          uint32_t hit = 0;
          if (!proto::DecodeLookupResponse(reply, &hit) || hit > n) {
            return ProtocolError("LOOKUP reply");
          }
          (*hits)[f] = hit;
          return KvStatus::OK();
        },
        [group](const KvStatus& st) { group->FrameDone(st); });
  }
}

KvStatus KvClient::Lookup(uint64_t ns, std::span<const KeyView> keys, uint32_t* prefix_len) {
  return Wait(*impl_, [&](KvCallback done) { LookupAsync(ns, keys, prefix_len, std::move(done)); });
}

void KvClient::LookupEachAsync(uint64_t ns, std::span<const KeyView> keys,
                               std::vector<bool>* present, KvCallback done) {
  KvStatus s = CheckKeys(keys);
  if (!s.ok()) return done(s);
  present->assign(keys.size(), false);
  if (keys.empty()) return done(KvStatus::OK());
  const size_t frames = (keys.size() + kMaxItems - 1) / kMaxItems;
  auto group = std::make_shared<Group>(frames, std::move(done));
  for (size_t f = 0; f < frames; ++f) {
    size_t i = f * kMaxItems, n = std::min(kMaxItems, keys.size() - i);
    impl_->Small(
        Op::kLookupEach, proto::EncodeKeysRequest(ns, AsViews(keys.subspan(i, n))),
        4 + (n + 7) / 8,
        [present, i, n](std::string_view reply) {
          std::vector<bool> bits;
          if (!proto::DecodeLookupEachResponse(reply, n, &bits)) {
            return ProtocolError("LOOKUP_EACH reply");
          }
          for (size_t k = 0; k < n; ++k) (*present)[i + k] = bits[k];
          return KvStatus::OK();
        },
        [group](const KvStatus& st) { group->FrameDone(st); });
  }
}

KvStatus KvClient::LookupEach(uint64_t ns, std::span<const KeyView> keys,
                              std::vector<bool>* present) {
  return Wait(*impl_, [&](KvCallback done) { LookupEachAsync(ns, keys, present, std::move(done)); });
}

namespace {

// Reads one GET frame's reply into its items: the head, the metadata, then
// each block straight into its destination, checked against its CRC32C.
KvStatus ReadGetReply(KvClient::Impl& impl, const proto::FrameHeader& h, std::span<GetItem> items);

}  // namespace

void KvClient::GetAsync(uint64_t ns, std::span<GetItem> items, KvCallback done) {
  for (size_t i = 0; i < items.size(); ++i) {
    GetItem& it = items[i];
    KvStatus bad;
    if (!proto::ValidKey(it.key)) bad = Invalid("GET item " + std::to_string(i) + ": bad key");
    if (!it.dst && it.dst_capacity) bad = Invalid("GET item " + std::to_string(i) + ": no dst");
    if (it.length > it.dst_capacity) {
      bad = Invalid("GET item " + std::to_string(i) + ": length exceeds dst_capacity");
    }
    if (!bad.ok()) return done(bad);
    it.status = KvCode::kClosed;  // until its reply arrives
    it.bytes = 0;
    it.meta_len = 0;
    it.crc_checked = false;
    it.crc32c = 0;
  }
  if (items.empty()) return done(KvStatus::OK());
  // Split so that no reply can exceed the frame limit: an item's reply is at
  // most its destination's capacity (longer ones are refused and skipped)
  // plus its head and metadata.
  std::vector<std::pair<size_t, size_t>> frames;
  for (size_t i = 0; i < items.size();) {
    size_t j = i;
    uint64_t bytes = 0;
    while (j < items.size() && j - i < kMaxItems) {
      uint64_t want = items[j].length ? items[j].length : items[j].dst_capacity;
      uint64_t add = want + proto::kGetResultBytes + proto::kMaxBlockMetaBytes;
      if (j > i && bytes + add > proto::kMaxPayloadBytes) break;
      bytes += add;
      ++j;
    }
    frames.emplace_back(i, j - i);
    i = j;
  }
  auto group = std::make_shared<Group>(frames.size(), std::move(done));
  for (auto [i, n] : frames) {
    std::span<GetItem> part = items.subspan(i, n);
    std::vector<proto::GetItem> req(n);
    for (size_t k = 0; k < n; ++k) req[k] = {part[k].key, part[k].offset, part[k].length};
    std::string payload = proto::EncodeGetRequest(ns, req);
    std::string head = Impl::FrameStart(Op::kGet, payload.size());
    head.append(payload);
    impl_->Send(
        Op::kGet, std::move(head), {},
        [part](Impl& impl, const proto::FrameHeader& h) { return ReadGetReply(impl, h, part); },
        [group, part](const KvStatus& st) {
          if (!st.ok()) {
            for (GetItem& it : part) {
              if (it.status == KvCode::kClosed) it.status = st.code();
            }
          }
          group->FrameDone(st);
        });
  }
}

namespace {

KvStatus ReadGetReply(KvClient::Impl& impl, const proto::FrameHeader& h,
                      std::span<GetItem> items) {
  const uint64_t head_bytes = items.size() * proto::kGetResultBytes;
  if (h.payload_len < head_bytes) return ProtocolError("GET reply too short");
  std::string head(head_bytes, '\0');
  KvStatus s = impl.RecvExact(head.data(), head.size());
  if (!s.ok()) return s;
  std::vector<proto::GetResult> results;
  if (!proto::DecodeGetResponseHead(head, items.size(), &results)) {
    return ProtocolError("GET reply head");
  }
  uint64_t meta_bytes = 0, body = 0;
  for (const proto::GetResult& r : results) {
    if (r.length > h.payload_len) return ProtocolError("GET item length");
    meta_bytes += r.meta_len;
    body += r.length;
  }
  if (head_bytes + meta_bytes + body != h.payload_len) {
    return ProtocolError("GET reply length disagrees with its items");
  }
  std::string metas(meta_bytes, '\0');
  s = impl.RecvExact(metas.data(), metas.size());
  if (!s.ok()) return s;
  size_t meta_at = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    GetItem& it = items[i];
    const proto::GetResult& r = results[i];
    it.status = FromWire(r.status);
    it.meta_len = r.meta_len;
    if (it.meta_dst && r.meta_len <= it.meta_capacity) {
      std::memcpy(it.meta_dst, metas.data() + meta_at, r.meta_len);
    }
    meta_at += r.meta_len;
  }
  // The bytes of the OK items, in order, each straight into its destination.
  for (size_t i = 0; i < items.size(); ++i) {
    GetItem& it = items[i];
    if (results[i].status != WireStatus::kOk) continue;
    uint64_t len = results[i].length;
    if (len > it.dst_capacity) {
      it.status = KvCode::kBufferTooSmall;
      s = impl.Discard(len);
    } else {
      // Received in pieces, each CRC32C'd while it is still in the cache (a
      // whole-block pass after the recv would read 2 MiB back from memory).
      const bool check = results[i].flags & proto::kGetCrcValid;
      uint32_t crc = 0;
      char* dst = static_cast<char*>(it.dst);
      for (uint64_t at = 0; at < len && s.ok();) {
        const uint64_t piece = std::min<uint64_t>(len - at, kRecvPieceBytes);
        s = impl.RecvExact(dst + at, piece);
        if (s.ok() && check) crc = Crc32cExtend(crc, dst + at, piece);
        at += piece;
      }
      it.bytes = len;
      if (s.ok() && check) {
        if (crc == results[i].crc32c) {
          it.crc_checked = true;
          it.crc32c = crc;
        } else {
          it.status = KvCode::kCorrupt;  // a flipped bit somewhere: a miss, never wrong bytes
          it.bytes = 0;
        }
      }
    }
    if (!s.ok()) return s;
  }
  return KvStatus::OK();
}

}  // namespace

KvStatus KvClient::Get(uint64_t ns, std::span<GetItem> items) {
  return Wait(*impl_, [&](KvCallback done) { GetAsync(ns, items, std::move(done)); });
}

void KvClient::PutAsync(uint64_t ns, std::span<PutItem> items, KvCallback done) {
  for (size_t i = 0; i < items.size(); ++i) {
    PutItem& it = items[i];
    KvStatus bad;
    if (!proto::ValidKey(it.key)) bad = Invalid("PUT item " + std::to_string(i) + ": bad key");
    if (!it.parent.empty() && !proto::ValidKey(it.parent)) {
      bad = Invalid("PUT item " + std::to_string(i) + ": bad parent key");
    }
    if (!it.data && it.length) bad = Invalid("PUT item " + std::to_string(i) + ": no data");
    if (it.length > proto::kMaxPayloadBytes / 2) {
      bad = Invalid("PUT item " + std::to_string(i) + ": block larger than 512 MiB");
    }
    if (it.meta.size() > proto::kMaxBlockMetaBytes) {
      bad = Invalid("PUT item " + std::to_string(i) + ": metadata over 1024 bytes");
    }
    if (!bad.ok()) return done(bad);
    it.status = KvCode::kClosed;
  }
  if (items.empty()) return done(KvStatus::OK());
  std::vector<std::pair<size_t, size_t>> frames;
  for (size_t i = 0; i < items.size();) {
    size_t j = i;
    uint64_t bytes = 12;
    while (j < items.size() && j - i < kMaxItems) {
      uint64_t add = items[j].length + 2 + items[j].key.size() + items[j].parent.size() + 14 +
                     items[j].meta.size();
      if (j > i && bytes + add > proto::kMaxPayloadBytes) break;
      bytes += add;
      ++j;
    }
    frames.emplace_back(i, j - i);
    i = j;
  }
  auto group = std::make_shared<Group>(frames.size(), std::move(done));
  for (auto [i, n] : frames) {
    std::span<PutItem> part = items.subspan(i, n);
    std::vector<proto::PutItem> req(n);
    uint64_t total = 0;
    std::vector<iovec> blocks;
    blocks.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      const PutItem& it = part[k];
      req[k].key = it.key;
      req[k].parent = it.parent;
      req[k].length = it.length;
      req[k].crc32c = Crc32c(it.data, it.length);
      req[k].meta = it.meta;
      total += it.length;
      blocks.push_back({const_cast<void*>(it.data), it.length});
    }
    std::string payload_head = proto::EncodePutRequestHead(ns, req);
    std::string head = Impl::FrameStart(Op::kPut, payload_head.size() + total);
    head.append(payload_head);
    impl_->Send(
        Op::kPut, std::move(head), std::move(blocks),
        [part](Impl& impl, const proto::FrameHeader& h) {
          if (h.payload_len != part.size()) return ProtocolError("PUT reply has the wrong item count");
          std::string reply(h.payload_len, '\0');
          KvStatus s = impl.RecvExact(reply.data(), reply.size());
          if (!s.ok()) return s;
          std::vector<WireStatus> st;
          if (!proto::DecodeStatusList(reply, part.size(), &st)) {
            return ProtocolError("PUT status list");
          }
          for (size_t k = 0; k < part.size(); ++k) part[k].status = FromWire(st[k]);
          return KvStatus::OK();
        },
        [group, part](const KvStatus& st) {
          if (!st.ok()) {
            for (PutItem& it : part) {
              if (it.status == KvCode::kClosed) it.status = st.code();
            }
          }
          group->FrameDone(st);
        });
  }
}

KvStatus KvClient::Put(uint64_t ns, std::span<PutItem> items) {
  return Wait(*impl_, [&](KvCallback done) { PutAsync(ns, items, std::move(done)); });
}

namespace {

// DELETE / PIN / UNPIN: keys in, one status per key out; one frame per
// kMaxItems keys, all in flight at once.
KvStatus KeysOp(KvClient::Impl& impl, Op op, uint64_t ns, uint32_t ttl_ms,
                std::span<const KeyView> keys, std::vector<KvCode>* statuses) {
  KvStatus s = CheckKeys(keys);
  if (!s.ok()) return s;
  statuses->assign(keys.size(), KvCode::kClosed);
  if (keys.empty()) return KvStatus::OK();
  const size_t frames = (keys.size() + kMaxItems - 1) / kMaxItems;
  return Wait(impl, [&](KvCallback done) {
    auto group = std::make_shared<Group>(frames, std::move(done));
    for (size_t f = 0; f < frames; ++f) {
      size_t i = f * kMaxItems, n = std::min(kMaxItems, keys.size() - i);
      auto views = AsViews(keys.subspan(i, n));
      std::string payload = op == Op::kPin ? proto::EncodePinRequest(ns, ttl_ms, views)
                                           : proto::EncodeKeysRequest(ns, views);
      impl.Small(
          op, payload, n,
          [op, statuses, i, n](std::string_view reply) {
            std::vector<WireStatus> st;
            if (!proto::DecodeStatusList(reply, n, &st)) {
              return ProtocolError(std::string(proto::OpName(op)) + " status list");
            }
            for (size_t k = 0; k < n; ++k) (*statuses)[i + k] = FromWire(st[k]);
            return KvStatus::OK();
          },
          [group](const KvStatus& st) { group->FrameDone(st); });
    }
  });
}

}  // namespace

KvStatus KvClient::Delete(uint64_t ns, std::span<const KeyView> keys,
                          std::vector<KvCode>* statuses) {
  return KeysOp(*impl_, Op::kDelete, ns, 0, keys, statuses);
}

KvStatus KvClient::Pin(uint64_t ns, uint32_t ttl_ms, std::span<const KeyView> keys,
                       std::vector<KvCode>* statuses) {
  return KeysOp(*impl_, Op::kPin, ns, ttl_ms, keys, statuses);
}

KvStatus KvClient::Unpin(uint64_t ns, std::span<const KeyView> keys,
                         std::vector<KvCode>* statuses) {
  return KeysOp(*impl_, Op::kUnpin, ns, 0, keys, statuses);
}

KvStatus KvClient::Stats(uint64_t ns, NamespaceStats* stats) {
  return Wait(*impl_, [&](KvCallback done) {
    impl_->Small(
        Op::kStats, proto::EncodeNamespaceRequest(ns), 80,
        [stats](std::string_view reply) {
          proto::NamespaceStats p;
          if (!proto::DecodeStatsResponse(reply, &p)) return ProtocolError("STATS reply");
          *stats = NamespaceStats{p.blocks,       p.bytes,           p.hits,      p.misses,
                                  p.bytes_served, p.bytes_requested, p.evictions, p.lookups,
                                  p.lookup_keys,  p.lookup_ns};
          return KvStatus::OK();
        },
        std::move(done));
  });
}

KvStatus KvClient::Events(uint64_t ns, uint64_t since, uint32_t max_events, EventsResult* out) {
  max_events = std::min<uint32_t>(max_events, 1u << 16);
  const uint64_t max_reply = 20 + uint64_t{max_events} * (3 + 2 * proto::kMaxKeyBytes);
  return Wait(*impl_, [&](KvCallback done) {
    impl_->Small(
        Op::kEvents, proto::EncodeEventsRequest({ns, since, max_events}), max_reply,
        [out, max_events](std::string_view reply) {
          proto::EventsResponse r;
          if (!proto::DecodeEventsResponse(reply, &r) || r.events.size() > max_events) {
            return ProtocolError("EVENTS reply");
          }
          out->next = r.next;
          out->lost = r.lost;
          out->events.clear();
          for (proto::Event& e : r.events) {
            out->events.push_back({e.kind == proto::EventKind::kStored ? KvEvent::Kind::kStored
                                                                        : KvEvent::Kind::kRemoved,
                                   std::move(e.key), std::move(e.parent)});
          }
          return KvStatus::OK();
        },
        std::move(done));
  });
}

size_t KvClient::in_flight() const { return impl_->in_flight(); }

void KvClient::WaitUntil(const std::function<bool(std::chrono::microseconds)>& done) {
  impl_->WaitUntil(done);
}

void KvClient::Close() { impl_->Close(); }

bool KvClient::connected() const { return impl_->connected(); }

}  // namespace strata::kv
