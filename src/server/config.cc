#include "server/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "common/encoding.h"
#include "common/hash.h"

namespace strata::server {

namespace {

// A whole decimal number in [lo, hi].
bool ParseInt(const std::string& text, long lo, long hi, int* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

std::variant<Config, std::string> ParseServerArgs(const std::vector<std::string>& args) {
  Config c;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string* {
      return i + 1 < args.size() ? &args[++i] : nullptr;
    };
    const std::string* v = nullptr;
    if (a == "--listen") {
      if (!(v = value())) return "--listen needs HOST:PORT";
      size_t colon = v->rfind(':');
      if (colon == std::string::npos) return "--listen needs HOST:PORT, got " + *v;
      c.listen_host = v->substr(0, colon);
      char* end = nullptr;
      long port = std::strtol(v->c_str() + colon + 1, &end, 10);
      if (*end != '\0' || port < 0 || port > 65535) return "bad port in --listen " + *v;
      c.listen_port = static_cast<int>(port);
    } else if (a == "--kv-listen") {
      if (!(v = value())) return "--kv-listen needs HOST:PORT or off";
      c.kv_listen_explicit = true;
      c.kv_listen_port = -1;
      if (*v == "off") continue;
      size_t colon = v->rfind(':');
      char* end = nullptr;
      long port = colon == std::string::npos ? -1 : std::strtol(v->c_str() + colon + 1, &end, 10);
      if (port < 0 || port > 65535 || *end != '\0') return "bad --kv-listen " + *v;
      c.kv_listen_host = v->substr(0, colon);
      c.kv_listen_port = static_cast<int>(port);
    } else if (a == "--kv-workers") {
      if (!(v = value()) || !ParseInt(*v, 1, 4096, &c.kv_workers)) {
        return "--kv-workers needs a number from 1 to 4096";
      }
    } else if (a == "--kv-max-connections") {
      if (!(v = value()) || !ParseInt(*v, 1, 1'000'000, &c.kv_max_connections)) {
        return "--kv-max-connections needs a positive number";
      }
    } else if (a == "--kv-max-connections-per-ip") {
      if (!(v = value()) || !ParseInt(*v, 1, 1'000'000, &c.kv_max_connections_per_ip)) {
        return "--kv-max-connections-per-ip needs a positive number";
      }
    } else if (a == "--kv-idle-timeout-s") {
      if (!(v = value()) || !ParseInt(*v, 0, 7 * 24 * 3600, &c.kv_idle_timeout_s)) {
        return "--kv-idle-timeout-s needs seconds (0: none)";
      }
    } else if (a == "--kv-default-quota" || a == "--kv-max-bytes") {
      char* end = nullptr;
      errno = 0;
      unsigned long long n = (v = value()) ? std::strtoull(v->c_str(), &end, 10) : 0;
      if (!v || v->empty() || errno != 0 || *end != '\0' || v->front() == '-') {
        return a + " needs a number of bytes (0: none)";
      }
      (a == "--kv-default-quota" ? c.kv_default_quota_bytes : c.kv_max_bytes) = n;
      if (a == "--kv-max-bytes") c.kv_max_bytes_explicit = true;
    } else if (a == "--data") {
      if (!(v = value())) return "--data needs a directory";
      c.data_dir = *v;
    } else if (a == "--domain") {
      if (!(v = value())) return "--domain needs a domain name";
      c.domain = *v;
    } else if (a == "--sigv2") {
      if (!(v = value()) || (*v != "on" && *v != "off")) return "--sigv2 needs on or off";
      c.sigv2 = *v == "on";
    } else if (a == "--region") {
      if (!(v = value())) return "--region needs a name";
      c.region = *v;
    } else if (a == "--workers") {
      if (!(v = value()) || std::atoi(v->c_str()) <= 0) return "--workers needs a positive number";
      c.workers = std::atoi(v->c_str());
    } else if (a == "--max-connections" || a == "--idle-timeout-s" || a == "--header-timeout-s" ||
               a == "--min-body-rate") {
      char* end = nullptr;
      long n = (v = value()) ? std::strtol(v->c_str(), &end, 10) : -1;
      if (!v || *end != '\0' || n < 0 || n > 1000000000 || (n == 0 && a != "--min-body-rate")) {
        return a + " needs a positive number";
      }
      int& slot = a == "--max-connections"  ? c.max_connections
                  : a == "--idle-timeout-s" ? c.idle_timeout_s
                  : a == "--header-timeout-s" ? c.header_timeout_s
                                              : c.min_body_bytes_per_s;
      slot = static_cast<int>(n);
    } else if (a == "--drives") {
      if (!(v = value()) || v->empty()) return "--drives needs d1,d2,...";
      size_t pos = 0;
      while (pos <= v->size()) {
        size_t comma = v->find(',', pos);
        std::string d = v->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (d.empty()) return "--drives has an empty entry: " + *v;
        c.drives.push_back(d);
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    } else if (a == "--ec") {
      if (!(v = value())) return "--ec needs K+M, e.g. 4+2";
      int k = 0, m = 0;
      char tail = 0;
      if (std::sscanf(v->c_str(), "%d+%d%c", &k, &m, &tail) != 2 || k < 1 || m < 0) {
        return "--ec needs K+M with K >= 1, M >= 0, got " + *v;
      }
      c.ec_k = k;
      c.ec_m = m;
    } else if (a == "--scrub-interval-s") {
      if (!(v = value())) return "--scrub-interval-s needs seconds";
      c.scrub_interval_s = std::atoi(v->c_str());
    } else if (a == "--checkpoint-interval-s") {
      if (!(v = value())) return "--checkpoint-interval-s needs seconds";
      c.checkpoint_interval_s = std::atoi(v->c_str());
    } else {
      return "unknown option " + a;
    }
  }
  return c;
}

std::variant<RootCredentials, std::string> LoadRootCredentials(const std::string& data_dir) {
  const char* user = std::getenv("STRATA_ROOT_USER");
  const char* password = std::getenv("STRATA_ROOT_PASSWORD");
  if (user && password && *user && *password) {
    if (std::string_view(password).size() < kMinRootSecretChars) {
      return "STRATA_ROOT_PASSWORD must be at least " + std::to_string(kMinRootSecretChars) +
             " characters (it has " + std::to_string(std::string_view(password).size()) + ")";
    }
    return RootCredentials{user, password, false};
  }
  if ((user && *user) != (password && *password)) {
    return "set both STRATA_ROOT_USER and STRATA_ROOT_PASSWORD, or neither";
  }
  std::string path = data_dir + "/root-credentials";
  std::ifstream in(path);
  if (in) {
    RootCredentials c;
    std::getline(in, c.access_key);
    std::getline(in, c.secret_key);
    if (c.access_key.empty() || c.secret_key.empty()) return path + " is malformed";
    if (c.secret_key.size() < kMinRootSecretChars) {
      return path + ": the secret key must be at least " + std::to_string(kMinRootSecretChars) +
             " characters";
    }
    return c;
  }
  RootCredentials c;
  c.access_key = "STRATA" + HexEncode(RandomBytes(7));
  for (char& ch : c.access_key) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  c.secret_key = Base64Encode(RandomBytes(30));
  c.generated = true;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create " + path;
  std::string text = c.access_key + "\n" + c.secret_key + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return "cannot write " + path;
  return c;
}

}  // namespace strata::server
