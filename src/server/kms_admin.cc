// The key service's actions of the admin API (root only; docs/admin-api.md):
//   GET  kms-keys | kms-key?key=        keys (id, ARN, alias, state, rotations)
//   POST kms-create-key[?alias=&description=&external=true]  (external: in the KMIP server)
//   POST kms-rotate?key=  kms-disable?key=  kms-enable?key=
// Errors: {"error": "..."} with 400 (bad alias), 404 (no such key), 409
// (alias taken, the SSE-S3 key cannot be disabled), 405, 500.
#include <nlohmann/json.hpp>

#include "common/time_util.h"
#include "server/admin_api.h"

namespace strata::server {

namespace {

using nlohmann::json;
using Reply = std::pair<int, std::string>;

json KeyJson(const kms::KeyInfo& k) {
  return {{"key_id", k.id},
          {"arn", k.arn},
          {"alias", k.alias},
          {"description", k.description},
          {"state", k.enabled ? "Enabled" : "Disabled"},
          {"managed", k.managed},
          {"origin", k.external ? "EXTERNAL_KEY_STORE" : "AWS_KMS"},
          {"materials", k.materials},
          {"created", FormatIso8601(k.created_ns)},
          {"rotated", k.rotated_ns ? FormatIso8601(k.rotated_ns) : ""}};
}

Reply Key(const Result<kms::KeyInfo>& r) {
  if (!r.ok()) return AdminErrorFrom(r.status());
  return {200, KeyJson(*r).dump()};
}

}  // namespace

std::optional<Reply> HandleKmsAction(kms::KeyService& kms, const std::string& method,
                                     const std::string& action,
                                     const std::vector<std::pair<std::string, std::string>>& query) {
  if (!action.starts_with("kms-")) return std::nullopt;
  auto q = [&](std::string_view name) -> std::string {
    for (const auto& [k, v] : query) {
      if (k == name) return v;
    }
    return {};
  };
  const bool get = action == "kms-keys" || action == "kms-key";
  if (method != (get ? "GET" : "POST")) return AdminError(405, action + " takes " + (get ? "GET" : "POST"));
  if (action == "kms-keys") {
    json keys = json::array();
    for (const kms::KeyInfo& k : kms.ListKeys()) keys.push_back(KeyJson(k));
    return Reply{200, json{{"keys", keys}}.dump()};
  }
  if (action == "kms-create-key") {
    const std::string external = q("external");
    if (!external.empty() && external != "true" && external != "false") {
      return AdminError(400, "external= takes true or false");
    }
    return Key(kms.CreateKey(q("alias"), q("description"), external == "true"));
  }
  const std::string key = q("key");
  if (key.empty()) return AdminError(400, action + " needs key=");
  if (action == "kms-key") return Key(kms.Describe(key));
  if (action == "kms-rotate") return Key(kms.Rotate(key));
  if (action == "kms-disable") return Key(kms.SetEnabled(key, false));
  if (action == "kms-enable") return Key(kms.SetEnabled(key, true));
  return AdminError(404, "unknown admin action " + method + " " + action);
}

}  // namespace strata::server
