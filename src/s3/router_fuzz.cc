// libFuzzer target: the S3 router (s3::RouteRequest). Input text:
//   <control byte><METHOD>\n<request target>\n<Host header>
// The target is split at its first '?' as http::MakeRequest does. Control
// bits 0-1 pick the virtual-host domain ("", s3.test, localhost,
// s3.amazonaws.com), bit 2 adds x-amz-copy-source, bit 3 drops the Host.
// Whatever routes must name a valid bucket and a valid key for its kind of
// operation. Seeds: tests/fuzz/s3_router/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "common/encoding.h"
#include "fuzz_util.h"
#include "s3/router.h"

using strata::fuzz::NextLine;
using strata::s3::Op;

namespace {

bool IsServiceOp(Op op) { return op == Op::kListBuckets; }

bool IsBucketOp(Op op) {
  switch (op) {
    case Op::kCreateBucket: case Op::kDeleteBucket: case Op::kHeadBucket:
    case Op::kGetBucketLocation: case Op::kListObjectsV1: case Op::kListObjectsV2:
    case Op::kDeleteObjects: case Op::kListMultipartUploads: case Op::kPostObject:
    case Op::kPutBucketTagging: case Op::kGetBucketTagging: case Op::kDeleteBucketTagging:
    case Op::kGetBucketVersioning: case Op::kPutBucketVersioning: case Op::kListObjectVersions:
    case Op::kGetObjectLockConfiguration: case Op::kPutObjectLockConfiguration:
    case Op::kGetBucketPolicy: case Op::kPutBucketPolicy: case Op::kDeleteBucketPolicy:
    case Op::kGetBucketPolicyStatus: case Op::kGetBucketCors: case Op::kPutBucketCors:
    case Op::kDeleteBucketCors: case Op::kGetBucketAcl: case Op::kPutBucketAcl:
    case Op::kGetBucketOwnershipControls: case Op::kPutBucketOwnershipControls:
    case Op::kDeleteBucketOwnershipControls: case Op::kGetPublicAccessBlock:
    case Op::kPutPublicAccessBlock: case Op::kDeletePublicAccessBlock:
    case Op::kGetBucketEncryption: case Op::kPutBucketEncryption: case Op::kDeleteBucketEncryption:
    case Op::kGetBucketLifecycleConfiguration: case Op::kPutBucketLifecycleConfiguration:
    case Op::kDeleteBucketLifecycle: case Op::kGetBucketNotificationConfiguration:
    case Op::kPutBucketNotificationConfiguration: case Op::kGetBucketLogging:
    case Op::kPutBucketLogging:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  strata::http::Request req;
  req.method = std::string(NextLine(&in));
  req.target = std::string(NextLine(&in));
  size_t q = req.target.find('?');
  req.raw_path = req.target.substr(0, q);
  if (q != std::string::npos) req.raw_query = req.target.substr(q + 1);
  if (!(control & 8)) req.headers.emplace_back("host", std::string(NextLine(&in)));
  if (control & 4) req.headers.emplace_back("x-amz-copy-source", "/src/key");
  static const char* kDomains[] = {"", "s3.test", "localhost", "s3.amazonaws.com"};
  strata::s3::RouterConfig config{kDomains[control & 3]};

  auto routed = strata::s3::RouteRequest(req, config);
  auto again = strata::s3::RouteRequest(req, config);
  FUZZ_CHECK(routed.index() == again.index());
  const auto* r = std::get_if<strata::s3::Route>(&routed);
  if (!r) return 0;
  FUZZ_CHECK(std::get<strata::s3::Route>(again).op == r->op);
  if (r->op == Op::kAdmin) return 0;  // /_strata/admin/<action>: the admin API checks it
  FUZZ_CHECK(r->bucket.empty() || strata::s3::IsValidBucketName(r->bucket));
  FUZZ_CHECK(r->key.size() <= 1024);
  FUZZ_CHECK(strata::IsValidUtf8(r->key) && r->key.find('\0') == std::string::npos);
  if (r->op == Op::kPreflightCors) {  // OPTIONS on a bucket or an object
    FUZZ_CHECK(!r->bucket.empty());
  } else if (IsServiceOp(r->op)) {
    FUZZ_CHECK(r->bucket.empty());
  } else if (IsBucketOp(r->op)) {
    FUZZ_CHECK(!r->bucket.empty() && r->key.empty());
  } else {
    FUZZ_CHECK(!r->bucket.empty() && !r->key.empty());
  }
  for (const auto& [name, value] : r->query) FUZZ_CHECK(r->Query(name) != nullptr);
  return 0;
}
