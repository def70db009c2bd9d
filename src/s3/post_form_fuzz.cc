// libFuzzer target: the streaming multipart/form-data reader of POST Object
// (s3::FormDataReader over a ByteSource that hands the body out in pieces of
// fuzz-chosen sizes). input[0]: bit 0 the mode, bits 1-3 the piece limit.
//   raw mode:   input = control, "<Content-Type value>\n", body: the boundary
//               comes from MultipartBoundary() as post_object.cc does, then
//               ReadFields, NextFileChunk to the end, SkipRest.
//   build mode: input = control, flags byte, then NUL-separated strings:
//               field name, value, name, value, ..., and the last one is the
//               file content. The target writes a well-formed body (boundary
//               absent from every part; optional preamble, transport padding,
//               epilogue) and the reader must return exactly those fields and
//               that content, wherever the read boundaries fall.
// Seeds: tests/fuzz/post_form/ (forms as browsers / boto3 post them).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_util.h"
#include "s3/post_policy.h"

using namespace strata::s3;

namespace {

struct Parsed {
  bool ok = false;
  std::vector<FormField> fields;
  std::string file;
};

Parsed Read(std::string_view body, std::string_view boundary, uint8_t control) {
  strata::fuzz::SplitSource src(body, control, strata::fuzz::MaxPiece(control >> 1));
  FormDataReader reader(&src, boundary);
  Parsed out;
  if (reader.ReadFields()) {
    // A failed reader keeps failing instead of reading on.
    FUZZ_CHECK(std::holds_alternative<Error>(reader.NextFileChunk()));
    return out;
  }
  out.fields = reader.fields();
  for (const FormField& f : out.fields) FUZZ_CHECK(f.name != "file");
  while (true) {
    auto chunk = reader.NextFileChunk();
    if (std::holds_alternative<Error>(chunk)) return out;
    std::string_view c = std::get<std::string_view>(chunk);
    if (c.empty()) break;
    out.file.append(c);
    FUZZ_CHECK(out.file.size() <= body.size());
  }
  // Complete: the next call says so again.
  auto after = reader.NextFileChunk();
  FUZZ_CHECK(std::holds_alternative<std::string_view>(after) &&
             std::get<std::string_view>(after).empty());
  reader.SkipRest(1 << 20);
  out.ok = true;
  return out;
}

std::vector<std::string> SplitAtNul(std::string_view in) {
  std::vector<std::string> out;
  while (true) {
    size_t z = in.find('\0');
    out.emplace_back(in.substr(0, z));
    if (z == std::string_view::npos) return out;
    in.remove_prefix(z + 1);
  }
}

std::string FieldName(std::string_view raw) {
  std::string name;
  for (char c : raw) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') name.push_back(c);
  }
  return name;
}

void BuildMode(std::string_view in, uint8_t control) {
  if (in.empty()) return;
  const uint8_t flags = static_cast<uint8_t>(in[0]);
  std::vector<std::string> strings = SplitAtNul(in.substr(1));
  std::string file = strings.back();
  strings.pop_back();
  std::vector<FormField> fields;
  for (size_t i = 0; i + 1 < strings.size(); i += 2) {
    std::string name = FieldName(strings[i]);
    if (name.empty() || name == "file") continue;
    fields.push_back(FormField{name, strings[i + 1]});
  }
  // A boundary that occurs in no part.
  std::string boundary = "----strataFuzzBoundary";
  auto occurs = [&](const std::string& b) {
    if (file.find(b) != std::string::npos) return true;
    for (const FormField& f : fields) {
      if (f.value.find(b) != std::string::npos) return true;
    }
    return false;
  };
  while (occurs(boundary)) boundary += "x";

  std::string body;
  if (flags & 1) body += "preamble text\r\n";
  const std::string pad = (flags & 2) ? " \t" : "";
  auto part_head = [&](const std::string& disposition) {
    body += "--" + boundary + pad + "\r\n";
    body += "Content-Disposition: " + disposition + "\r\n";
  };
  for (const FormField& f : fields) {
    part_head("form-data; name=\"" + f.name + "\"");
    body += "\r\n" + f.value + "\r\n";
  }
  part_head((flags & 4) ? "form-data; name=\"file\"; filename=\"a.txt\"" : "form-data; name=\"file\"");
  if (flags & 8) body += "Content-Type: text/plain\r\n";
  body += "\r\n" + file + "\r\n--" + boundary + "--\r\n";
  if (flags & 16) body += "epilogue\r\n";

  Parsed p = Read(body, boundary, control);
  // Within FormLimits' defaults (64 KiB a field, 1 MiB before the file).
  size_t largest = 0;
  for (const FormField& f : fields) largest = std::max(largest, f.value.size());
  if (largest > 60000 || body.size() - file.size() > 1000000) return;
  FUZZ_CHECK(p.ok);
  FUZZ_CHECK(p.fields.size() == fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    FUZZ_CHECK(p.fields[i].name == fields[i].name && p.fields[i].value == fields[i].value);
  }
  FUZZ_CHECK(p.file == file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  if (control & 1) {
    BuildMode(in, control);
    return 0;
  }
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos) return 0;
  std::string_view content_type = in.substr(0, nl);
  auto boundary = MultipartBoundary(content_type);
  if (!boundary) return 0;
  FUZZ_CHECK(IsMultipartFormData(content_type));
  FUZZ_CHECK(!boundary->empty() && boundary->size() <= 70);
  Read(in.substr(nl + 1), *boundary, control);
  return 0;
}
