#include "s3/post_policy.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "common/encoding.h"
#include "common/time_util.h"

namespace strata::s3 {

namespace {

constexpr size_t kReadChunk = 256 * 1024;
constexpr size_t kMaxPaddingBytes = 256;  // blanks allowed after a boundary

Error Malformed(std::string detail = {}) {
  return MakeError(ErrorCode::kMalformedPOSTRequest,
                   detail.empty() ? std::string()
                                  : "The body of your POST request is not well-formed "
                                    "multipart/form-data: " + detail);
}

Error NoFile() {
  return MakeError(ErrorCode::kInvalidArgument, "POST requires exactly one file upload per request.");
}

// Parameters of a header value "type; a=b; c=\"d\"" (names lowercased).
struct HeaderParams {
  std::string type;
  std::vector<std::pair<std::string, std::string>> params;
  const std::string* Get(std::string_view name) const {
    for (const auto& [k, v] : params) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

HeaderParams ParseHeaderParams(std::string_view s) {
  HeaderParams out;
  size_t i = s.find(';');
  out.type = AsciiLower(TrimBlanks(s.substr(0, i)));
  if (i == std::string_view::npos) return out;
  ++i;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ';')) ++i;
    if (i >= s.size()) break;
    size_t name_end = i;
    while (name_end < s.size() && s[name_end] != '=' && s[name_end] != ';') ++name_end;
    std::string name = AsciiLower(TrimBlanks(s.substr(i, name_end - i)));
    i = name_end;
    std::string value;
    if (i < s.size() && s[i] == '=') {
      ++i;
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
      if (i < s.size() && s[i] == '"') {
        ++i;
        while (i < s.size() && s[i] != '"') {
          // Escapes only for '"' and '\': browsers send Windows paths unescaped.
          if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\')) ++i;
          value.push_back(s[i++]);
        }
        if (i < s.size()) ++i;  // closing quote
        while (i < s.size() && s[i] != ';') ++i;
      } else {
        size_t end = s.find(';', i);
        if (end == std::string_view::npos) end = s.size();
        value = std::string(TrimBlanks(s.substr(i, end - i)));
        i = end;
      }
    }
    if (!name.empty()) out.params.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

// RFC 5987 ext-value: charset'language'percent-encoded.
std::optional<std::string> DecodeExtValue(std::string_view v) {
  size_t q1 = v.find('\'');
  if (q1 == std::string_view::npos) return std::nullopt;
  size_t q2 = v.find('\'', q1 + 1);
  if (q2 == std::string_view::npos) return std::nullopt;
  return UriDecode(v.substr(q2 + 1));
}

bool IsBoundaryChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

Error PolicyError(const std::string& detail) {
  return MakeError(ErrorCode::kInvalidPolicyDocument, "Invalid Policy: " + detail);
}

Error AccessDeniedPolicy(const std::string& detail) {
  return MakeError(ErrorCode::kAccessDenied, "Invalid according to Policy: " + detail);
}

// A condition value: a string, or a number written as its decimal text.
std::optional<std::string> ScalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return std::nullopt;
}

std::optional<int64_t> NonNegativeInt(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < 0) return std::nullopt;
    return i;
  }
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    return std::stoll(s);
  }
  return std::nullopt;
}

}  // namespace

// ---- multipart/form-data ---------------------------------------------------

bool IsMultipartFormData(std::string_view content_type) {
  return ParseHeaderParams(content_type).type == "multipart/form-data";
}

std::optional<std::string> MultipartBoundary(std::string_view content_type) {
  HeaderParams p = ParseHeaderParams(content_type);
  if (p.type != "multipart/form-data") return std::nullopt;
  const std::string* b = p.Get("boundary");
  if (!b || b->empty() || b->size() > 70 || b->back() == ' ') return std::nullopt;
  for (char c : *b) {
    if (!IsBoundaryChar(c)) return std::nullopt;
  }
  return *b;
}

