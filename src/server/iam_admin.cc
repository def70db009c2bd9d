// The identity actions of the admin API (root only; docs/admin-api.md):
//   GET  users | user?name=            users with their keys (ids, never secrets)
//   POST user-create?name=  user-delete?name=  user-enable?name=  user-disable?name=
//   POST key-create?user=              a new key: the one response holding its secret
//   POST key-enable?id=  key-disable?id=  key-delete?id=
//   GET  groups
//   POST group-create?name=  group-delete?name=  group-add?group=&user=  group-remove?group=&user=
//   GET  policies | policy?name=
//   PUT  policy?name=   (body: the IAM policy document)    POST policy-delete?name=
//   POST policy-attach?name=&user=|&group=   policy-detach?name=&user=|&group=
// Errors: {"error": "..."} with 400 (bad name or document), 404 (no such
// user/key/group/policy), 409 (exists, still attached, third key), 405
// (wrong method), 500.
#include <nlohmann/json.hpp>

#include "common/time_util.h"
#include "server/admin_api.h"

namespace strata::server {

namespace {

using nlohmann::json;
using Reply = std::pair<int, std::string>;

Reply Ok(const json& j) { return {200, j.dump()}; }

std::string Time(int64_t ns) { return FormatIso8601(ns); }

json UserJson(const auth::UserInfo& u) {
  json keys = json::array();
  for (const auto& k : u.keys) {
    keys.push_back({{"access_key", k.id}, {"active", k.active}, {"created", Time(k.created_ns)}});
  }
  return {{"name", u.name},         {"user_id", u.user_id}, {"canonical_id", u.canonical_id},
          {"arn", u.arn},           {"active", u.active},   {"created", Time(u.created_ns)},
          {"groups", u.groups},     {"policies", u.policies}, {"access_keys", keys}};
}

json GroupJson(const auth::GroupInfo& g) {
  return {{"name", g.name}, {"arn", g.arn}, {"created", Time(g.created_ns)},
          {"members", g.members}, {"policies", g.policies}};
}

json PolicyJson(const auth::PolicyInfo& p, bool with_document) {
  json j = {{"name", p.name}, {"arn", p.arn}, {"created", Time(p.created_ns)},
            {"users", p.users}, {"groups", p.groups}};
  if (with_document) j["document"] = p.document;
  return j;
}

}  // namespace

std::optional<Reply> HandleIamAction(
    auth::IdentityStore& ids, const std::string& method, const std::string& action,
    const std::vector<std::pair<std::string, std::string>>& query, const std::string& body) {
  auto q = [&](std::string_view name) -> std::string {
    for (const auto& [k, v] : query) {
      if (k == name) return v;
    }
    return {};
  };
  auto need = [&](std::string_view name) -> std::optional<Reply> {
    if (q(name).empty()) return AdminError(400, action + " needs " + std::string(name) + "=");
    return std::nullopt;
  };
  auto done = [&](const Status& s) -> Reply {
    if (!s.ok()) return AdminErrorFrom(s);
    return Ok(json{{"done", action}});
  };
  const bool get = method == "GET", post = method == "POST", put = method == "PUT";
  auto wrong_method = [&](std::string_view want) {
    return AdminError(405, action + " takes " + std::string(want) + ", not " + method);
  };

  // Users.
  if (action == "users") {
    if (!get) return wrong_method("GET");
    json users = json::array();
    for (const auto& u : ids.ListUsers()) users.push_back(UserJson(u));
    return Ok(json{{"account", ids.account()}, {"users", users}});
  }
  if (action == "user") {
    if (!get) return wrong_method("GET");
    if (auto e = need("name")) return e;
    auto u = ids.GetUser(q("name"));
    if (!u.ok()) return AdminErrorFrom(u.status());
    return Ok(UserJson(*u));
  }
  if (action.starts_with("user-")) {
    if (!post) return wrong_method("POST");
    if (auto e = need("name")) return e;
    const std::string name = q("name");
    if (action == "user-create") {
      auto u = ids.CreateUser(name);
      if (!u.ok()) return AdminErrorFrom(u.status());
      return Ok(UserJson(*u));
    }
    if (action == "user-delete") return done(ids.DeleteUser(name));
    if (action == "user-enable") return done(ids.SetUserActive(name, true));
    if (action == "user-disable") return done(ids.SetUserActive(name, false));
    return std::nullopt;
  }
  // Access keys.
  if (action == "key-create") {
    if (!post) return wrong_method("POST");
    if (auto e = need("user")) return e;
    auto k = ids.CreateKey(q("user"));
    if (!k.ok()) return AdminErrorFrom(k.status());
    return Ok(json{{"user", q("user")}, {"access_key", k->id}, {"secret_key", k->secret}});
  }
  if (action == "key-enable" || action == "key-disable" || action == "key-delete") {
    if (!post) return wrong_method("POST");
    if (auto e = need("id")) return e;
    if (action == "key-delete") return done(ids.DeleteKey(q("id")));
    return done(ids.SetKeyActive(q("id"), action == "key-enable"));
  }
  // Groups.
  if (action == "groups") {
    if (!get) return wrong_method("GET");
    json groups = json::array();
    for (const auto& g : ids.ListGroups()) groups.push_back(GroupJson(g));
    return Ok(json{{"groups", groups}});
  }
  if (action == "group-create" || action == "group-delete") {
    if (!post) return wrong_method("POST");
    if (auto e = need("name")) return e;
    if (action == "group-delete") return done(ids.DeleteGroup(q("name")));
    auto g = ids.CreateGroup(q("name"));
    if (!g.ok()) return AdminErrorFrom(g.status());
    return Ok(GroupJson(*g));
  }
  if (action == "group-add" || action == "group-remove") {
    if (!post) return wrong_method("POST");
    if (auto e = need("group")) return e;
    if (auto e = need("user")) return e;
    if (action == "group-add") return done(ids.AddUserToGroup(q("group"), q("user")));
    return done(ids.RemoveUserFromGroup(q("group"), q("user")));
  }
  // Policies.
  if (action == "policies") {
    if (!get) return wrong_method("GET");
    json policies = json::array();
    for (const auto& p : ids.ListPolicies()) policies.push_back(PolicyJson(p, false));
    return Ok(json{{"policies", policies}});
  }
  if (action == "policy") {
    if (auto e = need("name")) return e;
    if (get) {
      auto p = ids.GetPolicy(q("name"));
      if (!p.ok()) return AdminErrorFrom(p.status());
      return Ok(PolicyJson(*p, true));
    }
    if (!put) return wrong_method("GET or PUT");
    auto p = ids.PutPolicy(q("name"), body);
    if (!p.ok()) return AdminErrorFrom(p.status());
    return Ok(PolicyJson(*p, true));
  }
  if (action == "policy-delete") {
    if (!post) return wrong_method("POST");
    if (auto e = need("name")) return e;
    return done(ids.DeletePolicy(q("name")));
  }
  if (action == "policy-attach" || action == "policy-detach") {
    if (!post) return wrong_method("POST");
    if (auto e = need("name")) return e;
    const bool user = !q("user").empty(), group = !q("group").empty();
    if (user == group) return AdminError(400, action + " needs exactly one of user= or group=");
    const std::string kind = user ? "user" : "group";
    const std::string target = user ? q("user") : q("group");
    if (action == "policy-attach") return done(ids.AttachPolicy(q("name"), kind, target));
    return done(ids.DetachPolicy(q("name"), kind, target));
  }
  return std::nullopt;
}

}  // namespace strata::server
