// The dispatch of the operation table (s3/router.h): one case per row, each
// calling the row's handler. The rows whose handler is a shared
// implementation with a flag (ListObjects, GetObject, UploadPart) are
// defined here as one-line calls of it.
#include "s3/ops/op_context.h"

namespace strata::s3 {

OpResult ListObjectsV1(OpContext& ctx) { return ListObjects(ctx, /*v2=*/false); }
OpResult ListObjectsV2(OpContext& ctx) { return ListObjects(ctx, /*v2=*/true); }
OpResult GetObject(OpContext& ctx) { return GetObject(ctx, /*head=*/false); }
OpResult HeadObject(OpContext& ctx) { return GetObject(ctx, /*head=*/true); }
OpResult UploadPart(OpContext& ctx) { return UploadPart(ctx, /*copy=*/false); }

OpResult Dispatch(OpContext& ctx) {
  switch (ctx.route.op) {
#define STRATA_S3_OP_DISPATCH(name, action, source_action) \
  case Op::k##name:                                        \
    return name(ctx);
    STRATA_S3_OPERATIONS(STRATA_S3_OP_DISPATCH)
#undef STRATA_S3_OP_DISPATCH
  }
  return MakeError(ErrorCode::kNotImplemented);
}

}  // namespace strata::s3
