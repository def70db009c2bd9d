// The interface of strata's admin API (/_strata/admin/<action>, an S3 route:
// Op::kAdmin). s3/ routes and authenticates the request and forwards it here;
// the server wiring implements it (server/admin_api.h: drives, heal, ...).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace strata::s3 {

// Handle returns the HTTP status and a JSON body for /_strata/admin/<action>;
// `query` is the request's decoded query, in order; `body` the request body
// (a policy document; at most kMaxAdminBody bytes). Only root reaches it.
class AdminApi {
 public:
  static constexpr size_t kMaxAdminBody = 64 * 1024;
  virtual ~AdminApi() = default;
  virtual std::pair<int, std::string> Handle(
      const std::string& method, const std::string& action,
      const std::vector<std::pair<std::string, std::string>>& query, const std::string& body) = 0;
  // The same, told who signed it (the access key id): actions that record
  // who decided (the advisor's approve / reject) override this one.
  virtual std::pair<int, std::string> HandleAs(
      const std::string& caller, const std::string& method, const std::string& action,
      const std::vector<std::pair<std::string, std::string>>& query, const std::string& body) {
    return Handle(method, action, query, body);
  }
};

}  // namespace strata::s3
