#include "server/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace strata::server {
namespace {

// Sets (or unsets, with nullptr) the root credential variables for one test.
class RootEnv {
 public:
  RootEnv(const char* user, const char* password) {
    Set("STRATA_ROOT_USER", user);
    Set("STRATA_ROOT_PASSWORD", password);
  }
  ~RootEnv() {
    unsetenv("STRATA_ROOT_USER");
    unsetenv("STRATA_ROOT_PASSWORD");
  }

 private:
  static void Set(const char* name, const char* value) {
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
};

std::string TempDir() {
  char tmpl[] = "/tmp/strata-config-test-XXXXXX";
  char* d = mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

TEST(ServerConfig, ShortRootSecretIsRefused) {
  std::string dir = TempDir();
  {
    RootEnv env("admin", "fifteen-chars!!");  // 15
    auto r = LoadRootCredentials(dir);
    ASSERT_TRUE(std::holds_alternative<std::string>(r));
    EXPECT_NE(std::get<std::string>(r).find("at least 16 characters"), std::string::npos)
        << std::get<std::string>(r);
  }
  {
    RootEnv env("admin", "sixteen-chars!!!");  // 16
    auto r = LoadRootCredentials(dir);
    ASSERT_TRUE(std::holds_alternative<RootCredentials>(r));
    EXPECT_EQ(std::get<RootCredentials>(r).secret_key, "sixteen-chars!!!");
  }
  {
    RootEnv env("admin", "strata-test-secret-key-0123456789");  // the test harnesses'
    EXPECT_TRUE(std::holds_alternative<RootCredentials>(LoadRootCredentials(dir)));
  }
  // A credentials file edited to a short secret is refused as well.
  {
    RootEnv env(nullptr, nullptr);
    std::ofstream(dir + "/root-credentials") << "admin\nshort\n";
    auto r = LoadRootCredentials(dir);
    ASSERT_TRUE(std::holds_alternative<std::string>(r));
    EXPECT_NE(std::get<std::string>(r).find("at least 16 characters"), std::string::npos);
    ::unlink((dir + "/root-credentials").c_str());
    // A generated one is long enough, and read back as it was written.
    auto generated = LoadRootCredentials(dir);
    ASSERT_TRUE(std::holds_alternative<RootCredentials>(generated));
    EXPECT_GE(std::get<RootCredentials>(generated).secret_key.size(), kMinRootSecretChars);
    auto again = LoadRootCredentials(dir);
    ASSERT_TRUE(std::holds_alternative<RootCredentials>(again));
    EXPECT_EQ(std::get<RootCredentials>(again).secret_key,
              std::get<RootCredentials>(generated).secret_key);
    ::unlink((dir + "/root-credentials").c_str());
  }
  ::rmdir(dir.c_str());
}

Config Parsed(const std::vector<std::string>& args) {
  auto r = ParseServerArgs(args);
  EXPECT_TRUE(std::holds_alternative<Config>(r))
      << (std::holds_alternative<UsageError>(r) ? std::get<UsageError>(r).message : "");
  return std::holds_alternative<Config>(r) ? std::get<Config>(r) : Config{};
}

// The usage error's message (fails the test when the line parsed).
std::string Refused(const std::vector<std::string>& args) {
  auto r = ParseServerArgs(args);
  EXPECT_TRUE(std::holds_alternative<UsageError>(r)) << (args.empty() ? "" : args[0]);
  if (!std::holds_alternative<UsageError>(r)) return "";
  const UsageError& e = std::get<UsageError>(r);
  EXPECT_EQ(e.kind, UsageError::Kind::kUsage);
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_NE(e.help.find("--listen"), std::string::npos);  // the server's help comes along
  return e.message;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

TEST(ServerConfig, Defaults) {
  Config c = Parsed({});
  Config d;
  EXPECT_EQ(c.listen_host, "127.0.0.1");
  EXPECT_EQ(c.listen_port, 9000);
  EXPECT_EQ(c.data_dir, "./data");
  EXPECT_EQ(c.domain, "");
  EXPECT_EQ(c.region, "us-east-1");
  EXPECT_TRUE(c.sigv2);
  EXPECT_EQ(c.workers, 64);
  EXPECT_EQ(c.max_workers, 1024);
  EXPECT_EQ(c.event_loops, 0);
  EXPECT_EQ(c.bulk_nice, 10);
  EXPECT_EQ(c.max_connections, 8192);
  EXPECT_EQ(c.idle_timeout_s, 60);
  EXPECT_EQ(c.header_timeout_s, 20);
  EXPECT_EQ(c.min_body_bytes_per_s, 4096);
  EXPECT_TRUE(c.drives.empty());
  EXPECT_EQ(c.ec_k, 0);
  EXPECT_EQ(c.ec_m, -1);
  EXPECT_EQ(c.scrub_interval_s, 24 * 3600);
  EXPECT_EQ(c.checkpoint_interval_s, 600);
  EXPECT_EQ(c.kv_listen_host, "127.0.0.1");
  EXPECT_EQ(c.kv_listen_port, 7450);
  EXPECT_FALSE(c.kv_listen_explicit);
  EXPECT_EQ(c.kv_workers, 32);
  EXPECT_EQ(c.kv_max_connections, 4096);
  EXPECT_EQ(c.kv_max_connections_per_ip, 512);
  EXPECT_EQ(c.kv_idle_timeout_s, 300);
  EXPECT_EQ(c.kv_default_quota_bytes, 8ull << 30);
  EXPECT_EQ(c.kv_max_bytes, 0u);
  EXPECT_FALSE(c.kv_max_bytes_explicit);
  EXPECT_EQ(d.workers, c.workers);
  EXPECT_EQ(c.metrics_listen_port, -1);  // metrics are off unless asked for
}

TEST(ServerConfig, MetricsListener) {
  Config c = Parsed({"--metrics-listen", "0.0.0.0:7451", "--metrics-token-file", "/etc/t"});
  EXPECT_EQ(c.metrics_listen_host, "0.0.0.0");
  EXPECT_EQ(c.metrics_listen_port, 7451);
  EXPECT_EQ(c.metrics_token_file, "/etc/t");
  EXPECT_EQ(Parsed({"--metrics-listen", "off"}).metrics_listen_port, -1);
  EXPECT_CONTAINS(Refused({"--metrics-token-file", "/etc/t"}), "needs --metrics-listen");
  EXPECT_CONTAINS(Refused({"--metrics-listen", "nope"}), "--metrics-listen");
}

TEST(ServerConfig, EveryFlag) {
  // clang-format off
  Config c = Parsed({"--listen", "0.0.0.0:9001", "--data", "/srv/meta",
                     "--domain", "s3.example.com", "--region", "eu-west-1",
                     "--workers", "8", "--max-workers", "300", "--event-loops", "3", "--sigv2", "off",
                     "--max-connections", "40", "--idle-timeout-s", "2",
                     "--header-timeout-s", "3", "--min-body-rate", "0",
                     "--drives", "/d1,/d2,/d3,/d4,/d5,/d6", "--ec", "4+2",
                     "--scrub-interval-s", "0", "--checkpoint-interval-s", "30",
                     "--kv-listen", "127.0.0.1:0", "--kv-workers", "4",
                     "--kv-max-connections", "100", "--kv-max-connections-per-ip", "10",
                     "--kv-idle-timeout-s", "0", "--kv-default-quota", "1048576",
                     "--kv-max-bytes", "0"});
  // clang-format on
  EXPECT_EQ(c.listen_host, "0.0.0.0");
  EXPECT_EQ(c.listen_port, 9001);
  EXPECT_EQ(c.data_dir, "/srv/meta");
  EXPECT_EQ(c.domain, "s3.example.com");
  EXPECT_EQ(c.region, "eu-west-1");
  EXPECT_EQ(c.workers, 8);
  EXPECT_EQ(c.max_workers, 300);
  EXPECT_EQ(c.event_loops, 3);
  EXPECT_FALSE(c.sigv2);
  EXPECT_EQ(c.max_connections, 40);
  EXPECT_EQ(c.idle_timeout_s, 2);
  EXPECT_EQ(c.header_timeout_s, 3);
  EXPECT_EQ(c.min_body_bytes_per_s, 0);
  EXPECT_EQ(c.drives, (std::vector<std::string>{"/d1", "/d2", "/d3", "/d4", "/d5", "/d6"}));
  EXPECT_EQ(c.ec_k, 4);
  EXPECT_EQ(c.ec_m, 2);
  EXPECT_EQ(c.scrub_interval_s, 0);
  EXPECT_EQ(c.checkpoint_interval_s, 30);
  EXPECT_EQ(c.kv_listen_host, "127.0.0.1");
  EXPECT_EQ(c.kv_listen_port, 0);
  EXPECT_TRUE(c.kv_listen_explicit);
  EXPECT_EQ(c.kv_workers, 4);
  EXPECT_EQ(c.kv_max_connections, 100);
  EXPECT_EQ(c.kv_max_connections_per_ip, 10);
  EXPECT_EQ(c.kv_idle_timeout_s, 0);
  EXPECT_EQ(c.kv_default_quota_bytes, 1048576u);
  EXPECT_EQ(c.kv_max_bytes, 0u);
  EXPECT_TRUE(c.kv_max_bytes_explicit);  // 0 given: no cap, not the default
  EXPECT_EQ(Parsed({"--kv-max-bytes", "999999999999999999"}).kv_max_bytes, 999999999999999999ull);
}

TEST(ServerConfig, FlagForms) {
  // --flag=value, the last of a repeated flag, IPv6 and empty hosts, --kv-listen off.
  Config c = Parsed({"--workers=12", "--region", "a", "--region", "b", "--listen", "[::1]:9002",
                     "--kv-listen", ":9101", "--sigv2", "on", "--ec", "8+0"});
  EXPECT_EQ(c.workers, 12);
  EXPECT_EQ(c.region, "b");
  EXPECT_EQ(c.listen_host, "::1");
  EXPECT_EQ(c.listen_port, 9002);
  EXPECT_EQ(c.kv_listen_host, "");
  EXPECT_EQ(c.kv_listen_port, 9101);
  EXPECT_TRUE(c.sigv2);
  EXPECT_EQ(c.ec_k, 8);
  EXPECT_EQ(c.ec_m, 0);
  Config off = Parsed({"--kv-listen", "off"});
  EXPECT_EQ(off.kv_listen_port, -1);
  EXPECT_TRUE(off.kv_listen_explicit);
  // Leading zeros are decimal (CLI11 alone would read "010" as octal).
  EXPECT_EQ(Parsed({"--workers", "010"}).workers, 10);
  EXPECT_EQ(Parsed({"--bulk-nice", "0"}).bulk_nice, 0);
  EXPECT_EQ(Parsed({"--bulk-nice", "19"}).bulk_nice, 19);
}

TEST(ServerConfig, BadValues) {
  EXPECT_CONTAINS(Refused({"--listen", "9000"}), "--listen: needs HOST:PORT");
  EXPECT_CONTAINS(Refused({"--listen", "h:70000"}), "--listen");
  EXPECT_CONTAINS(Refused({"--listen", "h:x"}), "--listen");
  EXPECT_CONTAINS(Refused({"--kv-listen", "nowhere"}), "--kv-listen");
  EXPECT_CONTAINS(Refused({"--workers", "0"}), "--workers");
  EXPECT_CONTAINS(Refused({"--workers", "12x"}), "needs a whole number from 1 to 65536, got '12x'");
  EXPECT_CONTAINS(Refused({"--workers", "0x10"}), "--workers");
  EXPECT_CONTAINS(Refused({"--workers", "-1"}), "--workers");
  EXPECT_CONTAINS(Refused({"--kv-workers", "4097"}), "--kv-workers");
  EXPECT_CONTAINS(Refused({"--bulk-nice", "20"}), "--bulk-nice");
  EXPECT_CONTAINS(Refused({"--bulk-nice", "-1"}), "--bulk-nice");
  EXPECT_CONTAINS(Refused({"--kv-max-connections", "0"}), "--kv-max-connections");
  EXPECT_CONTAINS(Refused({"--kv-max-connections-per-ip", "1e3"}), "--kv-max-connections-per-ip");
  EXPECT_CONTAINS(Refused({"--kv-idle-timeout-s", "604801"}), "--kv-idle-timeout-s");
  EXPECT_CONTAINS(Refused({"--max-connections", "0"}), "--max-connections");
  EXPECT_CONTAINS(Refused({"--idle-timeout-s", "0"}), "--idle-timeout-s");
  EXPECT_CONTAINS(Refused({"--header-timeout-s", ""}), "--header-timeout-s");
  EXPECT_CONTAINS(Refused({"--min-body-rate", "fast"}), "--min-body-rate");
  EXPECT_CONTAINS(Refused({"--scrub-interval-s", "daily"}), "--scrub-interval-s");
  EXPECT_CONTAINS(Refused({"--checkpoint-interval-s", "-5"}), "--checkpoint-interval-s");
  EXPECT_CONTAINS(Refused({"--sigv2", "yes"}), "--sigv2");
  EXPECT_CONTAINS(Refused({"--kv-default-quota", "8G"}), "--kv-default-quota");
  EXPECT_CONTAINS(Refused({"--kv-max-bytes", "-1"}), "--kv-max-bytes");
  EXPECT_CONTAINS(Refused({"--kv-max-bytes", "1000000000000000000"}), "--kv-max-bytes");
  EXPECT_CONTAINS(Refused({"--ec", "4"}), "--ec: needs K+M");
  EXPECT_CONTAINS(Refused({"--ec", "0+2"}), "--ec");
  EXPECT_CONTAINS(Refused({"--ec", "4+2x"}), "--ec");
  EXPECT_CONTAINS(Refused({"--drives", "/a,,/b"}), "--drives: has an empty entry");
  EXPECT_CONTAINS(Refused({"--drives", ""}), "--drives");
  // A flag without its value.
  EXPECT_CONTAINS(Refused({"--data"}), "--data");
  EXPECT_CONTAINS(Refused({"--kv-max-connections-per-ip"}), "--kv-max-connections-per-ip");
}

TEST(ServerConfig, UnknownFlagsAndWords) {
  EXPECT_CONTAINS(Refused({"--no-such-flag"}), "--no-such-flag");
  EXPECT_CONTAINS(Refused({"--listen", "127.0.0.1:1", "stray"}), "stray");
}

TEST(ServerConfig, Help) {
  for (std::vector<std::string> line :
       {std::vector<std::string>{"--help"}, {"-h"}, {"--workers", "3", "--help"}}) {
    auto r = ParseServerArgs(line);
    ASSERT_TRUE(std::holds_alternative<UsageError>(r));
    const UsageError& e = std::get<UsageError>(r);
    EXPECT_EQ(e.kind, UsageError::Kind::kHelp);
    EXPECT_EQ(e.exit_code(), 0);
    for (const char* flag : {"--listen",
                             "--data",
                             "--domain",
                             "--region",
                             "--workers",
                             "--drives",
                             "--ec",
                             "--scrub-interval-s",
                             "--checkpoint-interval-s",
                             "--kv-listen",
                             "--kv-workers",
                             "--kv-max-connections",
                             "--kv-max-connections-per-ip",
                             "--kv-idle-timeout-s",
                             "--sigv2",
                             "--max-connections",
                             "--idle-timeout-s",
                             "--header-timeout-s",
                             "--min-body-rate",
                             "STRATA_ROOT_PASSWORD"}) {
      EXPECT_CONTAINS(e.help, flag);
    }
  }
}

TEST(CommandLine, Commands) {
  auto command = [](std::vector<std::string> line) -> Command {
    auto r = ParseCommandLine(line);
    EXPECT_TRUE(std::holds_alternative<Command>(r))
        << line[0] << ": "
        << (std::holds_alternative<UsageError>(r) ? std::get<UsageError>(r).message : "");
    return std::holds_alternative<Command>(r) ? std::get<Command>(r) : Command{};
  };
  auto server = command({"server", "--data", "/x"});
  ASSERT_TRUE(std::holds_alternative<ServerCommand>(server));
  EXPECT_EQ(std::get<ServerCommand>(server).config.data_dir, "/x");

  auto drives = command({"admin", "drives", "--endpoint", "http://127.0.0.1:9123/"});
  ASSERT_TRUE(std::holds_alternative<AdminDrivesCommand>(drives));
  EXPECT_EQ(std::get<AdminDrivesCommand>(drives).admin.host, "127.0.0.1");
  EXPECT_EQ(std::get<AdminDrivesCommand>(drives).admin.port, 9123);
  EXPECT_EQ(std::get<AdminDrivesCommand>(drives).admin.data_dir, "./data");

  // The target before or after the flags; a bucket may be named like a command.
  for (std::vector<std::string> line :
       {std::vector<std::string>{"admin", "heal", "drives/some/prefix", "--endpoint", "host:1"},
        {"admin", "heal", "--data", "/d", "--endpoint", "http://host:1", "drives/some/prefix"}}) {
    auto heal = command(line);
    ASSERT_TRUE(std::holds_alternative<AdminHealCommand>(heal));
    const AdminHealCommand& h = std::get<AdminHealCommand>(heal);
    EXPECT_EQ(h.bucket, "drives");
    EXPECT_EQ(h.prefix, "some/prefix");
    EXPECT_EQ(h.admin.host, "host");
    EXPECT_EQ(h.admin.port, 1);
  }
  auto all = command({"admin", "heal"});
  ASSERT_TRUE(std::holds_alternative<AdminHealCommand>(all));
  EXPECT_EQ(std::get<AdminHealCommand>(all).bucket, "");
  EXPECT_EQ(std::get<AdminHealCommand>(all).admin.port, 9000);
  auto server_bucket = command({"admin", "heal", "server"});
  ASSERT_TRUE(std::holds_alternative<AdminHealCommand>(server_bucket));
  EXPECT_EQ(std::get<AdminHealCommand>(server_bucket).bucket, "server");
  auto default_port = command({"admin", "drives", "--endpoint", "http://example"});
  EXPECT_EQ(std::get<AdminDrivesCommand>(default_port).admin.port, 9000);

  auto rebuild =
      command({"admin", "rebuild-index", "--drives", "/a,/b", "--data", "/m", "--ec", "1+1"});
  ASSERT_TRUE(std::holds_alternative<RebuildIndexCommand>(rebuild));
  const Config& rc = std::get<RebuildIndexCommand>(rebuild).config;
  EXPECT_EQ(rc.drives, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(rc.data_dir, "/m");
  EXPECT_EQ(rc.ec_k, 1);

  // strata load: every argument after it goes to the Python loader untouched, --help and
  // flags strata itself has (--data) included.
  auto load = command({"load", "s3://b/m/", "--verify", "--data", "x", "--help"});
  ASSERT_TRUE(std::holds_alternative<LoadCommand>(load));
  EXPECT_EQ(std::get<LoadCommand>(load).args,
            (std::vector<std::string>{"s3://b/m/", "--verify", "--data", "x", "--help"}));
}

TEST(CommandLine, UsageErrors) {
  auto refused = [](std::vector<std::string> line) -> UsageError {
    auto r = ParseCommandLine(line);
    EXPECT_TRUE(std::holds_alternative<UsageError>(r)) << (line.empty() ? "" : line[0]);
    return std::holds_alternative<UsageError>(r) ? std::get<UsageError>(r) : UsageError{};
  };
  EXPECT_CONTAINS(refused({}).message, "missing command");
  EXPECT_EQ(refused({}).exit_code(), 2);
  EXPECT_CONTAINS(refused({"serve"}).message, "serve");
  EXPECT_CONTAINS(refused({"admin"}).message, "drives, heal, rebuild-index, user, key, group, policy, kms, tiers, audit or energy");
  EXPECT_EQ(refused({"admin", "kms", "rotate"}).exit_code(), 2);  // needs the key
  EXPECT_CONTAINS(refused({"admin", "policy", "attach", "p"}).message, "--user or --group");
  EXPECT_CONTAINS(refused({"admin", "policy", "attach", "p", "--user", "u", "--group", "g"}).message,
                  "--user or --group");
  {
    auto parsed = ParseCommandLine({"admin", "policy", "attach", "p", "--group", "g"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    const auto& iam = std::get<AdminIamCommand>(std::get<Command>(parsed));
    EXPECT_EQ(iam.method, "POST");
    EXPECT_EQ(iam.action, "policy-attach");
    std::vector<std::pair<std::string, std::string>> want = {{"name", "p"}, {"group", "g"}};
    EXPECT_EQ(iam.query, want);
    parsed = ParseCommandLine({"admin", "group", "add", "readers", "bob"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    want = {{"group", "readers"}, {"user", "bob"}};
    EXPECT_EQ(std::get<AdminIamCommand>(std::get<Command>(parsed)).query, want);
    EXPECT_CONTAINS(refused({"admin", "user"}).message, "subcommand");
    // The key service's verbs: create-key with its optional alias and description.
    parsed = ParseCommandLine({"admin", "kms", "create-key", "--alias", "alias/a", "--description", "d"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    const auto& create = std::get<AdminIamCommand>(std::get<Command>(parsed));
    EXPECT_EQ(create.action, "kms-create-key");
    want = {{"alias", "alias/a"}, {"description", "d"}};
    EXPECT_EQ(create.query, want);
    parsed = ParseCommandLine({"admin", "kms", "disable", "alias/a"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    want = {{"key", "alias/a"}};
    EXPECT_EQ(std::get<AdminIamCommand>(std::get<Command>(parsed)).query, want);
    EXPECT_EQ(std::get<AdminIamCommand>(std::get<Command>(parsed)).method, "POST");
    // The audit trail's query: only the filters given go to the server.
    parsed = ParseCommandLine({"admin", "audit", "query", "--bucket", "b", "--identity", "",
                               "--from", "2026-12-01T00:00:00Z", "--json"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    const auto& q = std::get<AdminIamCommand>(std::get<Command>(parsed));
    EXPECT_EQ(q.action, "audit-query");
    EXPECT_EQ(q.method, "GET");
    EXPECT_TRUE(q.json_lines);
    want = {{"from", "2026-12-01T00:00:00Z"}, {"identity", ""}, {"bucket", "b"}};
    EXPECT_EQ(q.query, want);
    parsed = ParseCommandLine({"admin", "audit", "verify"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    EXPECT_EQ(std::get<AdminIamCommand>(std::get<Command>(parsed)).action, "audit-verify");
  }
  {
    auto parsed = ParseCommandLine({"server", "--sse-c-over-http", "--kms-key-file", "/k"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    const Config& c = std::get<ServerCommand>(std::get<Command>(parsed)).config;
    EXPECT_TRUE(c.sse_c_over_http);
    EXPECT_EQ(c.kms_key_file, "/k");
  }
  EXPECT_CONTAINS(refused({"admin", "scrub"}).message, "scrub");
  // TLS: the certificate pair serves --listen-tls and --kv-tls; each needs the pair.
  EXPECT_CONTAINS(refused({"server", "--kv-tls"}).message, "--kv-tls needs --tls-cert and --tls-key");
  EXPECT_CONTAINS(refused({"server", "--kv-tls", "--tls-cert", "c", "--tls-key", "k", "--kv-listen",
                           "off"}).message,
                  "--kv-tls needs the KV-cache listener");
  EXPECT_CONTAINS(refused({"server", "--tls-cert", "c", "--tls-key", "k"}).message,
                  "need --listen-tls HOST:PORT or --kv-tls");
  {
    auto parsed = ParseCommandLine({"server", "--kv-tls", "--tls-cert", "c", "--tls-key", "k"});
    ASSERT_TRUE(std::holds_alternative<Command>(parsed));
    const Config& c = std::get<ServerCommand>(std::get<Command>(parsed)).config;
    EXPECT_TRUE(c.kv_tls);
    EXPECT_EQ(c.tls_listen_port, -1);
    EXPECT_EQ(c.tls_cert, "c");
  }
  EXPECT_CONTAINS(refused({"admin", "rebuild-index", "--data", "/m"}).message, "needs --drives");
  EXPECT_CONTAINS(refused({"admin", "rebuild-index", "--drives", "/a", "--listen", "h:1"}).message,
                  "--listen");
  EXPECT_CONTAINS(refused({"admin", "drives", "--endpoint", "https://h:1"}).message,
                  "only http://");
  EXPECT_CONTAINS(refused({"admin", "drives", "--endpoint", "http://h:0"}).message, "--endpoint");
  EXPECT_CONTAINS(refused({"admin", "drives", "--endpoint"}).message, "--endpoint");
  EXPECT_CONTAINS(refused({"admin", "drives", "extra"}).message, "extra");
  EXPECT_CONTAINS(refused({"admin", "heal", "a", "b"}).message, "b");
  UsageError help = refused({"--help"});
  EXPECT_EQ(help.kind, UsageError::Kind::kHelp);
  EXPECT_CONTAINS(help.help, "server");
  EXPECT_CONTAINS(help.help, "admin");
  UsageError heal_help = refused({"admin", "heal", "--help"});
  EXPECT_EQ(heal_help.kind, UsageError::Kind::kHelp);
  EXPECT_CONTAINS(heal_help.help, "--endpoint");
  EXPECT_CONTAINS(heal_help.help, "BUCKET[/PREFIX]");
}

}  // namespace
}  // namespace strata::server
