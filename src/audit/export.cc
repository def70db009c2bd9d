#include "audit/export.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "audit/chain.h"
#include "audit/record.h"
#include "common/encoding.h"
#include "meta/keys.h"

namespace strata::audit {

namespace {

Result<std::string> Must(meta::KvStore& kv, const std::string& key, const char* what,
                         uint64_t seq) {
  ASSIGN_OR_RETURN(auto v, kv.Get(key));
  if (!v) return NotFound(std::string(what) + " of seq " + std::to_string(seq) + " is missing");
  return std::move(*v);
}

// Whole numbers only: nlohmann converts a float (1e64) to an integer type
// with a plain cast, undefined out of range; so the type is checked first.
bool Unsigned(const nlohmann::json& j, const char* k, uint64_t* out) {
  auto it = j.find(k);
  if (it == j.end() || !it->is_number_unsigned()) return false;
  *out = it->get<uint64_t>();
  return true;
}
bool Signed(const nlohmann::json& j, const char* k, int64_t* out) {
  auto it = j.find(k);
  if (it == j.end() || !it->is_number_integer()) return false;
  *out = it->get<int64_t>();
  return true;
}
bool Text(const nlohmann::json& j, const char* k, std::string* out) {
  auto it = j.find(k);
  if (it == j.end() || !it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

}  // namespace

std::string ExportedSeqKey() { return std::string{meta::kAuditPrefix, 'x'}; }

Result<uint64_t> LoadExportedSeq(meta::KvStore& kv) {
  ASSIGN_OR_RETURN(auto v, kv.Get(ExportedSeqKey()));
  if (!v) return uint64_t{0};
  if (v->size() != 8) return Corruption("audit export state: bad size");
  return DecodeFixed64BE(v->data());
}

std::string SegmentObjectName(uint64_t first, uint64_t last) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "segments/%020llu-%020llu.jsonl",
                static_cast<unsigned long long>(first), static_cast<unsigned long long>(last));
  return buf;
}

Result<std::string> RenderSegment(meta::KvStore& kv, uint64_t first, uint64_t last) {
  if (first == 0 || last < first) return InvalidArgument("empty segment");
  // hash(first - 1) .. hash(last).
  ASSIGN_OR_RETURN(std::vector<std::string> hashes, LoadChainHashes(kv, first - 1, last));
  const std::string& prev = hashes[0];
  ASSIGN_OR_RETURN(std::string cp_raw, Must(kv, CheckpointKey(last), "the checkpoint", last));
  ASSIGN_OR_RETURN(Checkpoint cp, DecodeCheckpoint(last, cp_raw));
  std::string out = nlohmann::json{{"segment", 1}, {"first", first}, {"last", last},
                                   {"prev_hash", HexEncode(prev)}}
                        .dump() +
                    "\n";
  for (uint64_t s = first; s <= last; ++s) {
    const std::string& hash = hashes[s - first + 1];
    ASSIGN_OR_RETURN(auto raw, kv.Get(RecordKey(s)));
    if (raw) {
      out += "{\"seq\":" + std::to_string(s) + ",\"hash\":\"" + HexEncode(hash) +
             "\",\"raw\":\"" + Base64Encode(*raw) + "\",\"record\":";
      auto r = DecodeRecord(*raw);
      out += r.ok() ? RecordJson(*r) : "null";
      out += "}\n";
    } else {
      out += "{\"seq\":" + std::to_string(s) + ",\"hash\":\"" + HexEncode(hash) +
             "\",\"gap\":true}\n";
    }
  }
  out += nlohmann::json{{"checkpoint",
                         {{"seq", cp.seq}, {"time_ns", cp.time_ns}, {"hash", HexEncode(cp.hash)},
                          {"mac", HexEncode(cp.mac)}}}}
             .dump() +
         "\n";
  return out;
}

SegmentCheck CheckSegment(meta::KvStore& kv, std::string_view key, std::string_view doc) {
  SegmentCheck c;
  auto fail = [&](std::string why) {
    c.problem = std::move(why);
    return c;
  };
  std::string prev;
  uint64_t expected = 0;
  bool header = false, closed = false;
  size_t at = 0;
  while (at < doc.size()) {
    size_t nl = doc.find('\n', at);
    if (nl == std::string_view::npos) return fail("the segment does not end with a newline");
    std::string_view line = doc.substr(at, nl - at);
    at = nl + 1;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail("a line is not a JSON object");
    if (closed) return fail("lines after the checkpoint");
    if (!header) {
      uint64_t version = 0;
      std::string prev_hex;
      if (!Unsigned(j, "segment", &version) || version != 1) {
        return fail("not a segment (no header line)");
      }
      if (!Unsigned(j, "first", &c.first) || !Unsigned(j, "last", &c.last) ||
          !Text(j, "prev_hash", &prev_hex)) {
        return fail("a bad header");
      }
      auto p = HexDecode(prev_hex);
      if (!p || p->size() != kHashBytes || c.first == 0 || c.last < c.first) {
        return fail("a bad header");
      }
      prev = *p;
      expected = c.first;
      header = true;
      // Where the store still holds the hash before the segment, they agree.
      if (c.first > 1) {
        auto stored = LoadChainHash(kv, c.first - 1);
        if (stored.ok() && *stored && **stored != prev) {
          return fail("its start does not continue the trail's chain");
        }
      }
      continue;
    }
    if (auto cp = j.find("checkpoint"); cp != j.end()) {
      uint64_t seq = 0;
      int64_t time_ns = 0;
      std::string hash_hex, mac_hex;
      if (!cp->is_object() || !Unsigned(*cp, "seq", &seq) || !Signed(*cp, "time_ns", &time_ns) ||
          !Text(*cp, "hash", &hash_hex) || !Text(*cp, "mac", &mac_hex)) {
        return fail("a malformed checkpoint line");
      }
      auto hash = HexDecode(hash_hex);
      auto mac = HexDecode(mac_hex);
      if (seq != c.last || expected != c.last + 1) return fail("the records do not reach its end");
      if (!hash || *hash != prev) return fail("the checkpoint does not sign these records");
      if (!mac || *mac != CheckpointMac(key, seq, time_ns, *hash)) {
        return fail("the checkpoint's MAC is wrong");
      }
      closed = true;
      continue;
    }
    uint64_t seq = 0;
    std::string hash_hex;
    if (!Unsigned(j, "seq", &seq) || !Text(j, "hash", &hash_hex)) {
      return fail("a line lacks seq or hash");
    }
    if (seq != expected) return fail("seq " + std::to_string(expected) + " is missing or moved");
    std::string h;
    auto gap = j.find("gap");
    if (gap != j.end() && gap->is_boolean() && gap->get<bool>()) {
      h = GapHash(prev, seq);
    } else {
      std::string raw_b64;
      if (!Text(j, "raw", &raw_b64)) return fail("record " + std::to_string(seq) + " has no raw");
      auto raw = Base64Decode(raw_b64);
      if (!raw) return fail("record " + std::to_string(seq) + " has bad base64");
      h = ChainHash(prev, *raw);
      auto stored = kv.Get(RecordKey(seq));
      if (stored.ok() && *stored && **stored != *raw) {
        return fail("record " + std::to_string(seq) + " differs from the trail's");
      }
    }
    auto want = HexDecode(hash_hex);
    if (!want || *want != h) return fail("record " + std::to_string(seq) + " breaks the chain");
    auto stored = LoadChainHash(kv, seq);
    if (stored.ok() && *stored && **stored != h) {
      return fail("record " + std::to_string(seq) + " differs from the trail's chain");
    }
    prev = h;
    if (expected == UINT64_MAX) return fail("seq overflows");
    ++expected;
  }
  if (!header) return fail("empty");
  if (!closed) return fail("no checkpoint at the end (cut short)");
  return c;
}

}  // namespace strata::audit
