// A Session: I/O, the frame loop, authentication, namespaces, LOOKUP and
// STATS (session_blocks.cc: GET, PUT, DELETE, PIN).
#include "kvcache/session.h"

#include <algorithm>
#include <cstring>

#include "common/hash.h"
#include "common/log.h"
#include "common/time_util.h"
#include "energy/meter.h"

namespace strata::kvcache {

using proto::FrameHeader;
using proto::Op;
using proto::WireStatus;

namespace {

constexpr size_t kInputBufferBytes = 256 * 1024;
// Before authentication a frame is at most a header and kPreAuthMaxPayloadBytes.
constexpr size_t kPreAuthBufferBytes = 512;
static_assert(proto::kFrameHeaderBytes + kPreAuthMaxPayloadBytes <= kPreAuthBufferBytes);
constexpr size_t kFlushAtBytes = 256 * 1024;
// Frames served in one turn before the connection queues behind others
// (checked when nothing is buffered, so the turn ends with the buffer empty).
constexpr int kFramesPerTurn = 64;

bool SameBytes(std::string_view a, std::string_view b) {  // constant time in the content
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

Session::Session(const ServerContext* ctx, Connection* conn)
    : ctx_(ctx), conn_(conn), address_(conn->peer_address()) {
  conn_->SetIoTimeout(ctx_->options.stall_timeout_ms);
}

// ---- I/O ---------------------------------------------------------------------

size_t Session::buffered_capacity() const {
  const size_t inline_chars = std::string().capacity();  // no allocation up to this
  auto heap = [inline_chars](const std::string& s) {
    return s.capacity() > inline_chars ? s.capacity() : 0;
  };
  return in_cap_ + heap(out_) + heap(payload_) + (chunk_ ? ctx_->options.io_chunk_bytes : 0);
}

void Session::EnsureInput(size_t capacity) {
  if (in_cap_ >= capacity) return;
  auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
  if (in_end_ > in_pos_) std::memcpy(bigger.get(), in_.get() + in_pos_, in_end_ - in_pos_);
  in_end_ -= in_pos_;
  in_pos_ = 0;
  in_ = std::move(bigger);
  in_cap_ = capacity;
}

Result<size_t> Session::ReadMore() {
  if (in_pos_ == in_end_) {
    in_pos_ = in_end_ = 0;
  } else if (in_end_ == in_cap_) {
    std::memmove(in_.get(), in_.get() + in_pos_, in_end_ - in_pos_);
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  if (in_end_ == in_cap_) return Internal("kv session: input buffer full");  // a bug
  ASSIGN_OR_RETURN(size_t r, conn_->ReadSome(in_.get() + in_end_, in_cap_ - in_end_));
  in_end_ += r;
  return r;
}

void Session::ReleaseBuffers() {
  if (in_pos_ == in_end_) {
    in_.reset();
    in_cap_ = in_pos_ = in_end_ = 0;
  }
  std::string().swap(out_);
  std::string().swap(payload_);
  chunk_.reset();
}

Status Session::Flush() {
  if (out_.empty()) return Status::OK();
  Status st = conn_->WriteAll(std::string_view(out_));
  out_.clear();
  return st;
}

Result<std::string_view> Session::ReadView(size_t max) {
  if (in_pos_ == in_end_) {
    RETURN_IF_ERROR(Flush());  // about to block: let pipelined replies out first
    EnsureInput(authenticated_ ? kInputBufferBytes : kPreAuthBufferBytes);
    ASSIGN_OR_RETURN(size_t r, ReadMore());
    if (r == 0) return Aborted("connection closed by peer");
  }
  size_t n = std::min(max, in_end_ - in_pos_);
  std::string_view v(in_.get() + in_pos_, n);
  in_pos_ += n;
  return v;
}

Status Session::ReadExact(char* dst, size_t n) {
  size_t take = std::min(n, in_end_ - in_pos_);
  if (take > 0) std::memcpy(dst, in_.get() + in_pos_, take);
  in_pos_ += take;
  dst += take;
  n -= take;
  if (n == 0) return Status::OK();
  RETURN_IF_ERROR(Flush());
  if (n >= kInputBufferBytes) return conn_->ReadFull(dst, n);  // large: straight to the destination
  while (n > 0) {
    ASSIGN_OR_RETURN(std::string_view v, ReadView(n));
    std::memcpy(dst, v.data(), v.size());
    dst += v.size();
    n -= v.size();
  }
  return Status::OK();
}

Status Session::Skip(uint64_t n) {
  while (n > 0) {
    ASSIGN_OR_RETURN(std::string_view v, ReadView(std::min<uint64_t>(n, kInputBufferBytes)));
    n -= v.size();
  }
  return Status::OK();
}

void Session::Reply(const FrameHeader& req, WireStatus status, std::string_view payload) {
  FrameHeader h;
  h.version = req.version;  // a refused version is answered in its own (kBadVersion)
  h.op = req.op;
  h.status = status;
  h.request_id = req.request_id;
  h.payload_len = payload.size();
  proto::AppendFrameHeader(h, &out_);
  out_.append(payload);
  if (out_.size() >= kFlushAtBytes) Flush().IgnoreError();  // a failed write shows on the next one
}

Namespace* Session::Lookup(uint64_t handle) const {
  if (handle == 0 || handle > handles_.size()) return nullptr;
  op_ns_ = handles_[handle - 1];
  return op_ns_;
}

// ---- the frame loop ----------------------------------------------------------

Result<Session::Turn> Session::ServeTurn() {
  for (int frames = 0;; ++frames) {
    if (!authenticated_) {
      ASSIGN_OR_RETURN(Gather g, GatherPreAuthFrame());
      if (g != Gather::kFrame) {
        RETURN_IF_ERROR(Flush());
        ReleaseBuffers();  // keeps a partial frame's bytes (small)
        if (g == Gather::kEnd) return Turn::kEnd;
        return Turn::kPark;
      }
      if (++pre_auth_frames_ > kPreAuthMaxFrames) {
        RETURN_IF_ERROR(Flush());
        return PermissionDenied("too many frames before authentication");
      }
    } else if (in_pos_ == in_end_) {  // a clean end of stream is only allowed between frames
      RETURN_IF_ERROR(Flush());
      bool readable = false;
      if (frames < kFramesPerTurn) {
        ASSIGN_OR_RETURN(readable, conn_->WaitReadable(0));
      }
      if (!readable) {
        ReleaseBuffers();
        return Turn::kPark;
      }
      EnsureInput(kInputBufferBytes);
      ASSIGN_OR_RETURN(size_t r, ReadMore());
      if (r == 0) return Turn::kEnd;
    }
    RETURN_IF_ERROR(ServeFrame());
  }
}

// Reads only what is available: a worker never waits on an unauthenticated
// client. kFrame once a whole frame is buffered, or a header that settles the
// frame's fate alone (bad, or too large before authentication).
Result<Session::Gather> Session::GatherPreAuthFrame() {
  while (true) {
    const size_t have = in_end_ - in_pos_;
    if (have >= proto::kFrameHeaderBytes) {
      FrameHeader h;
      auto check = proto::DecodeFrameHeader(
          std::string_view(in_.get() + in_pos_, proto::kFrameHeaderBytes), &h);
      if (check != proto::HeaderCheck::kOk || h.payload_len > kPreAuthMaxPayloadBytes ||
          have >= proto::kFrameHeaderBytes + h.payload_len) {
        return Gather::kFrame;
      }
    }
    ASSIGN_OR_RETURN(bool readable, conn_->WaitReadable(0));
    if (!readable) return Gather::kPartial;
    EnsureInput(kPreAuthBufferBytes);
    ASSIGN_OR_RETURN(size_t r, ReadMore());
    if (r == 0) {
      if (have == 0) return Gather::kEnd;
      return Aborted("connection closed mid-frame");
    }
  }
}

Status Session::ServeFrame() {
  char raw[proto::kFrameHeaderBytes];
  RETURN_IF_ERROR(ReadExact(raw, sizeof(raw)));
  FrameHeader h;
  switch (proto::DecodeFrameHeader(std::string_view(raw, sizeof(raw)), &h)) {
    case proto::HeaderCheck::kOk:
      break;
    case proto::HeaderCheck::kBadMagic:
      return InvalidArgument("bad frame magic");
    case proto::HeaderCheck::kBadVersion:
    case proto::HeaderCheck::kTooLarge:
    case proto::HeaderCheck::kTruncated:
      Reply(h, WireStatus::kInvalid);
      RETURN_IF_ERROR(Flush());
      return InvalidArgument("bad frame version or size");
  }
  if (!authenticated_ && h.payload_len > kPreAuthMaxPayloadBytes) {
    Reply(h, WireStatus::kDenied);
    RETURN_IF_ERROR(Flush());
    return PermissionDenied("large frame before authentication");
  }
  return Dispatch(h);
}

Status Session::Dispatch(const FrameHeader& h) {
  energy::Meter* meter = ctx_->options.energy;
  if (!meter) return DispatchOp(h);
  const double cpu = energy::ThreadCpuSeconds();
  op_ns_ = nullptr;
  op_bytes_ = h.payload_len;
  Status st = DispatchOp(h);
  if (op_ns_) {
    meter->Record({{energy::WorkloadKind::kKvNamespace, op_ns_->bucket()}},
                  energy::ThreadCpuSeconds() - cpu, op_bytes_);
  }
  return st;
}

Status Session::DispatchOp(const FrameHeader& h) {
  const uint8_t op = static_cast<uint8_t>(h.op);
  if (!proto::IsKnownOp(op)) {
    RETURN_IF_ERROR(Skip(h.payload_len));
    Reply(h, WireStatus::kInvalid);
    return Status::OK();
  }
  const bool open_op = h.op == Op::kHello || h.op == Op::kAuth || h.op == Op::kPing;
  if (!authenticated_ && !open_op) {
    RETURN_IF_ERROR(Skip(h.payload_len));
    Reply(h, WireStatus::kDenied);
    return Status::OK();
  }
  if (h.op == Op::kPut) return HandlePut(h);  // streams its block bytes
  if (h.payload_len > kMaxRequestPayloadBytes) {
    RETURN_IF_ERROR(Skip(h.payload_len));
    Reply(h, WireStatus::kTooLarge);
    return Status::OK();
  }
  payload_.resize(h.payload_len);
  RETURN_IF_ERROR(ReadExact(payload_.data(), payload_.size()));
  std::string_view p(payload_);
  switch (h.op) {
    case Op::kHello:
      return HandleHello(h, p);
    case Op::kAuth:
      return HandleAuth(h, p);
    case Op::kPing:
      Reply(h, WireStatus::kOk);
      break;
    case Op::kOpenNamespace:
      HandleOpen(h, p);
      break;
    case Op::kLookup:
      HandleLookup(h, p);
      break;
    case Op::kLookupEach:
      HandleLookupEach(h, p);
      break;
    case Op::kEvents:
      HandleEvents(h, p);
      break;
    case Op::kGet:
      return HandleGet(h, p);
    case Op::kDelete:
      HandleDelete(h, p);
      break;
    case Op::kStats:
      HandleStats(h, p);
      break;
    case Op::kPin:
      HandlePin(h, p, true);
      break;
    case Op::kUnpin:
      HandlePin(h, p, false);
      break;
    case Op::kPut:
      break;  // handled above
  }
  return Status::OK();
}

// ---- HELLO / AUTH ------------------------------------------------------------

Status Session::RefuseIfThrottled(const FrameHeader& h) {
  if (!ctx_->throttle->Blocked(address_, ctx_->NowNs())) return Status::OK();
  Reply(h, WireStatus::kDenied);
  RETURN_IF_ERROR(Flush());
  return PermissionDenied("AUTH back-off for " + address_);
}

Status Session::HandleHello(const FrameHeader& h, std::string_view payload) {
  std::string_view ak;
  if (authenticated_ || !proto::DecodeHelloRequest(payload, &ak)) {
    Reply(h, WireStatus::kInvalid);
    return Status::OK();
  }
  RETURN_IF_ERROR(RefuseIfThrottled(h));
  // Unknown access keys get a challenge too: AUTH fails for them like for a bad MAC.
  access_key_.assign(ak);
  nonce_ = RandomBytes(proto::kNonceBytes);
  Reply(h, WireStatus::kOk, nonce_);
  return Status::OK();
}

Status Session::HandleAuth(const FrameHeader& h, std::string_view payload) {
  if (authenticated_ || nonce_.empty() || payload.size() != proto::kMacBytes) {
    Reply(h, WireStatus::kInvalid);
    return Status::OK();
  }
  RETURN_IF_ERROR(RefuseIfThrottled(h));
  std::optional<std::string> secret = ctx_->secrets(access_key_);
  std::string expect =
      proto::ComputeAuthMac(secret ? *secret : std::string(32, '\0'), nonce_, access_key_);
  nonce_.clear();  // one try per challenge
  if (!secret || !SameBytes(expect, payload)) {
    ctx_->throttle->RecordFailure(address_, ctx_->NowNs());
    Reply(h, WireStatus::kAuthFailed);
    if (++auth_failures_ >= ctx_->options.auth_failures_per_connection) {
      RETURN_IF_ERROR(Flush());
      return PermissionDenied("too many failed AUTHs from " + address_);
    }
    return Status::OK();
  }
  authenticated_ = true;
  identity_ = access_key_;
  Reply(h, WireStatus::kOk);
  return Status::OK();
}

// ---- namespaces, LOOKUP, STATS -----------------------------------------------

void Session::HandleOpen(const FrameHeader& h, std::string_view payload) {
  proto::NamespaceDescriptor d;
  if (!proto::DecodeNamespaceDescriptor(payload, &d)) {
    Reply(h, WireStatus::kInvalid);
    return;
  }
  NamespaceRights rights;  // without a policy hook: all, for the owner and operators
  bool any_owner = ctx_->IsOperator(identity_);
  if (ctx_->options.namespace_rights) {
    rights = ctx_->options.namespace_rights(
        identity_, proto::NamespaceBucket(proto::NamespaceDigest(d)), address_);
    // Nothing is created for an identity that may not use the namespace, and
    // only an admin of it changes its quota or TTL.
    if (!rights.any() || (!rights.admin && (d.quota_bytes != 0 || d.ttl_s != 0))) {
      Reply(h, WireStatus::kDenied);
      return;
    }
    any_owner = true;  // the policy said who may open it
  }
  auto ns = ctx_->registry->Open(d, identity_, any_owner);
  if (!ns.ok()) {
    if (ns.status().code() == Code::kPermissionDenied) {
      Reply(h, WireStatus::kDenied);
    } else {
      STRATA_LOG("kv: open namespace: %s", ns.status().ToString().c_str());
      Reply(h, WireStatus::kUnavailable);
    }
    return;
  }
  auto manifest = ctx_->registry->Manifest(*ns, d.manifest);
  if (!manifest.ok()) {
    STRATA_LOG("kv: namespace manifest: %s", manifest.status().ToString().c_str());
    Reply(h, WireStatus::kUnavailable);
    return;
  }
  auto [it, added] = handle_of_.try_emplace(*ns, handles_.size() + 1);
  if (added) {
    handles_.push_back(*ns);
    rights_.push_back(rights);
  } else {
    rights_[it->second - 1] = rights;
  }
  proto::OpenNamespaceResponse r;
  r.handle = it->second;
  r.digest = (*ns)->digest();
  r.bucket = (*ns)->bucket();
  r.manifest_matches = d.manifest.empty() || d.manifest == *manifest;
  r.manifest = std::move(*manifest);
  Reply(h, WireStatus::kOk, proto::EncodeOpenNamespaceResponse(r));
}

Namespace* Session::Resolve(const FrameHeader& h, bool decoded, uint64_t handle, Need need) {
  if (!decoded) {
    Reply(h, WireStatus::kInvalid);
    return nullptr;
  }
  Namespace* ns = Lookup(handle);
  if (ns == nullptr) {
    Reply(h, WireStatus::kNotFound);
    return nullptr;
  }
  const NamespaceRights& r = rights_[handle - 1];
  if (!(need == Need::kRead ? r.read : r.write)) {
    Reply(h, WireStatus::kDenied);
    return nullptr;
  }
  return ns;
}

Namespace* Session::DecodeKeys(const FrameHeader& h, std::string_view payload,
                               proto::KeysRequest* req, Need need) {
  bool decoded = proto::DecodeKeysRequest(payload, req);
  return Resolve(h, decoded, req->ns, need);
}

void Session::HandleLookup(const FrameHeader& h, std::string_view payload) {
  const uint64_t start = static_cast<uint64_t>(SteadyNowNs());
  proto::KeysRequest req;
  Namespace* ns = DecodeKeys(h, payload, &req, Need::kRead);
  if (ns == nullptr) return;
  size_t n;
  {
    std::lock_guard<std::mutex> lock(ns->mu);
    n = ns->index.PrefixLength(req.keys);
  }
  Reply(h, WireStatus::kOk, proto::EncodeLookupResponse(static_cast<uint32_t>(n)));
  CountLookup(ns, req.keys.size(), start);
}

void Session::HandleLookupEach(const FrameHeader& h, std::string_view payload) {
  const uint64_t start = static_cast<uint64_t>(SteadyNowNs());
  proto::KeysRequest req;
  Namespace* ns = DecodeKeys(h, payload, &req, Need::kRead);
  if (ns == nullptr) return;
  std::vector<bool> present(req.keys.size());
  {
    std::lock_guard<std::mutex> lock(ns->mu);
    for (size_t i = 0; i < req.keys.size(); ++i) present[i] = ns->index.Find(req.keys[i]).has_value();
  }
  Reply(h, WireStatus::kOk, proto::EncodeLookupEachResponse(present));
  CountLookup(ns, req.keys.size(), start);
}

// A probe's counters: one request, its keys, and the server time since `start`.
void Session::CountLookup(Namespace* ns, size_t keys, uint64_t start) {
  ns->lookups.fetch_add(1, std::memory_order_relaxed);
  ns->lookup_keys.fetch_add(keys, std::memory_order_relaxed);
  ns->lookup_ns.fetch_add(static_cast<uint64_t>(SteadyNowNs()) - start, std::memory_order_relaxed);
}

void Session::HandleEvents(const FrameHeader& h, std::string_view payload) {
  proto::EventsRequest req;
  bool decoded = proto::DecodeEventsRequest(payload, &req);
  Namespace* ns = Resolve(h, decoded, req.ns, Need::kRead);
  if (ns == nullptr) return;
  Reply(h, WireStatus::kOk, proto::EncodeEventsResponse(ns->events.Read(req.since, req.max_events)));
}

void Session::HandleStats(const FrameHeader& h, std::string_view payload) {
  uint64_t handle = 0;
  bool decoded = proto::DecodeNamespaceRequest(payload, &handle);
  Namespace* ns = Resolve(h, decoded, handle, Need::kRead);
  if (ns == nullptr) return;
  proto::NamespaceStats s;
  {
    std::lock_guard<std::mutex> lock(ns->mu);
    s.blocks = ns->index.blocks();
    s.bytes = ns->index.bytes();
  }
  s.hits = ns->hits.load();
  s.misses = ns->misses.load();
  s.bytes_served = ns->bytes_served.load();
  s.bytes_requested = ns->bytes_requested.load();
  s.evictions = ns->evictions.load();
  s.lookups = ns->lookups.load();
  s.lookup_keys = ns->lookup_keys.load();
  s.lookup_ns = ns->lookup_ns.load();
  Reply(h, WireStatus::kOk, proto::EncodeStatsResponse(s));
}

}  // namespace strata::kvcache
