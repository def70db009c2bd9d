#include "server/console.h"

#include <nlohmann/json.hpp>

#include "audit/context.h"
#include "audit/log.h"
#include "auth/authorizer.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/time_util.h"
#include "server/console_wire.h"

namespace strata::server {

namespace {

constexpr std::string_view kRoot = "/_strata/console";
constexpr size_t kMaxLoginBody = 4096;

// Headers every console answer carries: no caching, no framing, no sniffing,
// scripts and connections to this origin only.
http::Headers BaseHeaders(std::string_view content_type) {
  return {{"Content-Type", std::string(content_type)},
          {"Cache-Control", "no-store"},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          {"Content-Security-Policy",
           "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
           "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"}};
}

void Send(http::ResponseWriter& out, int status, std::string_view body,
          std::string_view content_type = "application/json", http::Headers extra = {}) {
  http::Headers h = BaseHeaders(content_type);
  for (auto& e : extra) h.push_back(std::move(e));
  if (out.Start(status, h, body.size()).ok()) out.Write(body).IgnoreError();
}

void SendError(http::ResponseWriter& out, int status, std::string_view message,
               http::Headers extra = {}) {
  nlohmann::json j = {{"error", std::string(message)}};
  Send(out, status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
       "application/json", std::move(extra));
}

// The body, or nullopt when it is longer than `max` (or unreadable).
std::optional<std::string> ReadBody(ByteSource& body, size_t max) {
  std::string out;
  char buf[8192];
  while (true) {
    auto n = body.Read(buf, sizeof buf);
    if (!n.ok()) return std::nullopt;
    if (*n == 0) return out;
    if (out.size() + *n > max) return std::nullopt;
    out.append(buf, *n);
  }
}

// The session cookie's value (the first Cookie header that has one), or "".
std::string CookieValue(const http::Request& req) {
  for (const auto& [name, value] : req.headers) {
    if (name != "cookie") continue;
    if (auto v = console::CookieNamed(value, console::kCookieName)) return std::string(*v);
  }
  return "";
}

std::string SessionCookie(const std::string& id, bool secure, int64_t max_age_s) {
  return std::string(console::kCookieName) + "=" + id + "; Path=/_strata/console; HttpOnly; SameSite=Strict" +
         (secure ? "; Secure" : "") + "; Max-Age=" + std::to_string(max_age_s);
}

}  // namespace

Console::Console(s3::AdminApi* admin, auth::IdentityStore* identities, audit::AuditLog* audit,
                 ConsoleOptions options)
    : admin_(admin), identities_(identities), audit_(audit), options_(options) {}

bool Console::Owns(const http::Request& req) {
  std::string_view p = req.raw_path;
  return p.starts_with(kRoot) && (p.size() == kRoot.size() || p[kRoot.size()] == '/');
}

size_t Console::sessions() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

std::optional<Console::Session> Console::SessionOf(const http::Request& req) {
  const std::string id = CookieValue(req);
  if (id.size() != 64) return std::nullopt;
  const int64_t now = UnixNowNs();
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  if (now - it->second.seen_ns > options_.idle_ns ||
      now - it->second.created_ns > options_.max_age_ns ||
      !identities_->Resolve(it->second.access_key)) {  // key disabled or deleted meanwhile
    sessions_.erase(it);
    return std::nullopt;
  }
  it->second.seen_ns = now;
  return it->second;
}

void Console::Denied(const http::Request& req, const std::string& identity,
                     const std::string& result) {
  if (!audit_) return;
  audit::Actor a;
  a.kind = audit::Kind::kDenied;
  a.operation = "ConsoleSignIn";
  a.identity = identity;
  a.source = req.remote_addr;
  audit_->RecordRequest(a, audit::Kind::kDenied, result, 403);
}

bool Console::MayCall(const std::string& access_key, const std::string& action) const {
  auto caller = identities_->Resolve(access_key);
  if (!caller) return false;
  if (caller->principal.kind == auth::Principal::Kind::kRoot) return true;
  const std::string name = "strata:" + action;
  return auth::Authorize(*caller, nullptr, {name, "*"}) == auth::AccessDecision::kAllow;
}

void Console::Login(const http::Request& req, ByteSource& body, http::ResponseWriter& out) {
  std::string address = req.remote_addr;
  if (size_t colon = address.rfind(':'); colon != std::string::npos && address[0] != '[') {
    address.resize(colon);
  }
  const int64_t now = UnixNowNs();
  {
    std::lock_guard lock(mu_);
    Failures& f = failures_[address];
    if (now - f.since_ns > options_.failure_window_ns) f = {0, now};
    if (f.count >= options_.max_failures) {
      return SendError(out, 429, "too many failed sign-ins from this address; try again later",
                       {{"Retry-After", std::to_string(options_.failure_window_ns / 1'000'000'000)}});
    }
  }
  auto text = ReadBody(body, kMaxLoginBody);
  if (!text) return SendError(out, 413, "sign-in body too large");
  std::optional<console::SignIn> sign_in = console::ParseSignIn(*text);
  if (!sign_in) {
    return SendError(out, 400, "sign-in needs {\"access_key\": ..., \"secret_key\": ...}");
  }
  const std::string& ak = sign_in->access_key;
  const std::string& sk = sign_in->secret_key;
  auto secret = identities_->Secret(ak);
  auto caller = identities_->Resolve(ak);
  bool ok = secret && caller && console::TokensEqual(*secret, sk);
  bool allowed = ok && (caller->principal.kind == auth::Principal::Kind::kRoot ||
                        auth::Authorize(*caller, nullptr, {"strata:Console", "*"}) ==
                            auth::AccessDecision::kAllow);
  if (!allowed) {
    {
      std::lock_guard lock(mu_);
      ++failures_[address].count;
      if (failures_.size() > 65536) failures_.clear();  // bounded; a flood resets the counts
    }
    Denied(req, ak, ok ? "AccessDenied" : "SignatureDoesNotMatch");
    return SendError(out, 403, ok ? "this identity may not use the console (strata:Console)"
                                  : "sign-in refused: unknown access key or wrong secret key");
  }
  Session s;
  s.access_key = ak;
  s.csrf = HexEncode(RandomBytes(32));
  s.created_ns = s.seen_ns = now;
  const std::string id = HexEncode(RandomBytes(32));
  {
    std::lock_guard lock(mu_);
    failures_.erase(address);
    // A session id the client already had is dropped: every sign-in gets a new one.
    const std::string old = CookieValue(req);
    if (!old.empty()) sessions_.erase(old);
    if (sessions_.size() >= options_.max_sessions) {
      auto oldest = sessions_.begin();
      for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
        if (it->second.seen_ns < oldest->second.seen_ns) oldest = it;
      }
      sessions_.erase(oldest);
    }
    sessions_[id] = s;
  }
  const std::string reply = console::SignInReply(
      ak, caller->principal.kind == auth::Principal::Kind::kRoot ? "root" : caller->principal.username,
      s.csrf);
  Send(out, 200, reply, "application/json",
       {{"Set-Cookie", SessionCookie(id, req.secure, options_.max_age_ns / 1'000'000'000)}});
}

void Console::Logout(const http::Request& req, http::ResponseWriter& out) {
  {
    std::lock_guard lock(mu_);
    sessions_.erase(CookieValue(req));
  }
  Send(out, 200, R"({"done":"signed out"})", "application/json",
       {{"Set-Cookie", SessionCookie("", req.secure, 0)}});
}

void Console::AdminCall(const http::Request& req, const Session& s, const std::string& action,
                        ByteSource& body, http::ResponseWriter& out) {
  // Reads too: an identity allowed strata:Console alone signs in and sees
  // nothing it was not given (users, keys and the audit trail included).
  const bool reads = req.method == "GET" || req.method == "HEAD";
  if (!MayCall(s.access_key, action)) {
    return SendError(out, 403, "not allowed: strata:" + action);
  }
  auto text = ReadBody(body, s3::AdminApi::kMaxAdminBody);
  if (!text) return SendError(out, 413, "request body too large");
  if (req.Query().malformed()) return SendError(out, 400, "malformed query string");
  // Runs in an audit scope of its own: what the action changes is recorded
  // as the signed-in identity's console request.
  audit::Actor actor;
  actor.operation = "ConsoleAdmin";
  actor.identity = s.access_key;
  actor.source = req.remote_addr;
  actor.key = action;
  std::optional<audit::Scope> scope;
  if (audit_ && !reads) scope.emplace(&actor);
  auto [status, json] = admin_->HandleAs(s.access_key, req.method, action, req.Query().Pairs(), *text);
  scope.reset();
  Send(out, status, json);
}

void Console::Handle(const http::Request& req, ByteSource& body, http::ResponseWriter& out) {
  std::string_view path = std::string_view(req.raw_path).substr(kRoot.size());
  if (path.empty()) {
    return Send(out, 301, "", "text/plain", {{"Location", "/_strata/console/"}});
  }
  path.remove_prefix(1);  // '/'
  if (!path.starts_with("api/")) {
    if (req.method != "GET" && req.method != "HEAD") return SendError(out, 405, "GET only");
    const ConsoleAsset* a = FindConsoleAsset(path.empty() ? "index.html" : path);
    if (!a) return SendError(out, 404, "no such console page");
    http::Headers h = BaseHeaders(a->content_type);
    if (out.Start(200, h, a->size, req.method == "GET").ok() && req.method == "GET") {
      out.Write(std::string_view(a->data, a->size)).IgnoreError();
    }
    return;
  }
  path.remove_prefix(4);
  const bool changes = req.method != "GET" && req.method != "HEAD";
  if (changes) {
    // Cross-site requests are refused before anything else is looked at.
    if (const std::string* origin = req.Header("origin")) {
      const std::string* host = req.Header("host");
      const std::string want = std::string(req.secure ? "https://" : "http://") + (host ? *host : "");
      if (*origin != want) return SendError(out, 403, "cross-origin request refused");
    }
  }
  if (path == "login") {
    if (req.method != "POST") return SendError(out, 405, "POST only");
    return Login(req, body, out);
  }
  std::optional<Session> s = SessionOf(req);
  if (!s) return SendError(out, 401, "not signed in");
  if (changes) {
    const std::string* token = req.Header("x-strata-csrf");
    if (!token || !console::TokensEqual(*token, s->csrf)) {
      return SendError(out, 403, "missing or wrong CSRF token (X-Strata-CSRF)");
    }
  }
  if (path == "session") {
    if (req.method != "GET") return SendError(out, 405, "GET only");
    nlohmann::json j = {{"access_key", s->access_key}, {"csrf", s->csrf}};
    return Send(out, 200, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  if (path == "logout") {
    if (req.method != "POST") return SendError(out, 405, "POST only");
    return Logout(req, out);
  }
  if (path.starts_with("admin/") && path.size() > 6) {
    auto action = UriDecode(path.substr(6));
    if (!action) return SendError(out, 400, "malformed action");
    return AdminCall(req, *s, *action, body, out);
  }
  SendError(out, 404, "no such console call");
}

}  // namespace strata::server
