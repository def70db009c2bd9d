#include "server/config_file.h"

#include <toml++/toml.h>

#include <cmath>
#include <cstdint>
#include <string_view>


namespace strata::server {
namespace {

// Where a value is, for messages: "FILE:LINE".
std::string At(const std::string& path, const toml::node& n) {
  return path + ":" + std::to_string(n.source().begin.line);
}

struct Reader {
  const std::string& path;
  std::optional<std::string> error;

  bool Fail(const toml::node& n, const std::string& key, const std::string& what) {
    if (!error) error = At(path, n) + ": " + key + ": " + what;
    return false;
  }
  bool String(const toml::node& n, const std::string& key, std::string* out) {
    auto v = n.value<std::string>();
    if (!n.is_string() || !v) return Fail(n, key, "needs a string");
    *out = *v;
    return true;
  }
  bool Int(const toml::node& n, const std::string& key, int64_t lo, int64_t hi, int* out) {
    auto v = n.value<int64_t>();
    if (!n.is_integer() || !v || *v < lo || *v > hi) {
      return Fail(n, key, "needs a whole number from " + std::to_string(lo) + " to " +
                              std::to_string(hi));
    }
    *out = static_cast<int>(*v);
    return true;
  }
  bool Strings(const toml::node& n, const std::string& key, std::vector<std::string>* out) {
    const toml::array* a = n.as_array();
    if (!a || a->empty()) return Fail(n, key, "needs a non-empty array of strings");
    out->clear();
    for (const toml::node& e : *a) {
      auto v = e.value<std::string>();
      if (!e.is_string() || !v || v->empty()) return Fail(e, key, "needs non-empty strings");
      out->push_back(*v);
    }
    return true;
  }
  // "HOST:PORT"
  // A figure of the advisor's model: finite, 0 to 1e9.
  bool Figure(const toml::node& n, const std::string& key, double* out) {
    auto v = n.value<double>();
    if (!(n.is_floating_point() || n.is_integer()) || !v || !std::isfinite(*v) || *v < 0 ||
        *v > 1e9) {
      return Fail(n, key, "needs a number from 0 to 1e9");
    }
    *out = *v;
    return true;
  }
  // [advisor_model]: currency = "EUR"; MEDIA = { watts_per_tib = W, cost_per_tib_month = C }.
  bool AdvisorModel(const toml::node& n, Config* c) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, "advisor_model", "needs a table ([advisor_model])");
    c->advisor_media_costs.clear();
    for (auto&& [name, v] : *t) {
      const std::string key = "advisor_model." + std::string(name.str());
      if (name.str() == "currency") {
        if (!String(v, key, &c->advisor_currency)) return false;
        if (c->advisor_currency.empty() || c->advisor_currency.size() > 8) {
          return Fail(v, key, "needs a currency code of 1 to 8 characters");
        }
        continue;
      }
      if (name.str() != "gpu-direct" && name.str() != "hot" && name.str() != "warm" &&
          name.str() != "cold") {
        return Fail(v, key, "unknown key (currency, gpu-direct, hot, warm, cold)");
      }
      const toml::table* m = v.as_table();
      if (!m) return Fail(v, key, "needs { watts_per_tib = W, cost_per_tib_month = C }");
      std::pair<double, double> figures{-1, -1};
      for (auto&& [field, f] : *m) {
        const std::string fkey = key + "." + std::string(field.str());
        if (field.str() == "watts_per_tib") {
          if (!Figure(f, fkey, &figures.first)) return false;
        } else if (field.str() == "cost_per_tib_month") {
          if (!Figure(f, fkey, &figures.second)) return false;
        } else {
          return Fail(f, fkey, "unknown key (watts_per_tib, cost_per_tib_month)");
        }
      }
      if (figures.first < 0 || figures.second < 0) {
        return Fail(v, key, "needs both watts_per_tib and cost_per_tib_month");
      }
      c->advisor_media_costs.emplace_back(std::string(name.str()), figures);
    }
    return true;
  }
  bool HostPort(const toml::node& n, const std::string& key, std::string* host, int* port) {
    std::string text;
    if (!String(n, key, &text)) return false;
    if (!ParseHostPort(text, host, port)) return Fail(n, key, "needs HOST:PORT, got '" + text + "'");
    return true;
  }
  // "K+M"
  bool Layout(const toml::node& n, const std::string& key, int* k, int* m) {
    std::string text;
    if (!String(n, key, &text)) return false;
    if (!ParseLayout(text, k, m)) {
      return Fail(n, key, "needs K+M with K >= 1 and M >= 0, e.g. 4+2, got '" + text + "'");
    }
    return true;
  }

