// KvClient: blocking TCP client of the KV protocol. All framing comes from the
// shared codec (kvcache/proto/frame.h); this file only moves bytes.
//
// Copies: GET reads its 9-byte-per-item status table into a small vector and
// then recv()s every block straight into its destination; PUT sends the frame
// header + item table from one small string and the blocks from the caller's
// memory with sendmsg (scatter), never copying them.
#include "strata/kv_client.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

#include "common/net.h"
#include "kvcache/proto/frame.h"

namespace strata::kv {

namespace proto = strata::kvcache::proto;

// The wire status codes and KvCode agree value for value.
#define STRATA_KV_SAME_CODE(name, byte, text) static_assert(static_cast<int>(KvCode::name) == byte);
STRATA_KV_WIRE_STATUSES(STRATA_KV_SAME_CODE)
#undef STRATA_KV_SAME_CODE

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

using proto::Op;
using proto::WireStatus;

KvCode FromWire(WireStatus s) { return static_cast<KvCode>(s); }

KvStatus Invalid(std::string m) { return KvStatus(KvCode::kInvalid, std::move(m)); }

// Replies to requests other than GET are small; anything larger is a broken server.
constexpr uint64_t kMaxSmallReplyBytes = 64 << 10;
// How many items one frame may carry (the codec's bound).
constexpr size_t kMaxItems = proto::kMaxBatchItems;

KvStatus CheckKeys(std::span<const KeyView> keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!proto::ValidKey(keys[i])) {
      return Invalid("key " + std::to_string(i) + " has " + std::to_string(keys[i].size()) +
                     " bytes; keys are 16..32 bytes");
    }
  }
  return KvStatus::OK();
}

// A batch that failed as a whole: the items not yet answered carry its code.
template <typename Item>
KvStatus FailItems(std::span<Item> items, KvStatus s) {
  for (Item& it : items) {
    it.status = s.code();
    if constexpr (requires { it.bytes; }) it.bytes = 0;
  }
  return s;
}

std::vector<std::string_view> AsViews(std::span<const KeyView> keys) {
  return std::vector<std::string_view>(keys.begin(), keys.end());
}

}  // namespace

class KvClient::Impl {
 public:
  explicit Impl(int fd) : fd_(fd) {}
  ~Impl() { CloseLocked(); }

  std::mutex mu;

  bool connected() const { return fd_ >= 0; }
  void CloseLocked() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // One request/response exchange for the small ops. `reply` receives the
  // payload of an OK reply; a non-OK frame status becomes the returned code.
  KvStatus Call(Op op, std::string_view payload, uint64_t max_reply_bytes, std::string* reply) {
    if (fd_ < 0) return Closed();
    uint64_t id = next_id_++;
    std::string frame = FrameStart(op, id, payload.size());
    frame.append(payload);
    KvStatus s = SendAll(frame.data(), frame.size());
    if (!s.ok()) return s;
    proto::FrameHeader h;
    s = RecvHeader(op, id, &h);
    if (!s.ok()) return s;
    if (h.status != WireStatus::kOk) return RequestFailed(op, h);
    if (h.payload_len > max_reply_bytes) {
      return Broken(KvCode::kProtocolError, std::string(proto::OpName(op)) + " reply of " +
                                                std::to_string(h.payload_len) + " bytes");
    }
    reply->resize(h.payload_len);
    return RecvExact(reply->data(), reply->size());
  }

  KvStatus CallStatuses(Op op, std::string_view payload, size_t n, std::vector<KvCode>* out) {
    std::string reply;
    KvStatus s = Call(op, payload, n, &reply);
    if (!s.ok()) return s;
    std::vector<WireStatus> st;
    if (!proto::DecodeStatusList(reply, n, &st)) {
      return Broken(KvCode::kProtocolError, std::string(proto::OpName(op)) + " status list");
    }
    for (WireStatus w : st) out->push_back(FromWire(w));
    return KvStatus::OK();
  }

