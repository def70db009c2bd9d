#include "kvcache/proto/frame.h"

#include <cassert>
#include <cstring>
#include <limits>

#include "common/encoding.h"

namespace strata::kvcache::proto {
namespace {

void PutLe(char* p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

uint64_t GetLe(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

bool ValidStatusByte(uint8_t b) { return b <= kMaxWireStatus; }

// Smallest encoding of one item, to bound reservations by the input size.
constexpr size_t kMinKeyItemBytes = 1 + kMinKeyBytes;

// n x key after an already-read count.
bool ReadKeys(Reader& r, uint32_t n, std::vector<std::string_view>* keys) {
  if (n > kMaxBatchItems || n > r.remaining() / kMinKeyItemBytes) return false;
  keys->clear();
  keys->reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view k;
    if (!r.Key(&k)) return false;
    keys->push_back(k);
  }
  return true;
}

void WriteKeys(Writer& w, std::span<const std::string_view> keys) {
  assert(keys.size() <= kMaxBatchItems);
  w.U32(static_cast<uint32_t>(keys.size()));
  for (std::string_view k : keys) w.Key(k);
}

}  // namespace

#define STRATA_KV_STATUS_IN_RANGE(name, byte, text) static_assert(byte <= kMaxWireStatus);
STRATA_KV_WIRE_STATUSES(STRATA_KV_STATUS_IN_RANGE)
#undef STRATA_KV_STATUS_IN_RANGE

bool IsKnownOp(uint8_t op) {
  switch (op) {
#define STRATA_KV_OP_CASE(name, byte, text) case byte:
    STRATA_KV_OPS(STRATA_KV_OP_CASE)
#undef STRATA_KV_OP_CASE
    return true;
  }
  return false;
}

std::string_view OpName(Op op) {
  switch (op) {
#define STRATA_KV_OP_NAME(name, byte, text) \
  case Op::name:                            \
    return text;
    STRATA_KV_OPS(STRATA_KV_OP_NAME)
#undef STRATA_KV_OP_NAME
  }
  return "UNKNOWN";
}

std::string_view WireStatusName(WireStatus s) {
  switch (s) {
#define STRATA_KV_STATUS_NAME(name, byte, text) \
  case WireStatus::name:                        \
    return text;
    STRATA_KV_WIRE_STATUSES(STRATA_KV_STATUS_NAME)
#undef STRATA_KV_STATUS_NAME
  }
  return "UNKNOWN";
}

// ---- frame header ----------------------------------------------------------

void EncodeFrameHeader(const FrameHeader& h, char* out) {
  std::memcpy(out, kMagic, 4);
  out[4] = static_cast<char>(h.version);
  out[5] = static_cast<char>(h.op);
  out[6] = static_cast<char>(h.status);
  out[7] = static_cast<char>(h.flags);
  PutLe(out + 8, h.request_id, 8);
  PutLe(out + 16, h.payload_len, 8);
}

void AppendFrameHeader(const FrameHeader& h, std::string* out) {
  char buf[kFrameHeaderBytes];
  EncodeFrameHeader(h, buf);
  out->append(buf, sizeof(buf));
}

HeaderCheck DecodeFrameHeader(std::string_view in, FrameHeader* out) {
  if (in.size() < kFrameHeaderBytes) return HeaderCheck::kTruncated;
  if (std::memcmp(in.data(), kMagic, 4) != 0) return HeaderCheck::kBadMagic;
  const char* p = in.data();
  out->version = static_cast<uint8_t>(p[4]);
  out->op = static_cast<Op>(p[5]);
  out->status = static_cast<WireStatus>(p[6]);
  out->flags = static_cast<uint8_t>(p[7]);
  out->request_id = GetLe(p + 8, 8);
  out->payload_len = GetLe(p + 16, 8);
  if (static_cast<uint8_t>(p[4]) != kVersion) return HeaderCheck::kBadVersion;
  if (out->payload_len > kMaxPayloadBytes) return HeaderCheck::kTooLarge;
  return HeaderCheck::kOk;
}

// ---- Writer / Reader -------------------------------------------------------

void Writer::U16(uint16_t v) {
  char b[2];
  PutLe(b, v, 2);
  out_->append(b, 2);
}
void Writer::U32(uint32_t v) {
  char b[4];
  PutLe(b, v, 4);
  out_->append(b, 4);
}
void Writer::U64(uint64_t v) {
  char b[8];
  PutLe(b, v, 8);
  out_->append(b, 8);
}
void Writer::Str(std::string_view s) {
  assert(s.size() <= kMaxStrBytes);
  U16(static_cast<uint16_t>(s.size()));
  Bytes(s);
}
void Writer::Key(std::string_view k) {
  assert(k.empty() || ValidKey(k));
  U8(static_cast<uint8_t>(k.size()));
  Bytes(k);
}

bool Reader::U8(uint8_t* v) {
  if (in_.empty()) return false;
  *v = static_cast<uint8_t>(in_[0]);
  in_.remove_prefix(1);
  return true;
}
bool Reader::U16(uint16_t* v) {
  if (in_.size() < 2) return false;
  *v = static_cast<uint16_t>(GetLe(in_.data(), 2));
  in_.remove_prefix(2);
  return true;
}
bool Reader::U32(uint32_t* v) {
  if (in_.size() < 4) return false;
  *v = static_cast<uint32_t>(GetLe(in_.data(), 4));
  in_.remove_prefix(4);
  return true;
}
bool Reader::U64(uint64_t* v) {
  if (in_.size() < 8) return false;
  *v = GetLe(in_.data(), 8);
  in_.remove_prefix(8);
  return true;
}
bool Reader::Bytes(size_t n, std::string_view* out) {
  if (in_.size() < n) return false;
  *out = in_.substr(0, n);
  in_.remove_prefix(n);
  return true;
}
bool Reader::Str(std::string_view* out) {
  if (in_.size() < 2) return false;
  size_t n = GetLe(in_.data(), 2);
  if (in_.size() < 2 + n) return false;
  *out = in_.substr(2, n);
  in_.remove_prefix(2 + n);
  return true;
}
bool Reader::KeyOrEmpty(std::string_view* out) {
  if (in_.empty()) return false;
  size_t n = static_cast<unsigned char>(in_[0]);
  if (n != 0 && (n < kMinKeyBytes || n > kMaxKeyBytes)) return false;
  if (in_.size() < 1 + n) return false;
  *out = in_.substr(1, n);
  in_.remove_prefix(1 + n);
  return true;
}
bool Reader::Key(std::string_view* out) {
  if (in_.empty() || in_[0] == 0) return false;
  return KeyOrEmpty(out);
}

bool ValidKey(std::string_view key) {
  return key.size() >= kMinKeyBytes && key.size() <= kMaxKeyBytes;
}

// ---- HELLO / AUTH ----------------------------------------------------------

std::string EncodeHelloRequest(std::string_view access_key) {
  std::string out;
  Writer w(&out);
  w.Str(access_key.substr(0, kMaxStrBytes));
  return out;
}

bool DecodeHelloRequest(std::string_view payload, std::string_view* access_key) {
  Reader r(payload);
  return r.Str(access_key) && r.empty();
}

std::string ComputeAuthMac(std::string_view secret_key, std::string_view nonce,
                           std::string_view access_key) {
  std::string msg;
  msg.reserve(kAuthContext.size() + nonce.size() + access_key.size());
  msg.append(kAuthContext).append(nonce).append(access_key);
  Sha256Digest mac = HmacSha256(secret_key, msg);
  return std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
}

// ---- OPEN_NAMESPACE --------------------------------------------------------

namespace {

bool StringsFit(const NamespaceDescriptor& d) {
  for (const std::string* s : {&d.model_id, &d.weights_fingerprint, &d.kv_dtype, &d.kv_layout,
                               &d.hash_algorithm, &d.tenant_salt}) {
    if (s->size() > kMaxStrBytes) return false;
  }
  return true;
}

// The identity part, in wire order.
void WriteIdentity(const NamespaceDescriptor& d, Writer& w) {
  w.Str(d.model_id);
  w.Str(d.weights_fingerprint);
  w.Str(d.kv_dtype);
  w.Str(d.kv_layout);
  w.U32(d.tokens_per_block);
  w.U64(d.block_bytes);
  w.U16(d.tp_size);
  w.U16(d.tp_rank);
  w.U16(d.pp_size);
  w.U16(d.pp_rank);
  w.Str(d.hash_algorithm);
  w.U64(d.hash_seed);
  w.Str(d.tenant_salt);
}

bool ReadStr(Reader& r, std::string* out) {
  std::string_view v;
  if (!r.Str(&v)) return false;
  out->assign(v);
  return true;
}

}  // namespace

bool EncodeNamespaceDescriptor(const NamespaceDescriptor& d, std::string* out) {
  if (!StringsFit(d)) return false;
  Writer w(out);
  WriteIdentity(d, w);
  w.U64(d.quota_bytes);
  w.U32(d.ttl_s);
  if (d.manifest.size() > kMaxManifestBytes) return false;
  w.U32(static_cast<uint32_t>(d.manifest.size()));
  w.Bytes(d.manifest);
  return true;
}

bool DecodeNamespaceDescriptor(std::string_view payload, NamespaceDescriptor* out) {
  Reader r(payload);
  NamespaceDescriptor d;
  bool ok = ReadStr(r, &d.model_id) && ReadStr(r, &d.weights_fingerprint) &&
            ReadStr(r, &d.kv_dtype) && ReadStr(r, &d.kv_layout) && r.U32(&d.tokens_per_block) &&
            r.U64(&d.block_bytes) && r.U16(&d.tp_size) && r.U16(&d.tp_rank) && r.U16(&d.pp_size) &&
            r.U16(&d.pp_rank) && ReadStr(r, &d.hash_algorithm) && r.U64(&d.hash_seed) &&
            ReadStr(r, &d.tenant_salt) && r.U64(&d.quota_bytes) && r.U32(&d.ttl_s);
  uint32_t manifest_len = 0;
  std::string_view manifest;
  ok = ok && r.U32(&manifest_len) && manifest_len <= kMaxManifestBytes &&
       r.Bytes(manifest_len, &manifest) && r.empty();
  if (!ok) return false;
  d.manifest.assign(manifest);
  *out = std::move(d);
  return true;
}

std::string CanonicalNamespaceIdentity(const NamespaceDescriptor& d) {
  assert(StringsFit(d));
  std::string out;
  Writer w(&out);
  WriteIdentity(d, w);
  return out;
}

Sha256Digest NamespaceDigest(const NamespaceDescriptor& d) {
  return Sha256(CanonicalNamespaceIdentity(d));
}

std::string DigestHex(const Sha256Digest& digest) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string NamespaceBucket(const Sha256Digest& digest) {
  return std::string(kBucketPrefix) + DigestHex(digest).substr(0, 16);
}

std::string BlockObjectKey(const Sha256Digest& digest, std::string_view key) {
  return DigestHex(digest) + "/" + HexEncode(key);
}

std::string EncodeOpenNamespaceResponse(const OpenNamespaceResponse& r) {
  std::string out;
  Writer w(&out);
  w.U64(r.handle);
  w.Bytes(std::string_view(reinterpret_cast<const char*>(r.digest.data()), r.digest.size()));
  w.Str(r.bucket);
  w.U8(r.manifest_matches ? 1 : 0);
  assert(r.manifest.size() <= kMaxManifestBytes);
  w.U32(static_cast<uint32_t>(r.manifest.size()));
  w.Bytes(r.manifest);
  return out;
}

bool DecodeOpenNamespaceResponse(std::string_view payload, OpenNamespaceResponse* out) {
  Reader r(payload);
  std::string_view digest, bucket, manifest;
  uint8_t matches = 0;
  uint32_t manifest_len = 0;
  if (!r.U64(&out->handle) || !r.Bytes(kDigestBytes, &digest) || !r.Str(&bucket) ||
      !r.U8(&matches) || matches > 1 || !r.U32(&manifest_len) ||
      manifest_len > kMaxManifestBytes || !r.Bytes(manifest_len, &manifest) || !r.empty()) {
    return false;
  }
  std::memcpy(out->digest.data(), digest.data(), kDigestBytes);
  out->bucket.assign(bucket);
  out->manifest_matches = matches == 1;
  out->manifest.assign(manifest);
  return true;
}

// ---- keys requests ---------------------------------------------------------

std::string EncodeKeysRequest(uint64_t ns, std::span<const std::string_view> keys) {
  std::string out;
  out.reserve(12 + keys.size() * (1 + kMaxKeyBytes));
  Writer w(&out);
  w.U64(ns);
  WriteKeys(w, keys);
  return out;
}

bool DecodeKeysRequest(std::string_view payload, KeysRequest* out) {
  Reader r(payload);
  uint32_t n = 0;
  return r.U64(&out->ns) && r.U32(&n) && ReadKeys(r, n, &out->keys) && r.empty();
}

std::string EncodeLookupResponse(uint32_t prefix_len) {
  std::string out;
  Writer(&out).U32(prefix_len);
  return out;
}

bool DecodeLookupResponse(std::string_view payload, uint32_t* prefix_len) {
  Reader r(payload);
  return r.U32(prefix_len) && r.empty();
}

std::string EncodeLookupEachResponse(const std::vector<bool>& present) {
  assert(present.size() <= kMaxBatchItems);
  std::string out;
  Writer w(&out);
  w.U32(static_cast<uint32_t>(present.size()));
  size_t at = out.size();
  out.resize(at + (present.size() + 7) / 8, '\0');
  for (size_t i = 0; i < present.size(); ++i) {
    if (present[i]) out[at + i / 8] = static_cast<char>(out[at + i / 8] | (1u << (i % 8)));
  }
  return out;
}

bool DecodeLookupEachResponse(std::string_view payload, size_t expected_n,
                              std::vector<bool>* present) {
  Reader r(payload);
  uint32_t n = 0;
  std::string_view bits;
  if (!r.U32(&n) || n != expected_n || !r.Bytes((size_t{n} + 7) / 8, &bits) || !r.empty()) {
    return false;
  }
  // Bits past n in the last byte must be zero (one encoding per answer).
  if (n % 8 != 0 && (static_cast<unsigned char>(bits.back()) >> (n % 8)) != 0) return false;
  present->assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    (*present)[i] = (static_cast<unsigned char>(bits[i / 8]) >> (i % 8)) & 1;
  }
  return true;
}

std::string EncodePinRequest(uint64_t ns, uint32_t ttl_ms, std::span<const std::string_view> keys) {
  std::string out;
  out.reserve(16 + keys.size() * (1 + kMaxKeyBytes));
  Writer w(&out);
  w.U64(ns);
  w.U32(ttl_ms);
  WriteKeys(w, keys);
  return out;
}

bool DecodePinRequest(std::string_view payload, PinRequest* out) {
  Reader r(payload);
  uint32_t n = 0;
  return r.U64(&out->ns) && r.U32(&out->ttl_ms) && r.U32(&n) && ReadKeys(r, n, &out->keys) &&
         r.empty();
}

std::string EncodeStatusList(std::span<const WireStatus> statuses) {
  std::string out(statuses.size(), '\0');
  for (size_t i = 0; i < statuses.size(); ++i) out[i] = static_cast<char>(statuses[i]);
  return out;
}

bool DecodeStatusList(std::string_view payload, size_t expected_n, std::vector<WireStatus>* out) {
  if (payload.size() != expected_n) return false;
  out->clear();
  out->reserve(expected_n);
  for (char c : payload) {
    uint8_t b = static_cast<uint8_t>(c);
    if (!ValidStatusByte(b)) return false;
    out->push_back(static_cast<WireStatus>(b));
  }
  return true;
}

// ---- GET -------------------------------------------------------------------

std::string EncodeGetRequest(uint64_t ns, std::span<const GetItem> items) {
  assert(items.size() <= kMaxBatchItems);
  std::string out;
  out.reserve(12 + items.size() * (17 + kMaxKeyBytes));
  Writer w(&out);
  w.U64(ns);
  w.U32(static_cast<uint32_t>(items.size()));
  for (const GetItem& it : items) {
    w.Key(it.key);
    w.U64(it.offset);
    w.U64(it.length);
  }
  return out;
}

bool DecodeGetRequest(std::string_view payload, GetRequest* out) {
  Reader r(payload);
  uint32_t n = 0;
  if (!r.U64(&out->ns) || !r.U32(&n)) return false;
  if (n > kMaxBatchItems || n > r.remaining() / (kMinKeyItemBytes + 16)) return false;
  out->items.clear();
  out->items.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    GetItem it;
    if (!r.Key(&it.key) || !r.U64(&it.offset) || !r.U64(&it.length)) return false;
    out->items.push_back(it);
  }
  return r.empty();
}