FormDataReader::FormDataReader(ByteSource* source, std::string_view boundary, FormLimits limits)
    : source_(source), delimiter_("\r\n--" + std::string(boundary)), limits_(limits) {
  // The first delimiter may open the body without a CRLF before it: a
  // virtual CRLF in front lets one search find every delimiter.
  buf_ = "\r\n";
}

std::optional<Error> FormDataReader::Fill(bool* got) {
  *got = false;
  if (eof_) return std::nullopt;
  // Drop consumed bytes when that is cheap relative to what stays.
  if (pos_ > 0 && (pos_ >= kReadChunk || pos_ * 2 >= buf_.size())) {
    buf_.erase(0, pos_);
    dropped_ += pos_;
    scan_ = scan_ > pos_ ? scan_ - pos_ : 0;
    pos_ = 0;
  }
  if (!scratch_) scratch_ = std::make_unique_for_overwrite<char[]>(kReadChunk);
  auto n = source_->Read(scratch_.get(), kReadChunk);
  if (!n.ok()) return FromBodyStatus(n.status());
  if (*n == 0) {
    eof_ = true;
    return std::nullopt;
  }
  buf_.append(scratch_.get(), *n);
  *got = true;
  return std::nullopt;
}

int FormDataReader::DelimiterAt(size_t at) const {
  size_t i = at + delimiter_.size();
  if (i + 2 > buf_.size()) return eof_ ? 0 : -1;  // at the end: not a valid delimiter
  char c0 = buf_[i], c1 = buf_[i + 1];
  if (c0 == '-') return c1 == '-' ? 1 : 0;
  if (c0 == '\r') return c1 == '\n' ? 1 : 0;
  if (c0 == ' ' || c0 == '\t') return 1;  // transport padding, then CRLF
  return 0;
}

size_t FormDataReader::PreDataLeft() const {
  uint64_t seen = dropped_ + pos_;
  uint64_t consumed = seen >= 2 ? seen - 2 : 0;  // minus the virtual CRLF
  return consumed >= limits_.max_total_bytes ? 0 : limits_.max_total_bytes - consumed;
}

Error FormDataReader::PreDataTooLarge() const {
  return MakeError(ErrorCode::kMaxPostPreDataLengthExceeded);
}

std::variant<size_t, Error> FormDataReader::FindDelimiter(size_t limit) {
  const size_t dlen = delimiter_.size();
  size_t from = pos_;
  while (true) {
    size_t f = buf_.find(delimiter_, from);
    if (f != std::string::npos) {
      if (f - pos_ > limit) return PreDataTooLarge();
      int d = DelimiterAt(f);
      if (d == 1) return f - pos_;
      if (d == 0) {
        from = f + 1;
        continue;
      }
      from = f;  // need more bytes after it to tell
    } else {
      if (buf_.size() - pos_ > limit + dlen) return PreDataTooLarge();
      from = std::max(pos_, buf_.size() >= dlen ? buf_.size() - dlen + 1 : 0);
    }
    size_t rel = from - pos_;
    bool got = false;
    if (auto e = Fill(&got)) return *e;
    if (!got) return Malformed("the body ended inside a part");
    from = pos_ + rel;
  }
}

std::variant<std::string, Error> FormDataReader::ReadLine(size_t limit) {
  size_t from = pos_;
  while (true) {
    size_t f = buf_.find("\r\n", from);
    if (f != std::string::npos) {
      if (f - pos_ > limit) return PreDataTooLarge();
      std::string line = buf_.substr(pos_, f - pos_);
      pos_ = f + 2;
      return line;
    }
    if (buf_.size() - pos_ > limit + 1) return PreDataTooLarge();
    size_t rel = (buf_.size() > pos_ ? buf_.size() - 1 : pos_) - pos_;
    bool got = false;
    if (auto e = Fill(&got)) return *e;
    if (!got) return Malformed("the body ended inside the part headers");
    from = pos_ + rel;
  }
}

