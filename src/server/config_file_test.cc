// `strata server --config FILE` (server/config_file.h): the TOML settings,
// flags overriding them, and the checks of a tiered layout (CheckPools) that
// keep a server from starting on a bad one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "server/config.h"
#include "server/config_file.h"

namespace strata::server {
namespace {

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/strata-config-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    ::unlink((dir_ + "/c.toml").c_str());
    ::rmdir(dir_.c_str());
  }
  std::string Write(const std::string& text) {
    std::ofstream(dir_ + "/c.toml") << text;
    return dir_ + "/c.toml";
  }
  std::variant<Config, UsageError> Parse(const std::string& text,
                                         std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--config", Write(text)};
    args.insert(args.end(), extra.begin(), extra.end());
    return ParseServerArgs(args);
  }
  Config Ok(const std::string& text, std::vector<std::string> extra = {}) {
    auto r = Parse(text, std::move(extra));
    EXPECT_TRUE(std::holds_alternative<Config>(r))
        << (std::holds_alternative<UsageError>(r) ? std::get<UsageError>(r).message : "");
    return std::holds_alternative<Config>(r) ? std::get<Config>(r) : Config{};
  }
  std::string Refused(const std::string& text) {
    auto r = Parse(text);
    EXPECT_TRUE(std::holds_alternative<UsageError>(r)) << text;
    return std::holds_alternative<UsageError>(r) ? std::get<UsageError>(r).message : "";
  }
  std::string dir_;
};

constexpr char kFourTiers[] = R"(
listen = "0.0.0.0:9100"
data = "/srv/strata"
lifecycle_day_seconds = 2
[[pool]]
name = "gpu"
media = "gpu-direct"
path = "pools/gpu"
[[pool]]
name = "hot"
media = "hot"
path = "pools/hot"
[[pool]]
name = "warm"
media = "warm"
drives = ["pools/warm/d1", "pools/warm/d2", "pools/warm/d3", "pools/warm/d4"]
ec = "2+2"
[[pool]]
name = "cold"
media = "cold"
path = "/archive/cold"
[storage_classes]
GLACIER_IR = "cold"
)";

TEST_F(ConfigFileTest, FourTiersAndFlagsOverride) {
  Config c = Ok(kFourTiers, {"--listen", "127.0.0.1:9200"});
  EXPECT_EQ(c.listen_host, "127.0.0.1");  // the flag wins
  EXPECT_EQ(c.listen_port, 9200);
  EXPECT_EQ(c.data_dir, "/srv/strata");
  EXPECT_EQ(c.lifecycle_day_seconds, 2);
  ASSERT_EQ(c.pools.size(), 4u);
  EXPECT_EQ(c.pools[2].name, "warm");
  EXPECT_EQ(c.pools[2].drives.size(), 4u);
  EXPECT_EQ(c.pools[2].ec_k, 2);
  EXPECT_EQ(c.pools[2].ec_m, 2);
  EXPECT_EQ(PoolPath(c, c.pools[0].drives[0]), "/srv/strata/pools/gpu");
  EXPECT_EQ(PoolPath(c, c.pools[3].drives[0]), "/archive/cold");
  ASSERT_EQ(c.storage_classes.size(), 1u);
  EXPECT_EQ(c.storage_classes[0].second, "cold");
  Config d = Ok(kFourTiers, {"--lifecycle-day-seconds", "5", "--data", "/other"});
  EXPECT_EQ(d.lifecycle_day_seconds, 5);
  EXPECT_EQ(PoolPath(d, d.pools[1].drives[0]), "/other/pools/hot");
}

TEST_F(ConfigFileTest, DirectWritesSetting) {
  EXPECT_FALSE(Ok("data = \"/d\"\n", {}).direct_writes);  // off unless turned on
  EXPECT_TRUE(Ok("direct_writes = true\n", {}).direct_writes);
  EXPECT_FALSE(Ok("direct_writes = true\n", {"--direct-writes", "off"}).direct_writes);
  EXPECT_TRUE(Ok("", {"--direct-writes", "on"}).direct_writes);
  std::string m = Refused("direct_writes = \"no\"\n");
  EXPECT_NE(m.find("direct_writes: needs true or false"), std::string::npos) << m;
}