void AppendGetResponseHead(std::span<const GetResult> results, std::string* out) {
  Writer w(out);
  for (const GetResult& g : results) {
    w.U8(static_cast<uint8_t>(g.status));
    w.U64(g.length);
    w.U8(g.flags);
    w.U32(g.crc32c);
    w.U16(g.meta_len);
  }
}

bool DecodeGetResponseHead(std::string_view payload, size_t n, std::vector<GetResult>* out) {
  if (n > kMaxBatchItems || payload.size() / kGetResultBytes < n) return false;
  Reader r(payload);
  out->clear();
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    uint8_t s = 0;
    GetResult g;
    if (!r.U8(&s) || !r.U64(&g.length) || !r.U8(&g.flags) || !r.U32(&g.crc32c) ||
        !r.U16(&g.meta_len) || !ValidStatusByte(s)) {
      return false;
    }
    g.status = static_cast<WireStatus>(s);
    if ((g.flags & ~kGetCrcValid) != 0 || g.meta_len > kMaxBlockMetaBytes) return false;
    if (g.status != WireStatus::kOk &&
        (g.length != 0 || g.flags != 0 || g.crc32c != 0 || g.meta_len != 0)) {
      return false;
    }
    out->push_back(g);
  }
  return true;
}

// ---- PUT -------------------------------------------------------------------

