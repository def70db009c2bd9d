#include "s3/post_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "common/string_source.h"

namespace strata::s3 {
namespace {

// Serves `data` in reads of at most `chunk` bytes (or a pseudo-random size
// in [1, chunk] when `random` is set), so delimiters land across reads.
class ChunkedSource : public ByteSource {
 public:
  ChunkedSource(std::string data, size_t chunk, bool random = false)
      : data_(std::move(data)), chunk_(chunk), random_(random), rng_(chunk) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t want = random_ ? std::uniform_int_distribution<size_t>(1, chunk_)(rng_) : chunk_;
    size_t k = std::min({n, want, data_.size() - pos_});
    std::copy_n(data_.data() + pos_, k, buf);
    pos_ += k;
    ++reads_;
    return k;
  }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string data_;
  size_t pos_ = 0;
  size_t chunk_;
  bool random_;
  std::mt19937 rng_;
  size_t reads_ = 0;
};

constexpr std::string_view kBoundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW";

std::string Part(std::string_view name, std::string_view value) {
  return "--" + std::string(kBoundary) + "\r\nContent-Disposition: form-data; name=\"" +
         std::string(name) + "\"\r\n\r\n" + std::string(value) + "\r\n";
}

std::string FilePart(std::string_view content, std::string_view filename = "a.txt") {
  return "--" + std::string(kBoundary) +
         "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + std::string(filename) +
         "\"\r\nContent-Type: text/plain\r\n\r\n" + std::string(content) + "\r\n";
}

std::string Close() { return "--" + std::string(kBoundary) + "--\r\n"; }

struct Parsed {
  std::optional<Error> error;  // from ReadFields or NextFileChunk
  std::vector<FormField> fields;
  std::string file;
  std::string file_name;
  bool skipped_to_end = false;
};

Parsed ParseAll(ByteSource* src, FormLimits limits = {}) {
  Parsed p;
  FormDataReader r(src, kBoundary, limits);
  p.error = r.ReadFields();
  p.fields = r.fields();
  if (p.error) return p;
  p.file_name = r.file_name();
  while (true) {
    auto c = r.NextFileChunk();
    if (auto* e = std::get_if<Error>(&c)) {
      p.error = *e;
      return p;
    }
    std::string_view v = std::get<std::string_view>(c);
    if (v.empty()) break;
    p.file.append(v);
  }
  p.skipped_to_end = r.SkipRest(1 << 20);
  return p;
}

Parsed ParseString(const std::string& body, size_t chunk = 1 << 20, bool random = false) {
  ChunkedSource src(body, chunk, random);
  return ParseAll(&src);
}

std::string Value(const Parsed& p, std::string_view name) {
  for (const auto& f : p.fields) {
    if (f.name == name) return f.value;
  }
  return "<missing>";
}

TEST(FormData, Boundary) {
  EXPECT_EQ(*MultipartBoundary("multipart/form-data; boundary=abc"), "abc");
  EXPECT_EQ(*MultipartBoundary("Multipart/Form-Data;boundary=\"a b:c\""), "a b:c");
  EXPECT_EQ(*MultipartBoundary("multipart/form-data; charset=utf-8; boundary=x-y"), "x-y");
  EXPECT_FALSE(MultipartBoundary("multipart/form-data"));
  EXPECT_FALSE(MultipartBoundary("multipart/form-data; boundary="));
  EXPECT_FALSE(MultipartBoundary("multipart/mixed; boundary=abc"));
  EXPECT_FALSE(MultipartBoundary("multipart/form-data; boundary=" + std::string(71, 'a')));
  EXPECT_TRUE(IsMultipartFormData("multipart/form-data"));
  EXPECT_TRUE(IsMultipartFormData("MULTIPART/FORM-DATA ; boundary=x"));
  EXPECT_FALSE(IsMultipartFormData("application/x-www-form-urlencoded"));
}

TEST(FormData, ReadsFieldsAndFile) {
  std::string file = "hello\r\nworld\r\n";
  std::string body = Part("Key", "uploads/${filename}") + Part("policy", "eyJ9") +
                     Part("empty", "") + FilePart(file, "C:\\dir\\photo.png") + Close();
  Parsed p = ParseString(body);
  ASSERT_FALSE(p.error) << p.error->Message();
  ASSERT_EQ(p.fields.size(), 3u);
  EXPECT_EQ(p.fields[0].name, "key");  // lowercased
  EXPECT_EQ(p.fields[0].value, "uploads/${filename}");
  EXPECT_EQ(Value(p, "policy"), "eyJ9");
  EXPECT_EQ(Value(p, "empty"), "");
  EXPECT_EQ(p.file, file);
  EXPECT_EQ(p.file_name, "C:\\dir\\photo.png");
  EXPECT_EQ(BaseFileName(p.file_name), "photo.png");
  EXPECT_TRUE(p.skipped_to_end);
}

// Every read size, including 1 byte, so every delimiter is split across reads.
TEST(FormData, DelimitersSplitAcrossReads) {
  std::string file;
  for (int i = 0; i < 3000; ++i) file.push_back(static_cast<char>("\r\n-ab"[i % 5]));
  file += "\r\n--" + std::string(kBoundary).substr(0, 10);  // a delimiter prefix at the end
  std::string body = "preamble\r\n" + Part("key", "k") + Part("x-amz-meta-a", "line1\r\nline2") +
                     FilePart(file) + Close();
  for (size_t chunk : {1, 2, 3, 5, 7, 13, 41, 42, 43, 64, 100, 4096}) {
    Parsed p = ParseString(body, chunk);
    ASSERT_FALSE(p.error) << "chunk " << chunk << ": " << p.error->Message();
    EXPECT_EQ(Value(p, "key"), "k") << chunk;
    EXPECT_EQ(Value(p, "x-amz-meta-a"), "line1\r\nline2") << chunk;
    EXPECT_EQ(p.file, file) << chunk;
  }
  for (size_t seed = 2; seed < 60; seed += 3) {
    Parsed p = ParseString(body, seed, /*random=*/true);
    ASSERT_FALSE(p.error) << p.error->Message();
    EXPECT_EQ(p.file, file) << seed;
  }
}

TEST(FormData, LargeFileStreams) {
  std::string file(3 << 20, 'x');
  for (size_t i = 0; i < file.size(); i += 997) file[i] = '\r';
  for (size_t i = 1; i < file.size(); i += 1999) file[i] = '\n';
  ChunkedSource src(Part("key", "k") + FilePart(file) + Close(), 100000, /*random=*/true);
  FormDataReader r(&src, kBoundary);
  ASSERT_FALSE(r.ReadFields());
  std::string got;
  size_t biggest = 0;
  while (true) {
    auto c = r.NextFileChunk();
    ASSERT_TRUE(std::holds_alternative<std::string_view>(c));
    std::string_view v = std::get<std::string_view>(c);
    if (v.empty()) break;
    biggest = std::max(biggest, v.size());
    got.append(v);
  }
  EXPECT_EQ(got, file);
  EXPECT_LE(biggest, 512u * 1024);  // pieces, never the whole file
  EXPECT_EQ(r.NextFileChunk().index(), 0u);  // stays at the end
}

TEST(FormData, CrlfEdgeCases) {
  std::string b(kBoundary);
  const std::vector<std::string> files = {
      "",
      "\r",
      "\n",
      "\r\n",
      "\r\n\r\n",
      "abc\r",
      "--" + b,                      // boundary without the CRLF before it: content
      "\r\n-" + b,                   // one dash short
      "\r\n--" + b + "X tail",       // longer boundary: not a delimiter
      "\r\n--" + b + "-x",           // a single dash after it
      "\r\n--" + b + "\rx",          // CR without LF
      "x\r\n--" + b.substr(0, b.size() - 1),
  };
  for (const std::string& file : files) {
    for (size_t chunk : {1, 2, 3, 9, 1000}) {
      Parsed p = ParseString(Part("key", "k") + FilePart(file) + Close(), chunk);
      ASSERT_FALSE(p.error) << p.error->Message();
      EXPECT_EQ(p.file, file) << "chunk " << chunk;
    }
  }
}

TEST(FormData, BodyOpensWithBoundaryOrPreamble) {
  std::string tail = Part("key", "k") + FilePart("data") + Close();
  for (std::string body : {tail, "\r\n" + tail, "some preamble\r\n" + tail}) {
    Parsed p = ParseString(body, 3);
    ASSERT_FALSE(p.error) << p.error->Message();
    EXPECT_EQ(p.file, "data");
  }
}

TEST(FormData, TransportPaddingAndNoFinalCrlf) {
  std::string b(kBoundary);
  std::string body = "--" + b + "  \t\r\nContent-Disposition: form-data; name=key\r\n\r\nk\r\n--" +
                     b + " \r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nZZ\r\n--" + b +
                     "--";
  Parsed p = ParseString(body, 2);
  ASSERT_FALSE(p.error) << p.error->Message();
  EXPECT_EQ(Value(p, "key"), "k");
  EXPECT_EQ(p.file, "ZZ");
  EXPECT_EQ(p.file_name, "");
}

TEST(FormData, FieldsAfterFileAreIgnored) {
  std::string body = Part("key", "k") + FilePart("content") + Part("acl", "public-read") +
                     Part("x-amz-meta-late", "v") + Close();
  for (size_t chunk : {1, 5, 4096}) {
    Parsed p = ParseString(body, chunk);
    ASSERT_FALSE(p.error) << p.error->Message();
    EXPECT_EQ(p.fields.size(), 1u);
    EXPECT_EQ(p.file, "content");
    EXPECT_TRUE(p.skipped_to_end);
  }
}

TEST(FormData, MissingFileField) {
  for (size_t chunk : {1, 4096}) {
    Parsed p = ParseString(Part("key", "k") + Part("policy", "p") + Close(), chunk);
    ASSERT_TRUE(p.error);
    EXPECT_EQ(p.error->code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(p.fields.size(), 2u);
  }
  Parsed empty = ParseString(Close());
  ASSERT_TRUE(empty.error);
  EXPECT_EQ(empty.error->code, ErrorCode::kInvalidArgument);
}

TEST(FormData, MalformedBodies) {
  std::string b(kBoundary);
  auto code = [](const std::string& body, size_t chunk = 7) {
    Parsed p = ParseString(body, chunk);
    return p.error ? p.error->code : ErrorCode::kInternalError;
  };
  // No delimiter at all, or a different boundary.
  EXPECT_EQ(code("just some text"), ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(code(""), ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(code("--otherboundary\r\n\r\n"), ErrorCode::kMalformedPOSTRequest);
  // The file part never ends (truncated upload).
  std::string truncated = Part("key", "k") + FilePart("data");
  truncated.resize(truncated.size() - 2);  // drop its CRLF too
  EXPECT_EQ(code(truncated), ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(code(Part("key", "k") + "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc"),
            ErrorCode::kMalformedPOSTRequest);
  // The body ends inside the headers / a field.
  EXPECT_EQ(code("--" + b + "\r\nContent-Disposition: form-data; name=\"k"),
            ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(code("--" + b + "\r\nContent-Disposition: form-data; name=\"k\"\r\n\r\nvalue"),
            ErrorCode::kMalformedPOSTRequest);
  // A part without a name, not form-data, a header without a colon.
  EXPECT_EQ(code("--" + b + "\r\nContent-Disposition: form-data\r\n\r\nv\r\n" + Close()),
            ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(code("--" + b + "\r\nContent-Disposition: attachment; name=a\r\n\r\nv\r\n" + Close()),
            ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(code("--" + b + "\r\nbogus header\r\n\r\nv\r\n" + Close()),
            ErrorCode::kMalformedPOSTRequest);
  // Junk after the boundary on its line.
  EXPECT_EQ(code("--" + b + " junk\r\n"), ErrorCode::kMalformedPOSTRequest);
}

TEST(FormData, Limits) {
  FormLimits limits;
  limits.max_field_bytes = 100;
  limits.max_total_bytes = 1000;
  auto run = [&](const std::string& body) {
    ChunkedSource src(body, 3);
    return ParseAll(&src, limits);
  };
  Parsed ok = run(Part("a", std::string(100, 'v')) + FilePart(std::string(5000, 'f')) + Close());
  ASSERT_FALSE(ok.error) << ok.error->Message();
  EXPECT_EQ(ok.file.size(), 5000u);  // the file is not limited by the field limits
  Parsed big = run(Part("a", std::string(101, 'v')) + FilePart("f") + Close());
  ASSERT_TRUE(big.error);
  EXPECT_EQ(big.error->code, ErrorCode::kMaxPostPreDataLengthExceeded);
  std::string many;
  for (int i = 0; i < 20; ++i) many += Part("f" + std::to_string(i), std::string(60, 'v'));
  Parsed total = run(many + FilePart("f") + Close());
  ASSERT_TRUE(total.error);
  EXPECT_EQ(total.error->code, ErrorCode::kMaxPostPreDataLengthExceeded);
  Parsed header = run("--" + std::string(kBoundary) + "\r\nX: " + std::string(200, 'h') + "\r\n");
  ASSERT_TRUE(header.error);
  EXPECT_EQ(header.error->code, ErrorCode::kMaxPostPreDataLengthExceeded);
  Parsed preamble = run(std::string(2000, 'p'));
  ASSERT_TRUE(preamble.error);
  EXPECT_EQ(preamble.error->code, ErrorCode::kMaxPostPreDataLengthExceeded);
}

TEST(FormData, DefaultLimits) {
  Parsed p = ParseString(Part("a", std::string(64 * 1024, 'v')) + FilePart("f") + Close(), 1000);
  ASSERT_FALSE(p.error) << p.error->Message();
  p = ParseString(Part("a", std::string(64 * 1024 + 1, 'v')) + FilePart("f") + Close(), 1000);
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, ErrorCode::kMaxPostPreDataLengthExceeded);
}

TEST(FormData, BodyStreamErrorsPassThrough) {
  StringSource src(Part("key", "k"), std::numeric_limits<size_t>::max(), Aborted("peer went away"));
  Parsed p = ParseAll(&src);
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, ErrorCode::kIncompleteBody);
}

TEST(FormData, FilenameParameters) {
  std::string b(kBoundary);
  std::string body = Part("key", "k") + "--" + b +
                     "\r\ncontent-disposition: form-data; name=\"File\"; filename=\"a\\\"b;c.txt\""
                     "\r\n\r\nx\r\n" + Close();
  Parsed p = ParseString(body);
  ASSERT_FALSE(p.error) << p.error->Message();
  EXPECT_EQ(p.file_name, "a\"b;c.txt");
  body = Part("key", "k") + "--" + b +
         "\r\nContent-Disposition: form-data; name=file; filename=\"x.bin\"; "
         "filename*=UTF-8''%C3%A9t%C3%A9.txt\r\n\r\nx\r\n" + Close();
  p = ParseString(body);
  ASSERT_FALSE(p.error) << p.error->Message();
  EXPECT_EQ(p.file_name, "\xC3\xA9t\xC3\xA9.txt");
}

TEST(FormData, FilenameExpansion) {
  EXPECT_EQ(BaseFileName("dir/sub/f.txt"), "f.txt");
  EXPECT_EQ(BaseFileName("C:\\Program Files\\f.txt"), "f.txt");
  EXPECT_EQ(BaseFileName("f.txt"), "f.txt");
  EXPECT_EQ(BaseFileName("dir/"), "");
  EXPECT_EQ(ExpandFilename("u/${filename}", "a.png"), "u/a.png");
  EXPECT_EQ(ExpandFilename("${filename}-${filename}", "x"), "x-x");
  EXPECT_EQ(ExpandFilename("${filename}", ""), "");
  EXPECT_EQ(ExpandFilename("no var ${file}", "x"), "no var ${file}");
}

// ---- policy ------------------------------------------------------------------

PostPolicy MustParse(std::string_view json) {
  auto p = ParsePostPolicy(json);
  if (auto* e = std::get_if<Error>(&p)) ADD_FAILURE() << e->Message();
  return std::get<PostPolicy>(p);
}

ErrorCode ParseCode(std::string_view json) {
  auto p = ParsePostPolicy(json);
  if (auto* e = std::get_if<Error>(&p)) return e->code;
  return ErrorCode::kInternalError;
}

TEST(PostPolicy, Parses) {
  PostPolicy p = MustParse(R"({ "expiration": "2015-12-30T12:00:00.000Z",
    "conditions": [
      {"bucket": "sigv4examplebucket"},
      ["starts-with", "$key", "user/user1/"],
      {"acl": "public-read"},
      ["eq", "$Content-Type", "image/png"],
      ["content-length-range", 1, 10485760],
      ["content-length-range", "5", 2000000000000],
      {"success_action_status": 201},
      {"x-amz-algorithm": "AWS4-HMAC-SHA256"}
    ]})");
  EXPECT_EQ(p.expiration_ms, 1451476800000);
  ASSERT_EQ(p.conditions.size(), 8u);
  EXPECT_EQ(p.conditions[0].ToString(), R"(["eq", "$bucket", "sigv4examplebucket"])");
  EXPECT_EQ(p.conditions[1].ToString(), R"(["starts-with", "$key", "user/user1/"])");
  EXPECT_EQ(p.conditions[3].field, "content-type");
  EXPECT_EQ(p.conditions[4].ToString(), R"(["content-length-range", 1, 10485760])");
  EXPECT_EQ(p.conditions[6].value, "201");
  ASSERT_TRUE(p.length_range);
  EXPECT_EQ(p.length_range->first, 5);
  EXPECT_EQ(p.length_range->second, 10485760);
}

TEST(PostPolicy, RejectsBadDocuments) {
  const auto kBad = ErrorCode::kInvalidPolicyDocument;
  EXPECT_EQ(ParseCode("not json"), kBad);
  EXPECT_EQ(ParseCode("[]"), kBad);
  EXPECT_EQ(ParseCode(R"({"conditions": []})"), kBad);
  EXPECT_EQ(ParseCode(R"({"expiration": "2015-12-30T12:00:00Z"})"), kBad);
  EXPECT_EQ(ParseCode(R"({"expiration": "tomorrow", "conditions": []})"), kBad);
  EXPECT_EQ(ParseCode(R"({"expiration": 5, "conditions": []})"), kBad);
  EXPECT_EQ(ParseCode(R"({"expiration": "2015-12-30T12:00:00Z", "conditions": {}})"), kBad);
  for (const char* cond : {R"(["eq", "key", "v"])", R"(["eq", "$key"])", R"(["matches", "$key", "v"])",
                           R"(["content-length-range", -1, 5])", R"(["content-length-range", 1])",
                           R"(["starts-with", "$key", ["x"]])", R"({"key": null})", R"("key")",
                           R"([])", R"([1, 2, 3])"}) {
    std::string doc =
        std::string(R"({"expiration": "2015-12-30T12:00:00Z", "conditions": [)") + cond + "]}";
    EXPECT_EQ(ParseCode(doc), kBad) << cond;
  }
}

std::vector<FormField> Fields(std::vector<std::pair<std::string, std::string>> kv) {
  std::vector<FormField> out;
  for (auto& [k, v] : kv) out.push_back(FormField{k, v});
  return out;
}

constexpr int64_t kNow = 1451476800000 - 1000;  // a second before the policy expires

std::string Evaluate(const PostPolicy& p, const std::vector<FormField>& fields,
                     int64_t now = kNow, std::string_view bucket = "bkt") {
  auto e = EvaluatePostPolicy(p, fields, bucket, now);
  if (!e) return "ok";
  EXPECT_EQ(e->code, ErrorCode::kAccessDenied);
  return std::string(e->Message());
}

TEST(PostPolicy, Evaluates) {
  PostPolicy p = MustParse(R"({"expiration": "2015-12-30T12:00:00.000Z", "conditions": [
      {"bucket": "bkt"}, ["starts-with", "$key", "user/"], ["eq", "$Content-Type", "image/png"],
      ["starts-with", "$x-amz-meta-tag", ""], ["content-length-range", 0, 10],
      {"x-amz-credential": "AK/20151229/us-east-1/s3/aws4_request"}]})");
  auto base = [] {
    return std::vector<std::pair<std::string, std::string>>{
        {"key", "user/a.txt"},
        {"content-type", "image/png"},
        {"x-amz-credential", "AK/20151229/us-east-1/s3/aws4_request"},
        {"policy", "..."},
        {"x-amz-signature", "..."},
        {"x-ignore-flash", "1"}};
  };
  EXPECT_EQ(Evaluate(p, Fields(base())), "ok");
  // Expired.
  EXPECT_EQ(Evaluate(p, Fields(base()), 1451476800001),
            "Invalid according to Policy: Policy expired.");
  EXPECT_EQ(Evaluate(p, Fields(base()), 1451476800000), "ok");
  // Wrong bucket.
  EXPECT_EQ(Evaluate(p, Fields(base()), kNow, "other"),
            R"(Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "bkt"])");
  // starts-with violated.
  auto f = base();
  f[0].second = "admin/a.txt";
  EXPECT_EQ(Evaluate(p, Fields(f)),
            R"(Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "user/"])");
  // eq violated, and missing.
  f = base();
  f[1].second = "image/jpeg";
  EXPECT_EQ(Evaluate(p, Fields(f)),
            R"(Invalid according to Policy: Policy Condition failed: ["eq", "$content-type", "image/png"])");
  f = base();
  f.erase(f.begin() + 1);
  EXPECT_NE(Evaluate(p, Fields(f)).find("Policy Condition failed"), std::string::npos);
  // A field no condition names.
  f = base();
  f.emplace_back("x-amz-meta-other", "v");
  f.emplace_back("acl", "private");
  EXPECT_EQ(Evaluate(p, Fields(f)),
            "Invalid according to Policy: Extra input fields: x-amz-meta-other, acl");
  // A field matched by starts-with "" is fine; so is a condition whose field is absent.
  f = base();
  f.emplace_back("x-amz-meta-tag", "anything");
  EXPECT_EQ(Evaluate(p, Fields(f)), "ok");
}

TEST(PostPolicy, RepeatedFieldsMatchJoined) {
  PostPolicy p = MustParse(R"({"expiration": "2015-12-30T12:00:00.000Z", "conditions": [
      {"x-amz-meta-tag": "Ninja,Stallman"}]})");
  EXPECT_EQ(Evaluate(p, Fields({{"x-amz-meta-tag", "Ninja"}, {"x-amz-meta-tag", "Stallman"}})),
            "ok");
  EXPECT_NE(Evaluate(p, Fields({{"x-amz-meta-tag", "Ninja"}})), "ok");
}

TEST(PostPolicy, ExemptFields) {
  EXPECT_TRUE(IsExemptFromPolicy("x-amz-signature"));
  EXPECT_TRUE(IsExemptFromPolicy("policy"));
  EXPECT_TRUE(IsExemptFromPolicy("file"));
  EXPECT_TRUE(IsExemptFromPolicy("x-ignore-anything"));
  EXPECT_FALSE(IsExemptFromPolicy("key"));
  EXPECT_FALSE(IsExemptFromPolicy("x-amz-date"));
  EXPECT_FALSE(IsExemptFromPolicy("bucket"));
}

TEST(PostPolicy, ContentLengthRange) {
  PostPolicy p = MustParse(R"({"expiration": "2015-12-30T12:00:00.000Z", "conditions": [
      ["content-length-range", 2, 4]]})");
  EXPECT_EQ(CheckPostContentLength(p, 1)->code, ErrorCode::kEntityTooSmall);
  EXPECT_FALSE(CheckPostContentLength(p, 2));
  EXPECT_FALSE(CheckPostContentLength(p, 4));
  EXPECT_EQ(CheckPostContentLength(p, 5)->code, ErrorCode::kEntityTooLarge);
  PostPolicy none = MustParse(R"({"expiration": "2015-12-30T12:00:00.000Z", "conditions": []})");
  EXPECT_FALSE(CheckPostContentLength(none, 1ull << 40));
}

}  // namespace
}  // namespace strata::s3
