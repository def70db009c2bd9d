// The web console (docs/console.md), served by strata itself under
// /_strata/console/ on the S3 listeners (TLS when the listener has it):
//
//   GET  /_strata/console/             the page (static assets embedded in the binary)
//   POST /_strata/console/api/login    {"access_key","secret_key"} -> a session
//   GET  /_strata/console/api/session  who is signed in, and the CSRF token
//   POST /_strata/console/api/logout
//   *    /_strata/console/api/admin/<action>   the admin API (JSON), as the
//                                      session's identity
//
// Sessions: a fresh random id (256 bits) at every sign-in — an id the
// client brings is never adopted (no session fixation) — in a cookie that is
// HttpOnly, SameSite=Strict, Path=/_strata/console, Secure over TLS; idle
// for 30 minutes or 12 hours old and it is gone. Every state-changing call
// (anything but GET/HEAD) must carry the session's CSRF token in
// X-Strata-CSRF and, when the browser sends Origin, an Origin of this host.
// Who may sign in: root, or an identity whose policies allow strata:Console;
// such an identity calls (reads as well as changes) only the admin actions
// its policies allow as strata:<admin action> (root: everything). Failed sign-ins are
// audit records (denied) and throttled per client address.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "auth/identities.h"
#include "common/byte_source.h"
#include "http/request.h"
#include "s3/admin_api.h"

namespace strata::audit {
class AuditLog;
}

namespace strata::server {

struct ConsoleOptions {
  int64_t idle_ns = 30ll * 60 * 1'000'000'000;
  int64_t max_age_ns = 12ll * 3600 * 1'000'000'000;
  size_t max_sessions = 4096;
  int max_failures = 5;  // sign-in failures per address per window, then 429
  int64_t failure_window_ns = 60ll * 1'000'000'000;
};

class Console {
 public:
  Console(s3::AdminApi* admin, auth::IdentityStore* identities, audit::AuditLog* audit,
          ConsoleOptions options = {});

  // Whether the request is the console's (its path starts /_strata/console).
  static bool Owns(const http::Request& req);
  void Handle(const http::Request& req, ByteSource& body, http::ResponseWriter& out);

  size_t sessions() const;

 private:
  struct Session {
    std::string access_key;
    std::string csrf;
    int64_t created_ns = 0, seen_ns = 0;
  };
  struct Failures {
    int count = 0;
    int64_t since_ns = 0;
  };
  // The session the request's cookie names (expired ones are dropped), or
  // nullopt.
  std::optional<Session> SessionOf(const http::Request& req);
  void Login(const http::Request& req, ByteSource& body, http::ResponseWriter& out);
  void Logout(const http::Request& req, http::ResponseWriter& out);
  void AdminCall(const http::Request& req, const Session& s, const std::string& action,
                 ByteSource& body, http::ResponseWriter& out);
  bool MayCall(const std::string& access_key, const std::string& action) const;
  void Denied(const http::Request& req, const std::string& identity, const std::string& result);

  s3::AdminApi* admin_;
  auth::IdentityStore* identities_;
  audit::AuditLog* audit_;
  ConsoleOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Session> sessions_;     // guarded by mu_
  std::map<std::string, Failures> failures_;    // by client address; guarded by mu_
};

// The embedded assets (console_assets.cc, generated from server/console/).
struct ConsoleAsset {
  const char* path;  // "index.html"
  const char* content_type;
  const char* data;
  size_t size;
};
const ConsoleAsset* FindConsoleAsset(std::string_view path);

}  // namespace strata::server
