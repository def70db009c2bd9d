// The access group: what access control costs (issue 12).
//  - Policy evaluation, in process: one request evaluated against a compiled
//    20-statement policy whose statements all match principal, action and
//    resource, each with four conditions (IpAddress / NotIpAddress,
//    StringEquals, Bool, StringNotEquals on an absent key), 19 denies that do
//    not apply before the allow that does: every statement is evaluated.
//    Target: <= 2 us per evaluation.
//  - GET 4 KiB at c=16 by a user allowed by a 20-statement bucket policy with
//    conditions vs by root on a bucket without a policy (no evaluation at
//    all), the two alternating run by run. Target >= 95 %.
#include <chrono>
#include <cstdio>
#include <string>

#include "auth/policy.h"
#include "common/encoding.h"
#include "pattern.h"
#include "s3_cases.h"
#include "workload.h"

namespace strata::bench {
namespace {

constexpr char kPlainBucket[] = "bench-access-plain";
constexpr char kPolicyBucket[] = "bench-access-policy";
constexpr int kKeys = 256;
constexpr size_t kObjectBytes = 4096;
constexpr int kStatements = 20;

std::string KeyOf(int i) { return "obj/" + std::to_string(i); }

// kStatements statements about `principal_arn` on `bucket`'s objects, all
// matching principal, action and resource, so every one is evaluated: the
// first kStatements-1 deny unless the source is loopback (their last
// condition fails), the last allows; each has four conditions.
std::string TwentyStatementPolicy(const std::string& bucket, const std::string& principal_arn) {
  std::string out = R"({"Version":"2012-10-17","Statement":[)";
  for (int i = 0; i < kStatements; ++i) {
    const bool last = i == kStatements - 1;
    if (i) out += ",";
    out += R"({"Sid":"S)" + std::to_string(i) + R"(","Effect":")" + (last ? "Allow" : "Deny") +
           R"(","Principal":{"AWS":")" + principal_arn +
           R"("},"Action":["s3:GetObject","s3:GetObjectVersion"],)"
           R"("Resource":"arn:aws:s3:::)" + bucket + R"(/*","Condition":{)" +
           (last ? R"("IpAddress")" : R"("NotIpAddress")") +
           R"(:{"aws:SourceIp":["10.)" + std::to_string(i) + R"(.0.0/16","127.0.0.0/8"]},)"
           R"("StringEquals":{"s3:signatureversion":"AWS4-HMAC-SHA256"},)"
           R"("Bool":{"aws:SecureTransport":"false"},)"
           R"("StringNotEquals":{"s3:x-amz-server-side-encryption":"aws:kms"}}})";
  }
  return out + "]}";
}

std::string JsonField(const std::string& json, const std::string& name) {
  const std::string needle = "\"" + name + "\":\"";
  size_t at = json.find(needle);
  if (at == std::string::npos) return "";
  size_t from = at + needle.size();
  return json.substr(from, json.find('"', from) - from);
}

// A user with one access key through the admin API (root's target); its ARN
// and credentials. Created once per server (the name is reused).
Target MakeUser(const Target& root, std::string* arn) {
  auto client = root.NewClient();
  const std::string name = "bench-reader";
  client->Send({"POST", "/_strata/admin/user-create", "name=" + name}, "");  // 409 when it exists
  S3Response user = client->Send({"GET", "/_strata/admin/user", "name=" + name}, "");
  if (user.status == 404) throw NotImplementedError("no identity admin API");
  ExpectStatus(user, 200, "admin user " + name);
  *arn = JsonField(user.body, "arn");
  for (const std::string& key_field : {std::string("access_key")}) {  // drop old keys: at most 2
    size_t at = 0;
    while ((at = user.body.find("\"" + key_field + "\":\"", at)) != std::string::npos) {
      std::string id = JsonField(user.body.substr(at), key_field);
      client->Send({"POST", "/_strata/admin/key-delete", "id=" + id}, "");
      at += key_field.size() + 3;
    }
  }
  S3Response key = client->Send({"POST", "/_strata/admin/key-create", "user=" + name}, "");
  ExpectStatus(key, 200, "admin key-create");
  Target t = root;
  t.credentials = {JsonField(key.body, "access_key"), JsonField(key.body, "secret_key")};
  return t;
}

class Conditions : public auth::ConditionContext {
 public:
  const std::vector<std::string>* Values(std::string_view key) const override {
    if (key == "aws:sourceip") return &ip_;
    if (key == "s3:signatureversion") return &signature_;
    if (key == "aws:securetransport") return &tls_;
    return nullptr;
  }

 private:
  std::vector<std::string> ip_{"127.0.0.1"}, signature_{"AWS4-HMAC-SHA256"}, tls_{"false"};
};

RunFigure EvaluationRun(const auth::Policy& policy, double duration_s) {
  auth::Principal p;
  p.kind = auth::Principal::Kind::kUser;
  p.account = "123456789012";
  p.arn = "arn:aws:iam::123456789012:user/bench-reader";
  Conditions conditions;
  auth::EvalRequest req{&p, "s3:GetObject", "arn:aws:s3:::bench-access-policy/obj/7", &conditions};
  using Clock = std::chrono::steady_clock;
  uint64_t n = 0;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(duration_s);
  while (Clock::now() < end) {
    for (int i = 0; i < 1000; ++i) {
      if (policy.Evaluate(req) != auth::Decision::kAllow) throw BenchError("policy did not allow");
    }
    n += 1000;
  }
  double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / n;
  return RunFigure{us, us, NAN};
}

Operation GetWorker(const Target& target, const std::string& bucket, int worker) {
  auto client = std::shared_ptr<S3Client>(target.NewClient());
  client->Connect();
  auto rng = std::make_shared<uint64_t>(0x9E3779B97F4A7C15ull * (worker + 1));
  return [client, rng, bucket](uint64_t) {
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    int i = static_cast<int>(*rng % kKeys);
    S3Response resp = client->Send({"GET", ObjectPath(bucket, KeyOf(i))}, "");
    ExpectStatus(resp, 200, "GET 4 KiB (" + bucket + ")");
    if (resp.body != SharedPattern().Slice(i * 4099, kObjectBytes)) {
      throw BenchError("GET 4 KiB: wrong data for " + bucket + "/" + KeyOf(i));
    }
  };
}

}  // namespace

void RunAccess(const CaseOptions& opt, const Target& target, Report& report) {
  Row& eval = report.Add("policy_eval", "policy evaluation, 20 statements x 4 conditions",
                         Unit::kMicroseconds);
  {
    auto parsed = auth::Policy::Parse(
        TwentyStatementPolicy("bench-access-policy", "arn:aws:iam::123456789012:user/bench-reader"),
        auth::Policy::Kind::kResource);
    if (auto* e = std::get_if<auth::PolicyError>(&parsed)) throw BenchError(e->message);
    const auth::Policy& policy = std::get<auth::Policy>(parsed);
    report.Measure(eval, opt.runs, [&](int) { return EvaluationRun(policy, opt.duration_s / 2); });
    char line[160];
    std::snprintf(line, sizeof line, "policy evaluation: %.2f us per request (target <= 2 us: %s)",
                  eval.median(), eval.median() <= 2.0 ? "met" : "MISSED");
    report.AddNote(line);
  }

  std::string arn;
  Target user = MakeUser(target, &arn);
  EnsureBucket(target, kPlainBucket);
  EnsureBucket(target, kPolicyBucket);
  S3Response put = target.NewClient()->Send({"PUT", "/" + std::string(kPolicyBucket), "policy"},
                                            TwentyStatementPolicy(kPolicyBucket, arn));
  ExpectStatus(put, 204, "PutBucketPolicy");
  for (const char* bucket : {kPlainBucket, kPolicyBucket}) {
    PopulateKeys(target, bucket, kKeys, 16, KeyOf,
                 [](int i) { return SharedPattern().Slice(i * 4099, kObjectBytes); });
  }
  constexpr int kConcurrency = 16;
  Row& plain = report.Add("get4k_no_policy", "GET 4 KiB c=16, root, no bucket policy",
                          Unit::kOpsPerSecond);
  Row& policed = report.Add("get4k_policy", "GET 4 KiB c=16, user via 20-statement policy",
                            Unit::kOpsPerSecond, {{"get4k_no_policy"}, "no policy", 0.95});
  auto measure = [&](const Target& who, const std::string& bucket) {
    TimedResult r = RunTimed(kConcurrency, opt.duration_s,
                             [&](int worker) { return GetWorker(who, bucket, worker); });
    return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
  };
  for (int run = 0; run < opt.runs; ++run) {
    report.MeasureRun(plain, run, opt.runs, [&](int) { return measure(target, kPlainBucket); });
    report.MeasureRun(policed, run, opt.runs, [&](int) { return measure(user, kPolicyBucket); });
  }
}

}  // namespace strata::bench
