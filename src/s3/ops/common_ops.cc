// Response helpers shared by the operations.
#include "common/time_util.h"
#include "s3/ops/op_context.h"

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

}  // namespace strata::s3
