// libFuzzer target: what the audit trail parses (audit/record.h,
// audit/export.h). Control byte 0: the input is one stored record; what
// decodes must encode to bytes that decode to the same record, and
// PeekRecordNames must agree with it. Control byte 1: the input is an
// exported segment document, checked against an empty store under a fixed
// key: it may be refused, never crash; one that is accepted names a sound
// range. Control byte 2: the input is a posting list; what decodes is
// ascending and encodes back to the same bytes. Seeds: tests/fuzz/audit_trail/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "audit/export.h"
#include "audit/record.h"
#include "meta/mem_store.h"

using namespace strata;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 3 == 2) {
    auto seqs = audit::DecodePostings(in);
    if (!seqs.ok()) return 0;
    for (size_t i = 1; i < seqs->size(); ++i) {
      if ((*seqs)[i] <= (*seqs)[i - 1]) std::abort();
    }
    if (audit::EncodePostings(*seqs) != in) std::abort();
    return 0;
  }
  if (data[0] % 3 == 0) {
    auto r = audit::DecodeRecord(in);
    std::string_view identity, bucket;
    const bool peeked = audit::PeekRecordNames(in, &identity, &bucket);
    if (!r.ok()) return 0;
    if (!peeked || identity != r->identity || bucket != r->bucket) std::abort();
    const std::string again = audit::EncodeRecord(*r);
    auto back = audit::DecodeRecord(again);
    if (!back.ok() || audit::EncodeRecord(*back) != again) std::abort();
    (void)audit::RecordJson(*r);
    return 0;
  }
  static auto kv = meta::NewMemStore();
  audit::SegmentCheck c = audit::CheckSegment(*kv, "0123456789abcdef0123456789abcdef", in);
  if (c.ok() && (c.first == 0 || c.last < c.first)) std::abort();
  return 0;
}