  // [pool.remote]: endpoint, bucket and credentials required.
  bool Remote(const toml::node& n, const std::string& where, PoolConfig::Remote* r) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, where, "needs a table ([pool.remote])");
    for (auto&& [k, v] : *t) {
      const std::string key(k.str());
      const std::string name = where + "." + key;
      bool ok = true;
      if (key == "endpoint") {
        ok = String(v, name, &r->endpoint);
        if (ok && !r->endpoint.starts_with("http://") && !r->endpoint.starts_with("https://")) {
          ok = Fail(v, name, "needs http://HOST:PORT or https://HOST[:PORT], got '" + r->endpoint + "'");
        }
      } else if (key == "bucket") {
        ok = String(v, name, &r->bucket);
      } else if (key == "prefix") {
        ok = String(v, name, &r->prefix);
      } else if (key == "region") {
        ok = String(v, name, &r->region);
      } else if (key == "access_key") {
        ok = String(v, name, &r->access_key);
      } else if (key == "secret_key") {
        ok = String(v, name, &r->secret_key);
      } else if (key == "ca_file") {
        ok = String(v, name, &r->ca_file);
      } else if (key == "timeout_seconds") {
        ok = Int(v, name, 1, 3600, &r->timeout_s);
      } else if (key == "part_size_mib") {
        ok = Int(v, name, 5, 5120, &r->part_size_mib);
      } else {
        ok = Fail(v, name, "unknown key (endpoint, bucket, prefix, region, access_key, secret_key, "
                           "ca_file, timeout_seconds, part_size_mib)");
      }
      if (!ok) return false;
    }
    for (auto [field, value] : {std::pair{"endpoint", &r->endpoint}, std::pair{"bucket", &r->bucket},
                                std::pair{"access_key", &r->access_key},
                                std::pair{"secret_key", &r->secret_key}}) {
      if (value->empty()) return Fail(n, where, std::string("needs ") + field);
    }
    return true;
  }

  // [pool.archive]: optional segment size and zstd level.
  bool Archive(const toml::node& n, const std::string& where, PoolConfig::Archive* a) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, where, "needs a table ([pool.archive], or archive = {})");
    for (auto&& [k, v] : *t) {
      const std::string key(k.str());
      const std::string name = where + "." + key;
      bool ok = true;
      if (key == "segment_size_mib") {
        ok = Int(v, name, 1, 1 << 20, &a->segment_size_mib);
      } else if (key == "zstd_level") {
        ok = Int(v, name, 1, 19, &a->zstd_level);
      } else {
        ok = Fail(v, name, "unknown key (segment_size_mib, zstd_level)");
      }
      if (!ok) return false;
    }
    return true;
  }

  // [kmip] endpoint = "HOST:PORT", ca, cert, key (files).
  bool Kmip(const toml::node& n, Config* c) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, "kmip", "needs a table ([kmip] endpoint, ca, cert, key)");
    for (auto&& [k, v] : *t) {
      const std::string key(k.str()), field = "kmip." + key;
      bool ok = true;
      if (key == "endpoint") {
        std::string text;
        ok = String(v, field, &text);
        if (ok && !ParseHostPort(text, &c->kmip_host, &c->kmip_port)) {
          ok = Fail(v, field, "needs HOST:PORT, got '" + text + "'");
        }
      } else if (key == "ca") {
        ok = String(v, field, &c->kmip_ca);
      } else if (key == "cert") {
        ok = String(v, field, &c->kmip_cert);
      } else if (key == "key") {
        ok = String(v, field, &c->kmip_key);
      } else {
        ok = Fail(v, field, "unknown key (endpoint, ca, cert, key)");
      }
      if (!ok) return false;
    }
    return true;
  }

  // [notify.webhook.ID] tables: endpoint required.
  bool Notify(const toml::node& n, std::vector<WebhookConfig>* out) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, "notify", "needs tables ([notify.webhook.ID])");
    out->clear();
    for (auto&& [kind, targets] : *t) {
      const std::string where = "notify." + std::string(kind.str());
      if (kind.str() != "webhook") return Fail(targets, where, "unknown kind (webhook)");
      const toml::table* ids = targets.as_table();
      if (!ids) return Fail(targets, where, "needs tables ([notify.webhook.ID])");
      for (auto&& [id, v] : *ids) {
        const std::string name = where + "." + std::string(id.str());
        const toml::table* w = v.as_table();
        if (!w) return Fail(v, name, "needs a table");
        WebhookConfig c;
        c.id = std::string(id.str());
        if (c.id.empty() || c.id.size() > 64 ||
            c.id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") !=
                std::string::npos) {
          return Fail(v, name, "an id needs 1-64 of A-Z a-z 0-9 _ -");
        }
        for (auto&& [k2, v2] : *w) {
          const std::string key(k2.str());
          const std::string field = name + "." + key;
          bool ok = true;
          if (key == "endpoint") {
            ok = String(v2, field, &c.endpoint);
            if (ok && !c.endpoint.starts_with("http://") && !c.endpoint.starts_with("https://")) {
              ok = Fail(v2, field, "needs http[s]://HOST[:PORT][/PATH], got '" + c.endpoint + "'");
            }
          } else if (key == "auth_token") {
            ok = String(v2, field, &c.auth_token);
          } else if (key == "ca_file") {
            ok = String(v2, field, &c.ca_file);
          } else if (key == "queue_limit") {
            ok = Int(v2, field, 1, 100'000'000, &c.queue_limit);
          } else if (key == "timeout_seconds") {
            ok = Int(v2, field, 1, 600, &c.timeout_seconds);
          } else {
            ok = Fail(v2, field, "unknown key (endpoint, auth_token, ca_file, queue_limit, "
                                 "timeout_seconds)");
          }
          if (!ok) return false;
        }
        if (c.endpoint.empty()) return Fail(v, name, "needs endpoint");
        out->push_back(std::move(c));
      }
    }
    return true;
  }

  bool Pool(const toml::node& n, PoolConfig* p) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, "pool", "needs a table ([[pool]])");
    bool has_path = false;
    for (auto&& [k, v] : *t) {
      const std::string key(k.str());
      const std::string name = "pool." + key;
      bool ok = true;
      if (key == "name") {
        ok = String(v, name, &p->name);
      } else if (key == "media") {
        ok = String(v, name, &p->media);
      } else if (key == "path") {
        std::string dir;
        ok = String(v, name, &dir);
        if (ok) p->drives = {dir};
        has_path = true;
      } else if (key == "drives") {
        ok = Strings(v, name, &p->drives);
      } else if (key == "ec") {
        ok = Layout(v, name, &p->ec_k, &p->ec_m);
      } else if (key == "remote") {
        ok = Remote(v, name, &p->remote.emplace());
      } else if (key == "archive") {
        ok = Archive(v, name, &p->archive.emplace());
      } else {
        ok = Fail(v, name, "unknown key (name, media, path, drives, ec, remote, archive)");
      }
      if (!ok) return false;
    }
    if (has_path && t->contains("drives")) return Fail(n, "pool", "has both path and drives");
    if (p->name.empty()) return Fail(n, "pool", "needs a name");
    if (p->remote && !p->drives.empty()) {
      return Fail(n, "pool " + p->name, "has a remote bucket and a path or drives: one or the other");
    }
    if (p->archive && (p->remote || !has_path)) {
      return Fail(n, "pool " + p->name, "an archive pool needs a path (one directory) and no drives");
    }
    if (p->drives.empty() && !p->remote) {
      return Fail(n, "pool " + p->name, "needs a path, drives or a remote bucket");
    }
    if (p->media.empty()) return Fail(n, "pool " + p->name, "needs a media (gpu-direct, hot, warm, cold)");
    return true;
  }
};

}  // namespace