std::optional<Error> FormDataReader::ConsumeDelimiter(bool* close) {
  // DelimiterAt(pos_) == 1 holds: the delimiter and two more bytes are here.
  pos_ += delimiter_.size();
  *close = false;
  if (buf_[pos_] == '-') {
    pos_ += 2;
    *close = true;
    body_closed_ = true;
    return std::nullopt;
  }
  size_t padding = 0;
  while (true) {
    while (pos_ < buf_.size() && (buf_[pos_] == ' ' || buf_[pos_] == '\t')) {
      ++pos_;
      if (++padding > kMaxPaddingBytes) return Malformed("bad boundary line");
    }
    if (buf_.size() - pos_ >= 2) break;
    bool got = false;
    if (auto e = Fill(&got)) return *e;
    if (!got) return Malformed("the body ended after a boundary");
  }
  if (buf_[pos_] != '\r' || buf_[pos_ + 1] != '\n') return Malformed("bad boundary line");
  pos_ += 2;
  return std::nullopt;
}

std::optional<Error> FormDataReader::ReadFields() {
  if (in_file_) return std::nullopt;
  // Preamble, then the first delimiter.
  auto first = FindDelimiter(PreDataLeft());
  if (auto* e = std::get_if<Error>(&first)) return *e;
  pos_ += std::get<size_t>(first);
  bool close = false;
  if (auto e = ConsumeDelimiter(&close)) return e;
  if (close) return NoFile();
  while (true) {
    std::string name, file_name, content_type;
    bool has_file_name = false, form_data = false;
    size_t header_bytes = 0;
    while (true) {
      size_t limit = std::min(limits_.max_field_bytes - std::min(header_bytes, limits_.max_field_bytes),
                              PreDataLeft());
      auto line = ReadLine(limit);
      if (auto* e = std::get_if<Error>(&line)) return *e;
      const std::string& l = std::get<std::string>(line);
      header_bytes += l.size() + 2;
      if (l.empty()) break;
      size_t colon = l.find(':');
      if (colon == std::string::npos || colon == 0) return Malformed("bad part header");
      std::string hname = AsciiLower(TrimBlanks(std::string_view(l).substr(0, colon)));
      std::string_view hvalue = TrimBlanks(std::string_view(l).substr(colon + 1));
      if (hname == "content-disposition") {
        HeaderParams p = ParseHeaderParams(hvalue);
        form_data = p.type == "form-data";
        if (const std::string* n = p.Get("name")) name = *n;
        if (const std::string* ext = p.Get("filename*")) {
          if (auto decoded = DecodeExtValue(*ext)) {
            file_name = *decoded;
            has_file_name = true;
          }
        }
        if (!has_file_name) {
          if (const std::string* f = p.Get("filename")) {
            file_name = *f;
            has_file_name = true;
          }
        }
      } else if (hname == "content-type") {
        content_type = std::string(hvalue);
      }
    }
    if (!form_data || name.empty()) return Malformed("a part has no form-data name");
    name = AsciiLower(name);
    if (name == "file") {
      in_file_ = true;
      file_name_ = std::move(file_name);
      file_content_type_ = std::move(content_type);
      scan_ = pos_;
      return std::nullopt;
    }
    auto end = FindDelimiter(std::min(limits_.max_field_bytes, PreDataLeft()));
    if (auto* e = std::get_if<Error>(&end)) return *e;
    size_t n = std::get<size_t>(end);
    fields_.push_back(FormField{std::move(name), buf_.substr(pos_, n)});
    pos_ += n;
    if (auto e = ConsumeDelimiter(&close)) return e;
    if (close) return NoFile();
  }
}