  // DELETE / PIN / UNPIN: keys in, one status per key out; one frame per
  // kMaxItems keys.
  KvStatus KeysOp(Op op, uint64_t ns, uint32_t ttl_ms, std::span<const KeyView> keys,
                  std::vector<KvCode>* statuses) {
    KvStatus s = CheckKeys(keys);
    if (!s.ok()) return s;
    statuses->clear();
    statuses->reserve(keys.size());
    for (size_t i = 0; i < keys.size(); i += kMaxItems) {
      size_t n = std::min(kMaxItems, keys.size() - i);
      auto views = AsViews(keys.subspan(i, n));
      std::string payload = op == Op::kPin ? proto::EncodePinRequest(ns, ttl_ms, views)
                                           : proto::EncodeKeysRequest(ns, views);
      s = CallStatuses(op, payload, n, statuses);
      if (!s.ok()) return s;
    }
    return KvStatus::OK();
  }

  // A reply that framed correctly but whose payload does not parse.
  KvStatus ProtocolError(std::string message) {
    return Broken(KvCode::kProtocolError, std::move(message));
  }

  // GET of one frame's worth of items (the caller splits big batches).
  KvStatus GetFrame(uint64_t ns, std::span<GetItem> items) {
    if (fd_ < 0) return Closed();
    std::vector<proto::GetItem> req(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      req[i].key = items[i].key;
      req[i].offset = items[i].offset;
      req[i].length = items[i].length;
    }
    uint64_t id = next_id_++;
    std::string payload = proto::EncodeGetRequest(ns, req);
    std::string frame = FrameStart(Op::kGet, id, payload.size());
    frame.append(payload);
    KvStatus s = SendAll(frame.data(), frame.size());
    if (!s.ok()) return s;

    proto::FrameHeader h;
    s = RecvHeader(Op::kGet, id, &h);
    if (!s.ok()) return s;
    if (h.status != WireStatus::kOk) return RequestFailed(Op::kGet, h);
    // The head: n x (status, length), read into a small table.
    uint64_t head_bytes = items.size() * proto::kGetResultBytes;
    if (h.payload_len < head_bytes) return Broken(KvCode::kProtocolError, "GET reply too short");
    std::string head(head_bytes, '\0');
    s = RecvExact(head.data(), head.size());
    if (!s.ok()) return s;
    std::vector<proto::GetResult> results;
    if (!proto::DecodeGetResponseHead(head, items.size(), &results)) {
      return Broken(KvCode::kProtocolError, "GET reply head");
    }
    uint64_t body = 0;
    for (const proto::GetResult& r : results) {
      if (r.length > h.payload_len) return Broken(KvCode::kProtocolError, "GET item length");
      body += r.length;
    }
    if (head_bytes + body != h.payload_len) {
      return Broken(KvCode::kProtocolError, "GET reply length disagrees with its items");
    }
    // The bytes of the OK items, in order, each straight into its destination.
    for (size_t i = 0; i < items.size(); ++i) {
      GetItem& it = items[i];
      it.status = FromWire(results[i].status);
      it.bytes = 0;
      if (results[i].status != WireStatus::kOk) continue;
      uint64_t len = results[i].length;
      if (len > it.dst_capacity) {
        it.status = KvCode::kBufferTooSmall;
        s = Discard(len);
      } else {
        s = RecvExact(it.dst, len);
        it.bytes = len;
      }
      if (!s.ok()) return s;
    }
    return KvStatus::OK();
  }

  // PUT of one frame's worth of items: header + item table, then the blocks
  // from the caller's memory in one scatter send.
  KvStatus PutFrame(uint64_t ns, std::span<PutItem> items) {
    if (fd_ < 0) return Closed();
    std::vector<proto::PutItem> req(items.size());
    uint64_t total = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      req[i].key = items[i].key;
      req[i].parent = items[i].parent;
      req[i].length = items[i].length;
      total += items[i].length;
    }
    uint64_t id = next_id_++;
    std::string head = proto::EncodePutRequestHead(ns, req);
    std::string frame = FrameStart(Op::kPut, id, head.size() + total);
    frame.append(head);
    std::vector<iovec> iov;
    iov.reserve(items.size() + 1);
    iov.push_back({frame.data(), frame.size()});
    for (const PutItem& it : items) {
      if (it.length) iov.push_back({const_cast<void*>(it.data), it.length});
    }
    KvStatus s = SendIov(iov);
    if (!s.ok()) return s;

