// strata's admin API over the S3 endpoint: /_strata/admin/<action>, signed
// with SigV4 like any request by root (s3/access.h refuses everyone else),
// answered in JSON.
#include "s3/ops/op_context.h"

namespace strata::s3 {

OpResult Admin(OpContext& ctx) {
  if (!ctx.config.admin) {
    return MakeError(ErrorCode::kNotImplemented, "this server has no admin API");
  }
  auto body = ReadSmallBody(ctx, AdminApi::kMaxAdminBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto [status, json] = ctx.config.admin->HandleAs(ctx.access_key, ctx.http.method, ctx.route.key, ctx.route.query,
                                                 std::get<std::string>(body));
  http::Headers h = BaseHeaders(ctx);
  h.emplace_back("Content-Type", "application/json");
  if (ctx.out.Start(status, h, json.size()).ok()) ctx.out.Write(json).IgnoreError();
  return std::nullopt;
}

}  // namespace strata::s3