std::string EncodePutRequestHead(uint64_t ns, std::span<const PutItem> items) {
  assert(items.size() <= kMaxBatchItems);
  std::string out;
  out.reserve(12 + items.size() * (16 + 2 * kMaxKeyBytes));
  Writer w(&out);
  w.U64(ns);
  w.U32(static_cast<uint32_t>(items.size()));
  for (const PutItem& it : items) {
    assert(it.meta.size() <= kMaxBlockMetaBytes);
    w.Key(it.key);
    w.Key(it.parent);
    w.U64(it.length);
    w.U32(it.crc32c);
    w.U16(static_cast<uint16_t>(it.meta.size()));
    w.Bytes(it.meta);
  }
  return out;
}

bool DecodePutRequestHead(std::string_view payload, PutRequestHead* out) {
  Reader r(payload);
  uint32_t n = 0;
  if (!r.U64(&out->ns) || !r.U32(&n)) return false;
  // Each item is at least key (17) + empty parent (1) + length (8) + crc (4) + meta_len (2).
  if (n > kMaxBatchItems || n > r.remaining() / (kMinKeyItemBytes + 15)) return false;
  out->items.clear();
  out->items.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    PutItem it;
    uint16_t meta_len = 0;
    if (!r.Key(&it.key) || !r.KeyOrEmpty(&it.parent) || !r.U64(&it.length) ||
        !r.U32(&it.crc32c) || !r.U16(&meta_len) || meta_len > kMaxBlockMetaBytes ||
        !r.Bytes(meta_len, &it.meta)) {
      return false;
    }
    out->items.push_back(it);
  }
  out->head_bytes = payload.size() - r.remaining();
  return true;
}