std::variant<std::string_view, Error> FormDataReader::NextFileChunk() {
  if (!in_file_) return Malformed("no file part");
  if (file_done_) return std::string_view();
  const size_t dlen = delimiter_.size();
  while (true) {
    size_t from = std::max(pos_, scan_);
    size_t f = buf_.find(delimiter_, from);
    size_t safe_end;  // content up to here is certainly file data
    bool need_more = false;
    if (f != std::string::npos) {
      int d = DelimiterAt(f);
      if (d == 1) {
        if (f == pos_) {
          pos_ += dlen;
          file_done_ = true;
          return std::string_view();
        }
        safe_end = f;
      } else if (d == 0) {
        scan_ = f + 1;
        continue;
      } else {
        safe_end = f;
        need_more = true;
      }
      scan_ = f;
    } else {
      // Keep back what could be the start of a delimiter.
      safe_end = std::max(pos_, buf_.size() >= dlen ? buf_.size() - dlen + 1 : 0);
      scan_ = safe_end;
      need_more = true;
    }
    if (safe_end > pos_) {
      std::string_view chunk(buf_.data() + pos_, safe_end - pos_);
      pos_ = safe_end;
      return chunk;
    }
    if (need_more) {
      bool got = false;
      if (auto e = Fill(&got)) return *e;
      if (!got) return Malformed("the body ended inside the file");
    }
  }
}

bool FormDataReader::SkipRest(size_t max_bytes) {
  size_t skipped = 0;
  pos_ = buf_.size();
  while (!eof_ && skipped <= max_bytes) {
    bool got = false;
    if (Fill(&got)) return false;
    skipped += buf_.size() - pos_;
    pos_ = buf_.size();
  }
  return eof_;
}

std::string BaseFileName(std::string_view file_name) {
  size_t slash = file_name.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? file_name : file_name.substr(slash + 1));
}

std::string ExpandFilename(std::string_view value, std::string_view file_name) {
  static constexpr std::string_view kVar = "${filename}";
  std::string out;
  size_t i = 0;
  while (true) {
    size_t f = value.find(kVar, i);
    if (f == std::string_view::npos) break;
    out.append(value.substr(i, f - i));
    out.append(file_name);
    i = f + kVar.size();
  }
  out.append(value.substr(i));
  return out;
}

// ---- POST policy -------------------------------------------------------------

std::string PolicyCondition::ToString() const {
  switch (kind) {
    case Kind::kEq: return "[\"eq\", \"$" + field + "\", \"" + value + "\"]";
    case Kind::kStartsWith: return "[\"starts-with\", \"$" + field + "\", \"" + value + "\"]";
    case Kind::kContentLengthRange:
      return "[\"content-length-range\", " + std::to_string(min) + ", " + std::to_string(max) + "]";
  }
  return {};
}

std::variant<PostPolicy, Error> ParsePostPolicy(std::string_view json) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return PolicyError("Invalid JSON.");
  PostPolicy policy;
  auto exp = doc.find("expiration");
  if (exp == doc.end()) return PolicyError("Policy missing expiration.");
  if (!exp->is_string()) return PolicyError("Invalid 'expiration' value.");
  auto ms = ParseIso8601Ms(exp->get<std::string>());
  if (!ms) return PolicyError("Invalid 'expiration' value: '" + exp->get<std::string>() + "'");
  policy.expiration_ms = *ms;
  auto conds = doc.find("conditions");
  if (conds == doc.end()) return PolicyError("Policy missing conditions.");
  if (!conds->is_array()) return PolicyError("Invalid 'conditions' value.");
  for (const nlohmann::json& c : *conds) {
    if (c.is_object()) {
      for (auto it = c.begin(); it != c.end(); ++it) {
        auto text = ScalarText(it.value());
        if (!text) return PolicyError("Invalid Condition: " + c.dump());
        std::string field = it.key();
        if (!field.empty() && field[0] == '$') field.erase(0, 1);
        PolicyCondition pc;
        pc.kind = PolicyCondition::Kind::kEq;
        pc.field = AsciiLower(field);
        pc.value = *text;
        policy.conditions.push_back(std::move(pc));
      }
      continue;
    }
    if (!c.is_array() || c.empty() || !c[0].is_string()) {
      return PolicyError("Invalid Condition: " + c.dump());
    }
    std::string op = AsciiLower(c[0].get<std::string>());
    PolicyCondition pc;
    if (op == "content-length-range") {
      if (c.size() != 3) return PolicyError("Invalid content-length-range: " + c.dump());
      auto lo = NonNegativeInt(c[1]), hi = NonNegativeInt(c[2]);
      if (!lo || !hi) return PolicyError("Invalid content-length-range: " + c.dump());
      pc.kind = PolicyCondition::Kind::kContentLengthRange;
      pc.min = *lo;
      pc.max = *hi;
      if (!policy.length_range) {
        policy.length_range = {pc.min, pc.max};
      } else {
        policy.length_range->first = std::max(policy.length_range->first, pc.min);
        policy.length_range->second = std::min(policy.length_range->second, pc.max);
      }
    } else if (op == "eq" || op == "starts-with") {
      if (c.size() != 3 || !c[1].is_string()) {
        return PolicyError("Invalid Condition: " + c.dump());
      }
      std::string field = c[1].get<std::string>();
      auto text = ScalarText(c[2]);
      if (field.size() < 2 || field[0] != '$' || !text) {
        return PolicyError("Invalid Condition: " + c.dump());
      }
      pc.kind = op == "eq" ? PolicyCondition::Kind::kEq : PolicyCondition::Kind::kStartsWith;
      pc.field = AsciiLower(field.substr(1));
      pc.value = *text;
    } else {
      return PolicyError("Invalid Condition: unknown operation '" + c[0].get<std::string>() + "'");
    }
    policy.conditions.push_back(std::move(pc));
  }
  return policy;
}