TEST_F(ConfigFileTest, AuditTrailSettings) {
  Config on = Ok("data = \"/d\"\n", {});
  EXPECT_TRUE(on.audit);  // on unless turned off
  EXPECT_EQ(on.audit_checkpoint_records, 1000);
  Config c = Ok("audit = false\naudit_key_file = \"/keys/audit\"\n"
                "audit_checkpoint_records = 50\naudit_checkpoint_seconds = 3\n",
                {});
  EXPECT_FALSE(c.audit);
  EXPECT_EQ(c.audit_key_file, "/keys/audit");
  EXPECT_EQ(c.audit_checkpoint_records, 50);
  EXPECT_EQ(c.audit_checkpoint_seconds, 3);
  EXPECT_EQ(on.audit_bucket, "");  // exports are opted into
  Config e = Ok("audit_bucket = \"trail\"\naudit_retention_days = 7\naudit_export_records = 5\n"
                "audit_export_seconds = 2\n",
                {});
  EXPECT_EQ(e.audit_bucket, "trail");
  EXPECT_EQ(e.audit_retention_days, 7);
  EXPECT_EQ(e.audit_export_records, 5);
  EXPECT_EQ(e.audit_export_seconds, 2);
  Config flag = Ok("audit = false\n", {"--audit", "on", "--audit-key-file", "/k"});
  EXPECT_TRUE(flag.audit);  // the flag wins
  EXPECT_EQ(flag.audit_key_file, "/k");
  std::string m = Refused("audit = \"yes\"\n");
  EXPECT_NE(m.find("audit: needs true or false"), std::string::npos) << m;
  m = Refused("audit_checkpoint_records = 0\n");
  EXPECT_NE(m.find("audit_checkpoint_records: needs a whole number from 1"), std::string::npos)
      << m;
}

TEST_F(ConfigFileTest, NotificationWebhooks) {
  Config c = Ok("[notify.webhook.ingest]\nendpoint = \"http://127.0.0.1:8080/events\"\n"
                "auth_token = \"t0ken\"\nqueue_limit = 50\n"
                "[notify.webhook.audit-copy]\nendpoint = \"https://hooks.example/x\"\n"
                "timeout_seconds = 9\n",
                {});
  ASSERT_EQ(c.webhooks.size(), 2u);
  // Tables come in key order.
  EXPECT_EQ(c.webhooks[0].id, "audit-copy");
  EXPECT_EQ(c.webhooks[0].queue_limit, 100000);
  EXPECT_EQ(c.webhooks[0].timeout_seconds, 9);
  EXPECT_EQ(c.webhooks[1].id, "ingest");
  EXPECT_EQ(c.webhooks[1].endpoint, "http://127.0.0.1:8080/events");
  EXPECT_EQ(c.webhooks[1].auth_token, "t0ken");
  EXPECT_EQ(c.webhooks[1].queue_limit, 50);
  std::string m = Refused("[notify.webhook.a]\nauth_token = \"x\"\n");
  EXPECT_NE(m.find("notify.webhook.a: needs endpoint"), std::string::npos) << m;
  m = Refused("[notify.webhook.a]\nendpoint = \"ftp://x\"\n");
  EXPECT_NE(m.find("notify.webhook.a.endpoint: needs http"), std::string::npos) << m;
  m = Refused("[notify.webhook.a]\nendpoint = \"http://x\"\nretries = 3\n");
  EXPECT_NE(m.find("notify.webhook.a.retries: unknown key"), std::string::npos) << m;
  m = Refused("[notify.kafka.a]\nendpoint = \"http://x\"\n");
  EXPECT_NE(m.find("notify.kafka: unknown kind"), std::string::npos) << m;
  m = Refused("[notify.webhook.\"a b\"]\nendpoint = \"http://x\"\n");
  EXPECT_NE(m.find("an id needs"), std::string::npos) << m;
}