std::optional<std::string> LoadConfigFile(const std::string& path, Config* c) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::string what(e.description());
    if (what.find("File could not be opened") != std::string::npos) {
      return path + ": cannot be read";
    }
    return path + ":" + std::to_string(e.source().begin.line) + ": " + what;
  }
  Reader r{path, std::nullopt};
  for (auto&& [k, v] : root) {
    const std::string key(k.str());
    if (key == "listen") {
      r.HostPort(v, key, &c->listen_host, &c->listen_port);
    } else if (key == "data") {
      r.String(v, key, &c->data_dir);
    } else if (key == "region") {
      r.String(v, key, &c->region);
    } else if (key == "domain") {
      r.String(v, key, &c->domain);
    } else if (key == "workers") {
      r.Int(v, key, 1, 65536, &c->workers);
    } else if (key == "max_workers") {
      r.Int(v, key, 1, 65536, &c->max_workers);
    } else if (key == "event_loops") {
      r.Int(v, key, 0, 256, &c->event_loops);
    } else if (key == "drives") {
      r.Strings(v, key, &c->drives);
    } else if (key == "ec") {
      r.Layout(v, key, &c->ec_k, &c->ec_m);
    } else if (key == "kv_listen") {
      std::string text;
      if (v.is_string() && v.value<std::string>() == "off") {
        c->kv_listen_port = -1;
        c->kv_listen_explicit = true;
      } else if (r.HostPort(v, key, &c->kv_listen_host, &c->kv_listen_port)) {
        c->kv_listen_explicit = true;
      }
    } else if (key == "metrics_listen") {
      if (v.is_string() && v.value<std::string>() == "off") {
        c->metrics_listen_port = -1;
      } else {
        r.HostPort(v, key, &c->metrics_listen_host, &c->metrics_listen_port);
      }
    } else if (key == "metrics_token_file") {
      r.String(v, key, &c->metrics_token_file);
    } else if (key == "powercap_root") {
      r.String(v, key, &c->powercap_root);
    } else if (key == "access_log_delivery_seconds") {
      r.Int(v, key, 1, 86400, &c->access_log_delivery_seconds);
    } else if (key == "access_log") {
      if (auto b = v.value<bool>(); v.is_boolean() && b) {
        c->access_log = *b;
      } else {
        r.Fail(v, key, "needs true or false");
      }
    } else if (key == "direct_writes") {
      if (auto b = v.value<bool>(); v.is_boolean() && b) {
        c->direct_writes = *b;
      } else {
        r.Fail(v, key, "needs true or false");
      }
    } else if (key == "audit") {
      if (auto b = v.value<bool>(); v.is_boolean() && b) {
        c->audit = *b;
      } else {
        r.Fail(v, key, "needs true or false");
      }
    } else if (key == "audit_key_file") {
      r.String(v, key, &c->audit_key_file);
    } else if (key == "audit_checkpoint_records") {
      r.Int(v, key, 1, 1'000'000, &c->audit_checkpoint_records);
    } else if (key == "audit_checkpoint_seconds") {
      r.Int(v, key, 1, 86400, &c->audit_checkpoint_seconds);
    } else if (key == "audit_bucket") {
      r.String(v, key, &c->audit_bucket);
    } else if (key == "audit_retention_days") {
      r.Int(v, key, 1, 36500, &c->audit_retention_days);
    } else if (key == "audit_export_records") {
      r.Int(v, key, 1, 100'000'000, &c->audit_export_records);
    } else if (key == "audit_export_seconds") {
      r.Int(v, key, 1, 7 * 86400, &c->audit_export_seconds);
    } else if (key == "log_format") {
      std::string f;
      if (r.String(v, key, &f)) {
        if (f == "json" || f == "text") {
          c->json_logs = f == "json";
        } else {
          r.Fail(v, key, "needs \"json\" or \"text\"");
        }
      }
    } else if (key == "lifecycle_day_seconds") {
      r.Int(v, key, 1, 86400, &c->lifecycle_day_seconds);
    } else if (key == "lifecycle_interval_seconds") {
      r.Int(v, key, 0, 7 * 86400, &c->lifecycle_interval_s);
    } else if (key == "lifecycle_max_actions_per_second") {
      r.Int(v, key, 0, 1'000'000, &c->lifecycle_max_actions_per_s);
    } else if (key == "console") {
      if (auto b = v.value<bool>(); v.is_boolean() && b) {
        c->console = *b;
      } else {
        r.Fail(v, key, "needs true or false");
      }
    } else if (key == "advisor") {
      if (auto b = v.value<bool>(); v.is_boolean() && b) {
        c->advisor = *b;
      } else {
        r.Fail(v, key, "needs true or false");
      }
    } else if (key == "advisor_sample") {
      r.Int(v, key, 1, 1'000'000, &c->advisor_sample);
    } else if (key == "advisor_prefix_depth") {
      r.Int(v, key, 0, 16, &c->advisor_prefix_depth);
    } else if (key == "advisor_max_prefixes") {
      r.Int(v, key, 16, 10'000'000, &c->advisor_max_prefixes);
    } else if (key == "advisor_interval_seconds") {
      r.Int(v, key, 0, 7 * 86400, &c->advisor_interval_s);
    } else if (key == "advisor_cold_days") {
      r.Int(v, key, 1, 36500, &c->advisor_cold_days);
    } else if (key == "advisor_hot_reads_per_day") {
      r.Int(v, key, 1, 1'000'000'000, &c->advisor_hot_reads_per_day);
    } else if (key == "advisor_min_bytes") {
      int mib = 0;
      if (r.Int(v, key, 0, 1 << 30, &mib)) c->advisor_min_bytes = int64_t{mib} << 20;
    } else if (key == "advisor_kv_idle_days") {
      r.Int(v, key, 1, 36500, &c->advisor_kv_idle_days);
    } else if (key == "advisor_model") {
      r.AdvisorModel(v, c);
    } else if (key == "pool") {
      const toml::array* pools = v.as_array();
      if (!pools) {
        r.Fail(v, key, "needs [[pool]] tables");
      } else {
        c->pools.clear();
        for (const toml::node& p : *pools) {
          PoolConfig pool;
          if (!r.Pool(p, &pool)) break;
          c->pools.push_back(std::move(pool));
        }
      }
    } else if (key == "notify") {
      r.Notify(v, &c->webhooks);
    } else if (key == "kmip") {
      r.Kmip(v, c);
    } else if (key == "storage_classes") {
      const toml::table* t = v.as_table();
      if (!t) {
        r.Fail(v, key, "needs a table ([storage_classes] CLASS = \"pool\")");
      } else {
        c->storage_classes.clear();
        for (auto&& [cls, pool] : *t) {
          std::string name;
          if (!r.String(pool, "storage_classes." + std::string(cls.str()), &name)) break;
          c->storage_classes.emplace_back(std::string(cls.str()), name);
        }
      }
    } else {
      r.Fail(v, key,
             "unknown key (listen, data, region, domain, workers, max_workers, event_loops, drives, ec, kv_listen, "
             "lifecycle_day_seconds, lifecycle_interval_seconds, "
             "lifecycle_max_actions_per_second, console, advisor, advisor_sample, advisor_prefix_depth, "
             "advisor_max_prefixes, advisor_interval_seconds, advisor_cold_days, "
             "advisor_hot_reads_per_day, advisor_min_bytes (MiB), advisor_kv_idle_days, "
             "[advisor_model], metrics_listen, metrics_token_file, powercap_root, "
             "access_log, access_log_delivery_seconds, "
             "log_format, audit, audit_key_file, audit_checkpoint_records, "
             "audit_checkpoint_seconds, audit_bucket, audit_retention_days, "
             "audit_export_records, audit_export_seconds, [[pool]], [storage_classes], "
             "[notify.webhook.ID], [kmip])");
    }
    if (r.error) return r.error;
  }
  return r.error;
}

}  // namespace strata::server
