// Queries over the audit trail, served by its indexes: records of one
// bucket ("Eb") or one identity ("Eu"), and a time range found by binary
// search over the seq (times never decrease along the trail), so a query
// reads the records it could return, not the whole trail.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "audit/record.h"
#include "common/status.h"
#include "meta/kv_store.h"

namespace strata::audit {

struct QueryFilter {
  int64_t from_ns = 0;  // time range, inclusive
  int64_t to_ns = std::numeric_limits<int64_t>::max();
  std::optional<std::string> identity;  // "" is the anonymous caller
  std::optional<std::string> bucket;
  std::string key_prefix;  // with or without bucket
  std::string operation;   // exact, "" any
  std::string result;      // "OK", an S3 error code, "error" (anything but OK), "" any
  std::string kind;        // change, request, denied, system; "" any
  size_t limit = 1000;
  uint64_t after_seq = 0;  // resume after this seq (a page's next_after)
};

struct QueryPage {
  std::vector<Record> records;
  uint64_t next_after = 0;  // non-zero: more may follow; pass as after_seq
};

// Validates the filter's words (kind); InvalidArgument otherwise.
Status CheckFilter(const QueryFilter& f);
Result<QueryPage> Query(meta::KvStore& kv, const QueryFilter& f);

}  // namespace strata::audit