    proto::FrameHeader h;
    s = RecvHeader(Op::kPut, id, &h);
    if (!s.ok()) return s;
    if (h.status != WireStatus::kOk) return RequestFailed(Op::kPut, h);
    if (h.payload_len != items.size()) {
      return Broken(KvCode::kProtocolError, "PUT reply has the wrong item count");
    }
    std::string reply(h.payload_len, '\0');
    s = RecvExact(reply.data(), reply.size());
    if (!s.ok()) return s;
    std::vector<WireStatus> st;
    if (!proto::DecodeStatusList(reply, items.size(), &st)) {
      return Broken(KvCode::kProtocolError, "PUT status list");
    }
    for (size_t i = 0; i < items.size(); ++i) items[i].status = FromWire(st[i]);
    return KvStatus::OK();
  }

 private:
  static KvStatus Closed() { return KvStatus(KvCode::kClosed, "connection is closed"); }

  // Closes the connection and returns the error: after a failed send/recv or
  // an unparsable reply the stream position is unknown.
  KvStatus Broken(KvCode code, std::string message) {
    CloseLocked();
    return KvStatus(code, std::move(message));
  }

  KvStatus Errno(const char* what) {
    int e = errno;
    if (e == EAGAIN || e == EWOULDBLOCK)
      return Broken(KvCode::kIoError, std::string(what) + ": timed out");
    return Broken(KvCode::kIoError, std::string(what) + ": " + std::strerror(e));
  }

  static std::string FrameStart(Op op, uint64_t id, uint64_t payload_len) {
    proto::FrameHeader h;
    h.op = op;
    h.request_id = id;
    h.payload_len = payload_len;
    std::string out;
    out.reserve(proto::kFrameHeaderBytes + 64);
    proto::AppendFrameHeader(h, &out);
    return out;
  }

  KvStatus SendAll(const void* data, size_t n) {
    std::vector<iovec> iov{{const_cast<void*>(data), n}};
    return SendIov(iov);
  }

  KvStatus SendIov(std::vector<iovec>& iov) {
    size_t first = 0;
    while (first < iov.size()) {
      msghdr msg{};
      msg.msg_iov = &iov[first];
      msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
      ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Errno("send");
      }
      // Advance past what went out.
      size_t sent = static_cast<size_t>(n);
      while (first < iov.size() && sent >= iov[first].iov_len) {
        sent -= iov[first].iov_len;
        ++first;
      }
      if (sent) {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + sent;
        iov[first].iov_len -= sent;
      }
    }
    return KvStatus::OK();
  }

  KvStatus RecvExact(void* buf, size_t n) {
    char* p = static_cast<char*>(buf);
    while (n > 0) {
      ssize_t r = ::recv(fd_, p, n, MSG_WAITALL);
      if (r < 0) {
        if (errno == EINTR) continue;
        return Errno("recv");
      }
      if (r == 0) return Broken(KvCode::kIoError, "connection closed by the server");
      p += r;
      n -= static_cast<size_t>(r);
    }
    return KvStatus::OK();
  }

  KvStatus Discard(uint64_t n) {
    char scratch[64 << 10];
    while (n > 0) {
      size_t chunk = std::min<uint64_t>(n, sizeof(scratch));
      KvStatus s = RecvExact(scratch, chunk);
      if (!s.ok()) return s;
      n -= chunk;
    }
    return KvStatus::OK();
  }

  KvStatus RecvHeader(Op op, uint64_t id, proto::FrameHeader* h) {
    char buf[proto::kFrameHeaderBytes];
    KvStatus s = RecvExact(buf, sizeof(buf));
    if (!s.ok()) return s;
    proto::HeaderCheck c = proto::DecodeFrameHeader(std::string_view(buf, sizeof(buf)), h);
    if (c != proto::HeaderCheck::kOk) return Broken(KvCode::kProtocolError, "bad reply header");
    if (h->op != op || h->request_id != id) {
      return Broken(KvCode::kProtocolError, "reply to request " + std::to_string(h->request_id) +
                                                " (" + std::string(proto::OpName(h->op)) +
                                                "), expected " + std::to_string(id) + " (" +
                                                std::string(proto::OpName(op)) + ")");
    }
    if (static_cast<uint8_t>(h->status) > proto::kMaxWireStatus) {
      return Broken(KvCode::kProtocolError, "unknown reply status");
    }
    return KvStatus::OK();
  }

  // A reply whose frame status says the whole request failed: skip its payload
  // (normally empty) and report the status.
  KvStatus RequestFailed(Op op, const proto::FrameHeader& h) {
    if (h.payload_len > kMaxSmallReplyBytes) {
      return Broken(KvCode::kProtocolError, "oversized error reply");
    }
    KvStatus s = Discard(h.payload_len);
    if (!s.ok()) return s;
    return KvStatus(FromWire(h.status), std::string(proto::OpName(op)) + " refused by the server");
  }

  int fd_ = -1;
  uint64_t next_id_ = 1;
};

