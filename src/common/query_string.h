// The query string of a request target, parsed once per request and read by
// both the router (which operation, its parameters) and auth (the canonical
// query of SigV4, the sub-resources and presign parameters of SigV2).
//
// '&'-separated parts, each "name", "name=" or "name=value"; empty parts are
// skipped. Names and values are percent-decoded with '+' as a space (form
// encoding, as S3 and the SDKs have it). Order and repeats are kept. A name
// or value with a broken %-escape keeps its raw text and its part is marked
// not `decoded`: the canonical forms then sign it as it was sent (so the
// signature fails unless the client signed the same bytes), and the router
// refuses the request.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

struct QueryParam {
  std::string name;
  std::string value;       // "" for a part without '='
  bool has_value = false;  // "name=..." rather than a bare "name" (sub-resource style)
  bool decoded = true;     // false: name and/or value failed to decode and are raw text
};

class QueryString {
 public:
  QueryString() = default;
  static QueryString Parse(std::string_view raw);

  const std::string& raw() const { return raw_; }  // as sent, without the '?'
  const std::vector<QueryParam>& params() const { return params_; }
  bool empty() const { return params_.empty(); }
  // True when some part did not decode.
  bool malformed() const { return malformed_; }

  // The value of the first parameter with this (decoded, case-sensitive) name.
  const std::string* Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  // The decoded (name, value) pairs in order, and the names given without '='.
  std::vector<std::pair<std::string, std::string>> Pairs() const;
  std::vector<std::string> ValuelessNames() const;

 private:
  std::string raw_;
  std::vector<QueryParam> params_;
  bool malformed_ = false;
};

}  // namespace strata