HeadScan ScanPutRequestHead(std::string_view in, size_t* bytes, PutHeadScanState* state) {
  PutHeadScanState local;
  PutHeadScanState& st = state ? *state : local;
  if (in.size() < 12) {
    *bytes = 12;
    return HeadScan::kNeedMore;
  }
  uint32_t n = static_cast<uint32_t>(GetLe(in.data() + 8, 4));
  if (n > kMaxBatchItems) return HeadScan::kMalformed;
  if (st.pos == 0) st.pos = 12;
  while (st.items_done < n) {
    size_t pos = st.pos;
    if (in.size() < pos + 1) {  // key length byte
      *bytes = pos + 1;
      return HeadScan::kNeedMore;
    }
    size_t klen = static_cast<unsigned char>(in[pos]);
    if (klen < kMinKeyBytes || klen > kMaxKeyBytes) return HeadScan::kMalformed;
    pos += 1 + klen;
    if (in.size() < pos + 1) {  // parent length byte
      *bytes = pos + 1;
      return HeadScan::kNeedMore;
    }
    size_t plen = static_cast<unsigned char>(in[pos]);
    if (plen != 0 && (plen < kMinKeyBytes || plen > kMaxKeyBytes)) return HeadScan::kMalformed;
    pos += 1 + plen + 8 + 4;
    if (in.size() < pos + 2) {  // meta length
      *bytes = pos + 2;
      return HeadScan::kNeedMore;
    }
    size_t mlen = GetLe(in.data() + pos, 2);
    if (mlen > kMaxBlockMetaBytes) return HeadScan::kMalformed;
    pos += 2 + mlen;
    if (in.size() < pos) {
      *bytes = pos;
      return HeadScan::kNeedMore;
    }
    st.pos = pos;
    ++st.items_done;
  }
  *bytes = st.pos;
  return HeadScan::kComplete;
}