TEST_F(ConfigFileTest, KmipKeyServer) {
  Config c = Ok("[kmip]\nendpoint = \"kms.example:5696\"\nca = \"ca.pem\"\ncert = \"s.pem\"\n"
                "key = \"s.key\"\n");
  EXPECT_EQ(c.kmip_host, "kms.example");
  EXPECT_EQ(c.kmip_port, 5696);
  EXPECT_EQ(c.kmip_ca, "ca.pem");
  EXPECT_EQ(c.kmip_cert, "s.pem");
  EXPECT_EQ(c.kmip_key, "s.key");
  // The flags override the file.
  c = Ok("[kmip]\nendpoint = \"kms.example:5696\"\ncert = \"s.pem\"\nkey = \"s.key\"\n",
         {"--kmip-endpoint", "10.0.0.7:15696"});
  EXPECT_EQ(c.kmip_host, "10.0.0.7");
  EXPECT_EQ(c.kmip_port, 15696);
  std::string m = Refused("[kmip]\nendpoint = \"kms.example\"\ncert = \"s.pem\"\nkey = \"s.key\"\n");
  EXPECT_NE(m.find("kmip.endpoint: needs HOST:PORT"), std::string::npos) << m;
  m = Refused("[kmip]\nendpoint = \"kms.example:5696\"\npassword = \"x\"\n");
  EXPECT_NE(m.find("kmip.password: unknown key"), std::string::npos) << m;
  // Mutual TLS: no endpoint without strata's certificate, no TLS files without an endpoint.
  m = Refused("[kmip]\nendpoint = \"kms.example:5696\"\n");
  EXPECT_NE(m.find("--kmip-endpoint needs --kmip-cert and --kmip-key"), std::string::npos) << m;
  m = Refused("[kmip]\ncert = \"s.pem\"\n");
  EXPECT_NE(m.find("need --kmip-endpoint"), std::string::npos) << m;
}

TEST_F(ConfigFileTest, BadFilesNameTheKeyAndLine) {
  std::string m = Refused("listen = 9000\n");
  EXPECT_NE(m.find(":1: listen: needs a string"), std::string::npos) << m;
  m = Refused("\n\nlisten_port = 1\n");
  EXPECT_NE(m.find(":3: listen_port: unknown key"), std::string::npos) << m;
  m = Refused("listen = \"x\n");  // not TOML
  EXPECT_NE(m.find("--config: "), std::string::npos) << m;
  m = Refused("[[pool]]\nname = \"hot\"\nmedia = \"hot\"\npath = \"a\"\ncolor = \"red\"\n");
  EXPECT_NE(m.find("pool.color: unknown key"), std::string::npos) << m;
  m = Refused("[[pool]]\nname = \"hot\"\nmedia = \"hot\"\n");
  EXPECT_NE(m.find("needs a path, drives or a remote bucket"), std::string::npos) << m;
  EXPECT_EQ(Ok("max_workers = 77\n", {}).max_workers, 77);
  EXPECT_EQ(Ok("event_loops = 6\n", {}).event_loops, 6);
  m = Refused("workers = 0\n");
  EXPECT_NE(m.find("workers: needs a whole number from 1"), std::string::npos) << m;
  auto missing = ParseServerArgs({"--config", dir_ + "/absent.toml"});
  ASSERT_TRUE(std::holds_alternative<UsageError>(missing));
  EXPECT_NE(std::get<UsageError>(missing).message.find("cannot be read"), std::string::npos);
}

// The advisor's power and cost model and its KV idle threshold.
TEST_F(ConfigFileTest, AdvisorModelCoefficients) {
  Config c = Ok("advisor_kv_idle_days = 3\n[advisor_model]\ncurrency = \"EUR\"\n"
                "hot = { watts_per_tib = 0.9, cost_per_tib_month = 45 }\n"
                "cold = { watts_per_tib = 0, cost_per_tib_month = 2.5 }\n");
  EXPECT_EQ(c.advisor_kv_idle_days, 3);
  EXPECT_EQ(c.advisor_currency, "EUR");
  ASSERT_EQ(c.advisor_media_costs.size(), 2u);
  EXPECT_EQ(c.advisor_media_costs[0].first, "cold");  // toml++ tables iterate in key order
  EXPECT_EQ(c.advisor_media_costs[0].second, (std::pair<double, double>{0, 2.5}));
  EXPECT_EQ(c.advisor_media_costs[1].first, "hot");
  EXPECT_EQ(c.advisor_media_costs[1].second, (std::pair<double, double>{0.9, 45}));
  EXPECT_EQ(Ok("advisor_kv_idle_days = 3\n", {"--advisor-kv-idle-days", "9"}).advisor_kv_idle_days,
            9);
  std::string m = Refused("[advisor_model]\nlukewarm = { watts_per_tib = 1, cost_per_tib_month = 1 }\n");
  EXPECT_NE(m.find("advisor_model.lukewarm: unknown key"), std::string::npos) << m;
  m = Refused("[advisor_model]\nhot = { watts_per_tib = -1, cost_per_tib_month = 1 }\n");
  EXPECT_NE(m.find("advisor_model.hot.watts_per_tib: needs a number from 0"), std::string::npos) << m;
  m = Refused("[advisor_model]\nhot = { watts_per_tib = nan, cost_per_tib_month = 1 }\n");
  EXPECT_NE(m.find("advisor_model.hot.watts_per_tib: needs a number"), std::string::npos) << m;
  m = Refused("[advisor_model]\nwarm = { watts_per_tib = 1 }\n");
  EXPECT_NE(m.find("advisor_model.warm: needs both"), std::string::npos) << m;
  m = Refused("[advisor_model]\nwarm = { watts_per_tib = 1, cost_per_tib_month = 1, color = 2 }\n");
  EXPECT_NE(m.find("advisor_model.warm.color: unknown key"), std::string::npos) << m;
  m = Refused("[advisor_model]\ncurrency = \"\"\n");
  EXPECT_NE(m.find("advisor_model.currency: needs a currency code"), std::string::npos) << m;
  m = Refused("advisor_model = 3\n");
  EXPECT_NE(m.find("advisor_model: needs a table"), std::string::npos) << m;
}

