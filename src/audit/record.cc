#include "audit/record.h"

#include "common/encoding.h"
#include "common/log.h"
#include "common/time_util.h"
#include "meta/keys.h"

namespace strata::audit {

namespace {

constexpr char kVersion = 1;

std::string Prefixed(char kind) { return std::string{meta::kAuditPrefix, kind}; }

std::string SeqKey(char kind, uint64_t seq) {
  std::string k = Prefixed(kind);
  PutFixed64BE(&k, seq);
  return k;
}

std::string NamedPrefix(char kind, std::string_view name) {
  std::string k = Prefixed(kind);
  k.append(name).push_back('\0');
  return k;
}

std::string NamedSeqKey(char kind, std::string_view name, uint64_t seq) {
  std::string k = NamedPrefix(kind, name);
  PutFixed64BE(&k, seq);
  return k;
}

}  // namespace

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kChange: return "change";
    case Kind::kRequest: return "request";
    case Kind::kDenied: return "denied";
    case Kind::kSystem: return "system";
  }
  return "unknown";
}

std::string EncodeRecord(const Record& r) {
  std::string out;
  out.reserve(18 + 3 * 10 + 8 + r.identity.size() + r.source.size() + r.request_id.size() +
              r.operation.size() + r.bucket.size() + r.key.size() + r.version.size() +
              r.result.size());
  out.push_back(kVersion);
  PutFixed64BE(&out, r.seq);
  PutFixed64BE(&out, static_cast<uint64_t>(r.time_ns));
  out.push_back(static_cast<char>(r.kind));
  PutVarint64(&out, static_cast<uint64_t>(r.http_status));
  PutVarint64(&out, r.bytes);
  PutVarint64(&out, r.part);
  for (const std::string* s : {&r.identity, &r.source, &r.request_id, &r.operation, &r.bucket,
                               &r.key, &r.version, &r.result}) {
    PutLengthPrefixed(&out, *s);
  }
  return out;
}

namespace {

// A record's fields as views into its bytes: the one parser of the format,
// for DecodeRecord and PeekRecordNames.
struct RecordFields {
  uint64_t seq = 0, time = 0, status = 0, bytes = 0, part = 0;
  uint8_t kind = 0;
  std::string_view text[8];  // identity, source, request_id, operation, bucket, key, version, result
};

Status ParseRecord(std::string_view in, RecordFields* f) {
  if (in.size() < 1 + 8 + 8 + 1 || in[0] != kVersion) return Corruption("audit record: bad header");
  f->seq = DecodeFixed64BE(in.data() + 1);
  f->time = DecodeFixed64BE(in.data() + 9);
  f->kind = static_cast<uint8_t>(in[17]);
  if (f->kind < 1 || f->kind > 4) return Corruption("audit record: bad kind");
  in.remove_prefix(18);
  if (!GetVarint64(&in, &f->status) || !GetVarint64(&in, &f->bytes) ||
      !GetVarint64(&in, &f->part) || f->status > 999 || f->part > UINT32_MAX) {
    return Corruption("audit record: bad numbers");
  }
  for (std::string_view& t : f->text) {
    if (!GetLengthPrefixed(&in, &t)) return Corruption("audit record: truncated");
  }
  if (!in.empty()) return Corruption("audit record: trailing bytes");
  return Status::OK();
}

}  // namespace

Result<Record> DecodeRecord(std::string_view in) {
  RecordFields f;
  RETURN_IF_ERROR(ParseRecord(in, &f));
  Record r;
  r.seq = f.seq;
  r.time_ns = static_cast<int64_t>(f.time);
  r.kind = static_cast<Kind>(f.kind);
  r.http_status = static_cast<int>(f.status);
  r.bytes = f.bytes;
  r.part = static_cast<uint32_t>(f.part);
  std::string* out[8] = {&r.identity, &r.source, &r.request_id, &r.operation,
                         &r.bucket,   &r.key,    &r.version,    &r.result};
  for (int i = 0; i < 8; ++i) out[i]->assign(f.text[i]);
  return r;
}

