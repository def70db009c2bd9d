// Admin actions the console's bucket pages use (docs/admin-api.md):
//   GET  buckets                 every bucket: versioning, Object Lock, lifecycle
//                                rules, policy, encryption, objects and bytes
//   POST presign?method=&bucket=[&key=][&query=]&host=[&expires=]
//                                a SigV4 presigned URL (path style, relative) for
//                                one S3 request, signed with the caller's own key:
//                                S3 then checks the caller's rights as for any
//                                request. A body (e.g. a lifecycle document) makes
//                                Content-MD5 part of the signature, returned to send;
//                                bypass_governance=true signs
//                                x-amz-bypass-governance-retention: true as well.
#include <nlohmann/json.hpp>

#include "auth/signer.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/time_util.h"
#include "server/admin_api.h"

namespace strata::server {

std::optional<std::pair<int, std::string>> HandleBucketAction(
    object::ObjectEngine* engine, auth::IdentityStore* identities, object::UsageCounter* usage,
    const std::string& region, const std::string& caller, const std::string& method,
    const std::string& action, const std::vector<std::pair<std::string, std::string>>& query,
    const std::string& body) {
  auto q = [&](std::string_view name) -> const std::string* {
    for (const auto& [k, v] : query) {
      if (k == name) return &v;
    }
    return nullptr;
  };
  if (action == "buckets" && method == "GET") {
    auto list = engine->ListBuckets();
    if (!list.ok()) return AdminErrorFrom(list.status());
    std::map<std::string, object::BucketUsage> counts;
    if (usage) counts = usage->Snapshot();
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [name, b] : *list) {
      const char* versioning = b.versioning == object::Versioning::kEnabled     ? "Enabled"
                               : b.versioning == object::Versioning::kSuspended ? "Suspended"
                                                                                : "";
      size_t rules = 0;
      for (size_t at = b.lifecycle.find("<Rule>"); at != std::string::npos;
           at = b.lifecycle.find("<Rule>", at + 1)) {
        ++rules;
      }
      nlohmann::json j = {{"name", name},
                          {"created", FormatIso8601(b.created_ns)},
                          {"region", b.region},
                          {"versioning", versioning},
                          {"object_lock", b.object_lock},
                          {"lifecycle_rules", rules},
                          {"lifecycle", b.lifecycle},
                          {"policy", !b.policy.empty()},
                          {"encryption", b.default_sse == object::SseMode::kS3    ? "AES256"
                                         : b.default_sse == object::SseMode::kKms ? "aws:kms"
                                                                                  : ""}};
      if (auto it = counts.find(name); it != counts.end()) {
        j["objects"] = it->second.objects;
        j["bytes"] = it->second.bytes;
      }
      out.push_back(std::move(j));
    }
    return std::make_pair(200, nlohmann::json({{"buckets", out}}).dump(
                                   -1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  if (action == "presign" && method == "POST") {
    const std::string* m = q("method");
    const std::string* bucket = q("bucket");
    const std::string* host = q("host");
    if (!m || !bucket || !host || bucket->empty() || host->empty()) {
      return AdminError(400, "presign needs method, bucket and host");
    }
    if (*m != "GET" && *m != "PUT" && *m != "DELETE" && *m != "HEAD" && *m != "POST") {
      return AdminError(400, "presign: method must be GET, PUT, DELETE, HEAD or POST");
    }
    int64_t expires = 300;
    if (const std::string* e = q("expires")) {
      char* end = nullptr;
      long long v = std::strtoll(e->c_str(), &end, 10);
      if (e->empty() || *end != '\0' || v < 1 || v > 604800) {
        return AdminError(400, "presign: expires must be 1 to 604800 seconds");
      }
      expires = v;
    }
    auto secret = identities->Secret(caller);
    if (!secret) return AdminError(403, "presign: the caller's key is not active");
    const std::string* key = q("key");
    std::string path = "/" + UriEncode(*bucket, true);
    if (key && !key->empty()) path += "/" + UriEncode(*key, false);
    const std::string* sub = q("query");
    const std::string raw_query = sub ? *sub : "";
    auth::RequestToSign req;
    req.method = *m;
    req.raw_path = path;
    req.raw_query = raw_query;
    req.headers = {{"host", *host}};
    nlohmann::json send_headers = nlohmann::json::object();
    if (!body.empty()) {
      StreamHash h(StreamHash::Kind::kMd5);
      h.Update(body.data(), body.size());
      const std::string md5 = Base64Encode(h.Final());
      req.headers.emplace_back("content-md5", md5);
      send_headers["Content-MD5"] = md5;
    }
    if (const std::string* bypass = q("bypass_governance"); bypass && *bypass == "true") {
      // Signed, so S3 obeys it (an unsigned x-amz- header is not trusted);
      // S3 still checks s3:BypassGovernanceRetention for the caller.
      req.headers.emplace_back("x-amz-bypass-governance-retention", "true");
      send_headers["x-amz-bypass-governance-retention"] = "true";
    }
    auth::Signer signer({caller, *secret, region});
    const std::string signed_query = signer.Presign(req, UnixNowNs() / 1'000'000'000, expires);
    nlohmann::json j = {{"url", path + "?" + signed_query},
                        {"method", *m},
                        {"expires_seconds", expires},
                        {"headers", send_headers}};
    return std::make_pair(200, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return std::nullopt;
}

}  // namespace strata::server