KvClient::KvClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvClient::~KvClient() = default;

KvStatus KvClient::Connect(const ConnectOptions& options, std::unique_ptr<KvClient>* out) {
  if (options.access_key.size() > proto::kMaxStrBytes) return Invalid("access key too long");
  auto dialed = Dial(options.host, options.port,
                     static_cast<int>(std::min<uint32_t>(options.timeout_ms, INT_MAX)));
  if (!dialed.ok()) return KvStatus(KvCode::kIoError, dialed.status().message());
  int fd = *dialed;
  std::unique_ptr<KvClient> client(new KvClient(std::make_unique<Impl>(fd)));
  Impl& impl = *client->impl_;
  std::lock_guard<std::mutex> lock(impl.mu);
  std::string nonce;
  KvStatus s = impl.Call(Op::kHello, proto::EncodeHelloRequest(options.access_key),
                         proto::kNonceBytes, &nonce);
  if (!s.ok()) return s;
  if (nonce.size() != proto::kNonceBytes) {
    return impl.ProtocolError("HELLO reply is not a 32-byte nonce");
  }
  std::string mac = proto::ComputeAuthMac(options.secret_key, nonce, options.access_key);
  std::string empty;
  s = impl.Call(Op::kAuth, mac, 0, &empty);
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
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string reply;
  return impl_->Call(Op::kPing, {}, 0, &reply);
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
  std::string payload;
  if (!proto::EncodeNamespaceDescriptor(p, &payload)) {
    return Invalid("a namespace descriptor string exceeds 65535 bytes");
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string reply;
  KvStatus s = impl_->Call(Op::kOpenNamespace, payload, 8 + 32 + 2 + proto::kMaxStrBytes, &reply);
  if (!s.ok()) return s;
  proto::OpenNamespaceResponse r;
  if (!proto::DecodeOpenNamespaceResponse(reply, &r)) {
    return impl_->ProtocolError("OPEN_NAMESPACE reply");
  }
  info->handle = r.handle;
  std::copy(r.digest.begin(), r.digest.end(), info->digest.begin());
  info->bucket = std::move(r.bucket);
  return KvStatus::OK();
}

KvStatus KvClient::Lookup(uint64_t ns, std::span<const KeyView> keys, uint32_t* prefix_len) {
  KvStatus s = CheckKeys(keys);
  if (!s.ok()) return s;
  *prefix_len = 0;
  std::lock_guard<std::mutex> lock(impl_->mu);
  // One frame (one round trip) per kMaxItems keys; a miss ends the prefix.
  uint32_t total = 0;
  for (size_t i = 0; i < keys.size();) {
    size_t n = std::min(kMaxItems, keys.size() - i);
    auto views = AsViews(keys.subspan(i, n));
    std::string reply;
    s = impl_->Call(Op::kLookup, proto::EncodeKeysRequest(ns, views), 4, &reply);
    if (!s.ok()) return s;
    uint32_t hit = 0;
    if (!proto::DecodeLookupResponse(reply, &hit) || hit > n) {
      return impl_->ProtocolError("LOOKUP reply");
    }
    total += hit;
    i += n;
    if (hit < n) break;
  }
  *prefix_len = total;
  return KvStatus::OK();
}

KvStatus KvClient::Get(uint64_t ns, std::span<GetItem> items) {
  for (size_t i = 0; i < items.size(); ++i) {
    const GetItem& it = items[i];
    if (!proto::ValidKey(it.key)) return Invalid("GET item " + std::to_string(i) + ": bad key");
    if (!it.dst && it.dst_capacity) return Invalid("GET item " + std::to_string(i) + ": no dst");
    if (it.length > it.dst_capacity) {
      return Invalid("GET item " + std::to_string(i) + ": length exceeds dst_capacity");
    }
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  // Split so that no reply can exceed the frame limit: an item's reply is at
  // most its destination's capacity (longer ones are refused and skipped).
  size_t i = 0;
  while (i < items.size()) {
    size_t j = i;
    uint64_t bytes = 0;
    while (j < items.size() && j - i < kMaxItems) {
      uint64_t want = items[j].length ? items[j].length : items[j].dst_capacity;
      uint64_t add = want + proto::kGetResultBytes;
      if (j > i && bytes + add > proto::kMaxPayloadBytes) break;
      bytes += add;
      ++j;
    }
    KvStatus s = impl_->GetFrame(ns, items.subspan(i, j - i));
    if (!s.ok()) return FailItems(items.subspan(i), s);
    i = j;
  }
  return KvStatus::OK();
}

KvStatus KvClient::Put(uint64_t ns, std::span<PutItem> items) {
  for (size_t i = 0; i < items.size(); ++i) {
    const PutItem& it = items[i];
    if (!proto::ValidKey(it.key)) return Invalid("PUT item " + std::to_string(i) + ": bad key");
    if (!it.parent.empty() && !proto::ValidKey(it.parent)) {
      return Invalid("PUT item " + std::to_string(i) + ": bad parent key");
    }
    if (!it.data && it.length) return Invalid("PUT item " + std::to_string(i) + ": no data");
    if (it.length > proto::kMaxPayloadBytes / 2) {
      return Invalid("PUT item " + std::to_string(i) + ": block larger than 512 MiB");
    }
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  size_t i = 0;
  while (i < items.size()) {
    size_t j = i;
    uint64_t bytes = 12;
    while (j < items.size() && j - i < kMaxItems) {
      uint64_t add = items[j].length + 2 + items[j].key.size() + items[j].parent.size() + 8;
      if (j > i && bytes + add > proto::kMaxPayloadBytes) break;
      bytes += add;
      ++j;
    }
    KvStatus s = impl_->PutFrame(ns, items.subspan(i, j - i));
    if (!s.ok()) return FailItems(items.subspan(i), s);
    i = j;
  }
  return KvStatus::OK();
}

KvStatus KvClient::Delete(uint64_t ns, std::span<const KeyView> keys,
                          std::vector<KvCode>* statuses) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->KeysOp(Op::kDelete, ns, 0, keys, statuses);
}

KvStatus KvClient::Pin(uint64_t ns, uint32_t ttl_ms, std::span<const KeyView> keys,
                       std::vector<KvCode>* statuses) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->KeysOp(Op::kPin, ns, ttl_ms, keys, statuses);
}

KvStatus KvClient::Unpin(uint64_t ns, std::span<const KeyView> keys,
                         std::vector<KvCode>* statuses) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->KeysOp(Op::kUnpin, ns, 0, keys, statuses);
}

KvStatus KvClient::Stats(uint64_t ns, NamespaceStats* stats) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string reply;
  KvStatus s = impl_->Call(Op::kStats, proto::EncodeNamespaceRequest(ns), 64, &reply);
  if (!s.ok()) return s;
  proto::NamespaceStats p;
  if (!proto::DecodeStatsResponse(reply, &p)) {
    return impl_->ProtocolError("STATS reply");
  }
  *stats = NamespaceStats{p.blocks,       p.bytes,           p.hits,      p.misses,
                          p.bytes_served, p.bytes_requested, p.evictions, p.lookups};
  return KvStatus::OK();
}

void KvClient::Close() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->CloseLocked();
}

bool KvClient::connected() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->connected();
}

}  // namespace strata::kv
