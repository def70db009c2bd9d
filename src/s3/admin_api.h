// The interface of strata's admin API (/_strata/admin/<action>, an S3 route:
// Op::kAdmin). s3/ routes and authenticates the request and forwards it here;
// the server wiring implements it (server/admin_api.h: drives, heal, ...).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace strata::s3 {

// Handle returns the HTTP status and a JSON body for /_strata/admin/<action>;
// `query` is the request's decoded query, in order.
class AdminApi {
 public:
  virtual ~AdminApi() = default;
  virtual std::pair<int, std::string> Handle(
      const std::string& method, const std::string& action,
      const std::vector<std::pair<std::string, std::string>>& query) = 0;
};

}  // namespace strata::s3
