// Response helpers shared by the operations.
#include "common/time_util.h"
#include "s3/ops/op_context.h"
#include "s3/xml.h"

namespace strata::s3 {

http::Headers BaseHeaders(const OpContext& ctx) {
  return {{"x-amz-request-id", ctx.request_id},
          {"x-amz-id-2", ctx.request_id},
          {"Date", FormatHttpDate(UnixNowNs())},
          {"Server", "strata"}};
}

OpResult SendXml(OpContext& ctx, const std::string& xml, int status, const http::Headers& extra) {
  http::Headers h = BaseHeaders(ctx);
  h.insert(h.end(), extra.begin(), extra.end());
  h.emplace_back("Content-Type", "application/xml");
  if (ctx.out.Start(status, h, xml.size()).ok()) ctx.out.Write(xml).IgnoreError();
  return std::nullopt;
}

OpResult SendEmpty(OpContext& ctx, int status, http::Headers headers) {
  http::Headers h = BaseHeaders(ctx);
  h.insert(h.end(), headers.begin(), headers.end());
  ctx.out.Start(status, h, 0).IgnoreError();
  return std::nullopt;
}

std::variant<std::string, Error> ReadSmallBody(OpContext& ctx, size_t max_bytes) {
  std::string body;
  char buf[16384];
  while (true) {
    auto n = ctx.body.Read(buf, sizeof(buf));
    if (!n.ok()) return FromBodyStatus(n.status());
    if (*n == 0) break;
    body.append(buf, *n);
    if (body.size() > max_bytes) {
      return MakeError(ErrorCode::kMalformedXML, "Request body is too large");
    }
  }
  return body;
}

void WriteOwner(const OpContext& ctx, XmlWriter& w, std::string_view element,
                const std::string& canonical_id) {
  w.Open(element);
  w.Element("ID", canonical_id);
  auto name = ctx.config.identities ? ctx.config.identities->DisplayName(canonical_id)
                                    : std::nullopt;
  w.Element("DisplayName", name ? *name : canonical_id);
  w.Close(element);
}

std::string BucketOwnerId(const OpContext& ctx, const object::BucketRecord& bucket) {
  return BucketOwnerId(ctx, bucket.owner);
}

std::string BucketOwnerId(const OpContext& ctx, const std::string& stored_owner) {
  const bool canonical = stored_owner.size() == 64 &&
                         stored_owner.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (canonical || !ctx.config.identities) return stored_owner;
  return ctx.config.identities->root().canonical_id;
}

std::variant<object::BucketRecord, Error> BucketOf(OpContext& ctx) {
  auto rec = ctx.engine.GetBucket(ctx.route.bucket);
  if (!rec.ok()) return FromStatus(rec.status(), ErrorCode::kNoSuchBucket);
  return std::move(rec).value();
}

}  // namespace strata::s3