bool IsExemptFromPolicy(std::string_view lower_name) {
  return lower_name == "x-amz-signature" || lower_name == "file" || lower_name == "policy" ||
         lower_name.starts_with("x-ignore-");
}

std::optional<Error> EvaluatePostPolicy(const PostPolicy& policy,
                                        const std::vector<FormField>& fields,
                                        std::string_view bucket, int64_t now_ms) {
  if (now_ms > policy.expiration_ms) return AccessDeniedPolicy("Policy expired.");
  std::map<std::string, std::string> values;  // repeated fields: values joined by ','
  std::vector<std::string> order;
  for (const FormField& f : fields) {
    auto [it, inserted] = values.try_emplace(f.name, f.value);
    if (inserted) {
      order.push_back(f.name);
    } else {
      it->second += ",";
      it->second += f.value;
    }
  }
  for (const PolicyCondition& c : policy.conditions) {
    if (c.kind == PolicyCondition::Kind::kContentLengthRange) continue;
    std::string actual;
    if (c.field == "bucket") {
      actual = std::string(bucket);
    } else if (auto it = values.find(c.field); it != values.end()) {
      actual = it->second;
    }
    bool ok = c.kind == PolicyCondition::Kind::kEq ? actual == c.value
                                                    : actual.starts_with(c.value);
    if (!ok) return AccessDeniedPolicy("Policy Condition failed: " + c.ToString());
  }
  std::string extra;
  for (const std::string& name : order) {
    if (IsExemptFromPolicy(name)) continue;
    bool covered = std::any_of(policy.conditions.begin(), policy.conditions.end(),
                               [&](const PolicyCondition& c) {
                                 return c.kind != PolicyCondition::Kind::kContentLengthRange &&
                                        c.field == name;
                               });
    if (covered) continue;
    if (!extra.empty()) extra += ", ";
    extra += name;
  }
  if (!extra.empty()) return AccessDeniedPolicy("Extra input fields: " + extra);
  return std::nullopt;
}

std::optional<Error> CheckPostContentLength(const PostPolicy& policy, uint64_t size) {
  if (!policy.length_range) return std::nullopt;
  auto [lo, hi] = *policy.length_range;
  if (size < static_cast<uint64_t>(lo)) return MakeError(ErrorCode::kEntityTooSmall);
  if (size > static_cast<uint64_t>(hi)) return MakeError(ErrorCode::kEntityTooLarge);
  return std::nullopt;
}

}  // namespace strata::s3