TEST_F(ConfigFileTest, BadLayoutsKeepTheServerFromStarting) {
  auto pools = [](const std::string& extra) {
    return std::string("[[pool]]\nname = \"hot\"\nmedia = \"hot\"\npath = \"p/hot\"\n") + extra;
  };
  std::string m = Refused(pools("[[pool]]\nname = \"hot\"\nmedia = \"warm\"\npath = \"p/w\"\n"));
  EXPECT_NE(m.find("two pools are named 'hot'"), std::string::npos) << m;
  m = Refused(pools("[[pool]]\nname = \"w\"\nmedia = \"tape\"\npath = \"p/w\"\n"));
  EXPECT_NE(m.find("media 'tape'"), std::string::npos) << m;
  // The same directory, or the same one spelled differently (one-directory
  // pools keep their files in DIR/objects, so nesting two is harmless).
  for (const char* dup : {"p/hot", "./p/x/../hot/"}) {
    m = Refused(pools(std::string("[[pool]]\nname = \"w\"\nmedia = \"warm\"\npath = \"") + dup +
                      "\"\n"));
    EXPECT_NE(m.find("overlaps a drive of pool 'hot'"), std::string::npos) << dup << ": " << m;
  }
  // An erasure-coded pool owns its whole drives: nothing may live inside one.
  m = Refused(pools("[[pool]]\nname = \"w\"\nmedia = \"warm\"\ndrives = [\"p\", \"q\"]\n"));
  EXPECT_NE(m.find("overlaps a drive of pool 'hot'"), std::string::npos) << m;
  m = Refused(pools("[[pool]]\nname = \"w\"\nmedia = \"warm\"\ndrives = [\"meta\", \"x\"]\n"));
  EXPECT_NE(m.find("overlaps the metadata directory"), std::string::npos) << m;
  // The data directory itself may be the hot pool (its files in DATA/objects,
  // where the one-pool default keeps them), beside pools under it.
  Config ok = Ok("[[pool]]\nname = \"hot\"\nmedia = \"hot\"\npath = \".\"\n"
                 "[[pool]]\nname = \"warm\"\nmedia = \"warm\"\npath = \"pools/warm\"\n");
  EXPECT_EQ(ok.pools.size(), 2u);
  m = Refused(pools("[storage_classes]\nGLACIER = \"tape\"\n"));
  EXPECT_NE(m.find("no pool of that name"), std::string::npos) << m;
  m = Refused(pools("drives = [\"/d1\", \"/d2\"]\n"));
  // (top-level keys after a [[pool]] table belong to it in TOML)
  EXPECT_NE(m.find("has both path and drives"), std::string::npos) << m;
  auto both = ParseServerArgs({"--config", Write(pools("")), "--drives", "/d1,/d2"});
  ASSERT_TRUE(std::holds_alternative<UsageError>(both));
  EXPECT_NE(std::get<UsageError>(both).message.find("exclusive"), std::string::npos);
  m = Refused("[[pool]]\nname = \"w\"\nmedia = \"warm\"\ndrives = [\"a\", \"b\"]\nec = \"2+2\"\n");
  EXPECT_NE(m.find("needs at least 4 drives"), std::string::npos) << m;
}