std::string RecordJson(const Record& r) {
  std::string out = "{\"seq\":" + std::to_string(r.seq) +
                    ",\"time\":" + JsonString(FormatIso8601(r.time_ns)) +
                    ",\"time_ns\":" + std::to_string(r.time_ns) +
                    ",\"kind\":" + JsonString(KindName(r.kind)) +
                    ",\"identity\":" + JsonString(r.identity) +
                    ",\"source\":" + JsonString(r.source) +
                    ",\"request_id\":" + JsonString(r.request_id) +
                    ",\"operation\":" + JsonString(r.operation) +
                    ",\"bucket\":" + JsonString(r.bucket) + ",\"key\":" + JsonString(r.key) +
                    ",\"version\":" + JsonString(r.version) +
                    ",\"result\":" + JsonString(r.result) +
                    ",\"http_status\":" + std::to_string(r.http_status) +
                    ",\"bytes\":" + std::to_string(r.bytes) + ",\"part\":" + std::to_string(r.part) +
                    "}";
  return out;
}

std::string RecordKey(uint64_t seq) { return SeqKey('r', seq); }
std::string RecordPrefix() { return Prefixed('r'); }
std::string HashKey(uint64_t seq) { return SeqKey('h', seq); }
std::string GapKey(uint64_t seq) { return SeqKey('g', seq); }
std::string CheckpointKey(uint64_t seq) { return SeqKey('c', seq); }
std::string CheckpointPrefix() { return Prefixed('c'); }
std::string SealStateKey() { return Prefixed('s'); }

std::string HashBlockKey(uint64_t first) { return SeqKey('H', first); }
std::string HashBlockPrefix() { return Prefixed('H'); }

std::string BucketPostingsPrefix(std::string_view bucket) { return NamedPrefix('B', bucket); }
std::string BucketPostingsKey(std::string_view bucket, uint64_t last) {
  return NamedSeqKey('B', bucket, last);
}
std::string IdentityPostingsPrefix(std::string_view identity) { return NamedPrefix('U', identity); }
std::string IdentityPostingsKey(std::string_view identity, uint64_t last) {
  return NamedSeqKey('U', identity, last);
}

std::string EncodePostings(const std::vector<uint64_t>& seqs) {
  std::string out;
  PutVarint64(&out, seqs.size());
  uint64_t prev = 0;
  for (uint64_t s : seqs) {
    PutVarint64(&out, s - prev);
    prev = s;
  }
  return out;
}

Result<std::vector<uint64_t>> DecodePostings(std::string_view in) {
  uint64_t n = 0;
  // Each delta takes at least one byte: a count past the bytes is a lie.
  if (!GetVarint64(&in, &n) || n > in.size()) return Corruption("audit postings: bad count");
  std::vector<uint64_t> seqs;
  seqs.reserve(n);
  uint64_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d = 0;
    if (!GetVarint64(&in, &d) || d == 0 || d > UINT64_MAX - prev) {
      return Corruption("audit postings: bad seq");
    }
    prev += d;
    seqs.push_back(prev);
  }
  if (!in.empty()) return Corruption("audit postings: trailing bytes");
  return seqs;
}

bool PeekRecordNames(std::string_view in, std::string_view* identity, std::string_view* bucket) {
  RecordFields f;
  if (!ParseRecord(in, &f).ok()) return false;
  *identity = f.text[0];
  *bucket = f.text[4];
  return true;
}

std::string BucketIndexPrefix(std::string_view bucket) { return NamedPrefix('b', bucket); }
std::string BucketIndexKey(std::string_view bucket, uint64_t seq) {
  return NamedSeqKey('b', bucket, seq);
}
std::string IdentityIndexPrefix(std::string_view identity) { return NamedPrefix('u', identity); }
std::string IdentityIndexKey(std::string_view identity, uint64_t seq) {
  return NamedSeqKey('u', identity, seq);
}

bool SeqOfKey(std::string_view key, uint64_t* seq) {
  if (key.size() < 2 + 8) return false;
  *seq = DecodeFixed64BE(key.data() + key.size() - 8);
  return true;
}

}  // namespace strata::audit