bool PutBlockBytes(std::span<const PutItem> items, uint64_t* total) {
  uint64_t sum = 0;
  for (const PutItem& it : items) {
    if (it.length > std::numeric_limits<uint64_t>::max() - sum) return false;
    sum += it.length;
  }
  *total = sum;
  return true;
}

// ---- EVENTS ----------------------------------------------------------------

std::string EncodeEventsRequest(const EventsRequest& r) {
  std::string out;
  Writer w(&out);
  w.U64(r.ns);
  w.U64(r.since);
  w.U32(r.max_events);
  return out;
}

bool DecodeEventsRequest(std::string_view payload, EventsRequest* out) {
  Reader r(payload);
  return r.U64(&out->ns) && r.U64(&out->since) && r.U32(&out->max_events) && r.empty();
}

std::string EncodeEventsResponse(const EventsResponse& r) {
  assert(r.events.size() <= kMaxBatchItems);
  std::string out;
  Writer w(&out);
  w.U64(r.next);
  w.U64(r.lost);
  w.U32(static_cast<uint32_t>(r.events.size()));
  for (const Event& e : r.events) {
    w.U8(static_cast<uint8_t>(e.kind));
    w.Key(e.key);
    w.Key(e.parent);
  }
  return out;
}

bool DecodeEventsResponse(std::string_view payload, EventsResponse* out) {
  Reader r(payload);
  uint32_t n = 0;
  if (!r.U64(&out->next) || !r.U64(&out->lost) || !r.U32(&n)) return false;
  if (n > kMaxBatchItems || n > r.remaining() / (1 + kMinKeyItemBytes + 1)) return false;
  out->events.clear();
  out->events.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t kind = 0;
    std::string_view key, parent;
    if (!r.U8(&kind) || (kind != 1 && kind != 2) || !r.Key(&key) || !r.KeyOrEmpty(&parent)) {
      return false;
    }
    out->events.push_back({static_cast<EventKind>(kind), std::string(key), std::string(parent)});
  }
  return r.empty();
}

// ---- STATS -----------------------------------------------------------------

std::string EncodeNamespaceRequest(uint64_t ns) {
  std::string out;
  Writer(&out).U64(ns);
  return out;
}

bool DecodeNamespaceRequest(std::string_view payload, uint64_t* ns) {
  Reader r(payload);
  return r.U64(ns) && r.empty();
}

std::string EncodeStatsResponse(const NamespaceStats& s) {
  std::string out;
  Writer w(&out);
  for (uint64_t v : {s.blocks, s.bytes, s.hits, s.misses, s.bytes_served, s.bytes_requested,
                     s.evictions, s.lookups, s.lookup_keys, s.lookup_ns}) {
    w.U64(v);
  }
  return out;
}

bool DecodeStatsResponse(std::string_view payload, NamespaceStats* out) {
  Reader r(payload);
  return r.U64(&out->blocks) && r.U64(&out->bytes) && r.U64(&out->hits) && r.U64(&out->misses) &&
         r.U64(&out->bytes_served) && r.U64(&out->bytes_requested) && r.U64(&out->evictions) &&
         r.U64(&out->lookups) && r.U64(&out->lookup_keys) && r.U64(&out->lookup_ns) && r.empty();
}

}  // namespace strata::kvcache::proto