constexpr char kRemoteCold[] = R"(
[[pool]]
name = "hot"
media = "hot"
path = "."
[[pool]]
name = "cold"
media = "cold"
[pool.remote]
endpoint = "http://127.0.0.1:9300"
bucket = "archive"
prefix = "site-a/"
access_key = "AK"
secret_key = "SK"
timeout_seconds = 5
part_size_mib = 16
)";

TEST_F(ConfigFileTest, RemoteColdPool) {
  Config c = Ok(kRemoteCold);
  ASSERT_EQ(c.pools.size(), 2u);
  ASSERT_TRUE(c.pools[1].remote);
  EXPECT_TRUE(c.pools[1].drives.empty());
  EXPECT_EQ(c.pools[1].remote->endpoint, "http://127.0.0.1:9300");
  EXPECT_EQ(c.pools[1].remote->bucket, "archive");
  EXPECT_EQ(c.pools[1].remote->prefix, "site-a/");
  EXPECT_EQ(c.pools[1].remote->region, "us-east-1");
  EXPECT_EQ(c.pools[1].remote->timeout_s, 5);
  EXPECT_EQ(c.pools[1].remote->part_size_mib, 16);

  auto with = [](const std::string& from, const std::string& to) {
    std::string t = kRemoteCold;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  std::string m = Refused(with("endpoint = \"http://127.0.0.1:9300\"", "endpoint = \"ftp://h\""));
  EXPECT_NE(m.find("pool.remote.endpoint: needs http://"), std::string::npos) << m;
  m = Refused(with("secret_key = \"SK\"\n", ""));
  EXPECT_NE(m.find("needs secret_key"), std::string::npos) << m;
  m = Refused(with("part_size_mib = 16", "part_size_mib = 1"));
  EXPECT_NE(m.find("part_size_mib: needs a whole number from 5"), std::string::npos) << m;
  m = Refused(with("media = \"cold\"\n", "media = \"cold\"\npath = \"c\"\n"));
  EXPECT_NE(m.find("one or the other"), std::string::npos) << m;
  m = Refused(with("bucket = \"archive\"", "bucket = \"archive\"\ncolour = 1"));
  EXPECT_NE(m.find("pool.remote.colour: unknown key"), std::string::npos) << m;
  // Two pools sweeping the same prefix would remove each other's data.
  m = Refused(std::string(kRemoteCold) +
              "[[pool]]\nname = \"cold2\"\nmedia = \"cold\"\n[pool.remote]\n"
              "endpoint = \"http://127.0.0.1:9300\"\nbucket = \"archive\"\nprefix = \"site-a/x/\"\n"
              "access_key = \"A\"\nsecret_key = \"S\"\n");
  EXPECT_NE(m.find("overlap pool 'cold'"), std::string::npos) << m;
}

TEST_F(ConfigFileTest, ArchivePool) {
  Config c = Ok("[[pool]]\nname = \"hot\"\nmedia = \"hot\"\npath = \".\"\n"
                "[[pool]]\nname = \"tape\"\nmedia = \"cold\"\npath = \"pools/tape\"\n"
                "[pool.archive]\nsegment_size_mib = 64\nzstd_level = 9\n");
  ASSERT_EQ(c.pools.size(), 2u);
  ASSERT_TRUE(c.pools[1].archive);
  EXPECT_EQ(c.pools[1].archive->segment_size_mib, 64);
  EXPECT_EQ(c.pools[1].archive->zstd_level, 9);
  Config d = Ok("[[pool]]\nname = \"hot\"\nmedia = \"hot\"\npath = \".\"\n"
                "[[pool]]\nname = \"tape\"\nmedia = \"cold\"\npath = \"t\"\narchive = {}\n");
  ASSERT_TRUE(d.pools[1].archive);
  EXPECT_EQ(d.pools[1].archive->segment_size_mib, 256);
  std::string m = Refused("[[pool]]\nname = \"t\"\nmedia = \"cold\"\ndrives = [\"a\", \"b\"]\n"
                          "archive = {}\n");
  EXPECT_NE(m.find("an archive pool needs a path"), std::string::npos) << m;
  m = Refused("[[pool]]\nname = \"t\"\nmedia = \"cold\"\npath = \"t\"\n"
              "archive = { zstd_level = 30 }\n");
  EXPECT_NE(m.find("zstd_level: needs a whole number from 1 to 19"), std::string::npos) << m;
}

}  // namespace
}  // namespace strata::server
