#include "server/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

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

TEST(ServerConfig, KvConnectionFlags) {
  auto parsed = ParseServerArgs({"--kv-max-connections", "100", "--kv-max-connections-per-ip", "10",
                                 "--kv-workers", "8", "--kv-idle-timeout-s", "0"});
  ASSERT_TRUE(std::holds_alternative<Config>(parsed)) << std::get<std::string>(parsed);
  const Config& c = std::get<Config>(parsed);
  EXPECT_EQ(c.kv_max_connections, 100);
  EXPECT_EQ(c.kv_max_connections_per_ip, 10);
  EXPECT_EQ(c.kv_workers, 8);
  EXPECT_EQ(c.kv_idle_timeout_s, 0);
  Config defaults = std::get<Config>(ParseServerArgs({}));
  EXPECT_EQ(defaults.kv_max_connections, 4096);
  EXPECT_EQ(defaults.kv_max_connections_per_ip, 512);
  for (std::vector<std::string> bad : {std::vector<std::string>{"--kv-max-connections", "0"},
                                       {"--kv-max-connections", "12x"},
                                       {"--kv-max-connections-per-ip"},
                                       {"--kv-workers", "-1"}}) {
    EXPECT_TRUE(std::holds_alternative<std::string>(ParseServerArgs(bad))) << bad[0];
  }
}

}  // namespace
}  // namespace strata::server
