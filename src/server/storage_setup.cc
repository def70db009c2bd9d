// Opening the data and metadata stores at start-up (server/storage_setup.h).
#include "server/storage_setup.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/log.h"
#include "io/dirs.h"
#include "remote/remote_store.h"
#include "storage/archive_store.h"
#include "storage/plain_store.h"

namespace strata::server {
namespace {

// A bucket of another S3 endpoint. Opening checks the settings only: an
// endpoint that is away at start-up is reported (TidyRemotePools) but does
// not keep the server from starting.
Result<std::unique_ptr<storage::DataStore>> OpenRemotePool(const PoolConfig& p) {
  remote::RemoteOptions o;
  if (!remote::ParseEndpointUrl(p.remote->endpoint, &o.endpoint)) {
    return InvalidArgument("endpoint '" + p.remote->endpoint + "' is not http(s)://HOST[:PORT]");
  }
  o.endpoint.bucket = p.remote->bucket;
  o.endpoint.credentials = {p.remote->access_key, p.remote->secret_key, p.remote->region};
  o.endpoint.ca_file = p.remote->ca_file;
  o.endpoint.timeout_ms = p.remote->timeout_s * 1000;
  o.prefix = p.remote->prefix;
  o.part_bytes = static_cast<size_t>(p.remote->part_size_mib) << 20;
  ASSIGN_OR_RETURN(auto store, remote::RemoteDataStore::Open(std::move(o)));
  return std::unique_ptr<storage::DataStore>(std::move(store));
}

// The pools of a tiered layout, each a plain directory, erasure-coded drives
// or a remote bucket.
std::optional<std::string> OpenPools(const Config& cfg, Storage* s) {
  std::vector<tier::PoolSpec> specs;
  for (const PoolConfig& p : cfg.pools) specs.push_back({p.name, *tier::ParseMedia(p.media)});
  auto classes = tier::ClassMap::Make(specs, cfg.storage_classes);
  if (!classes.ok()) return classes.status().message();
  s->classes = std::move(classes).value();
  for (const tier::PoolSpec& spec : s->classes.pools()) {
    const PoolConfig& p = *std::find_if(cfg.pools.begin(), cfg.pools.end(),
                                        [&](const PoolConfig& c) { return c.name == spec.name; });
    if (p.remote) {
      if (s->pools.empty()) {
        return "pool '" + p.name + "' holds STANDARD (the primary pool, where bucket and upload "
               "records live): it cannot be a remote bucket";
      }
      auto store = OpenRemotePool(p);
      if (!store.ok()) return "pool '" + p.name + "': " + store.status().ToString();
      s->pool_stores.push_back(std::move(store).value());
    } else if (p.archive) {
      if (s->pools.empty()) {
        return "pool '" + p.name + "' holds STANDARD (the primary pool): it cannot be an archive "
               "pool";
      }
      const std::string dir = PoolPath(cfg, p.drives[0]);
      auto store = storage::OpenArchiveDataStore(
          s->fs.get(), {dir, static_cast<uint64_t>(p.archive->segment_size_mib) << 20,
                        p.archive->zstd_level});
      if (!store.ok()) return "pool '" + p.name + "': " + store.status().ToString();
      s->pool_stores.push_back(std::move(store).value());
    } else if (p.drives.size() == 1) {
      const std::string dir = PoolPath(cfg, p.drives[0]);
      if (Status st = io::CreateDirsDurably(s->fs.get(), dir); !st.ok()) {
        return "pool '" + p.name + "': cannot create " + dir + ": " + st.ToString();
      }
      auto store = storage::OpenPlainDataStore(s->fs.get(), dir);
      if (!store.ok()) return "pool '" + p.name + "': " + store.status().ToString();
      s->pool_stores.push_back(std::move(store).value());
    } else {
      storage::PoolOptions o;
      for (const std::string& d : p.drives) o.drives.push_back(PoolPath(cfg, d));
      o.k = p.ec_k;
      o.m = p.ec_m;
      auto store = storage::ErasureDataStore::Open(s->fs.get(), o);
      if (!store.ok()) return "pool '" + p.name + "': " + store.status().ToString();
      s->pool_stores.push_back(std::move(store).value());
    }
    s->pools.push_back({p.name, s->pool_stores.back().get()});
  }
  s->data = s->pools[0].store;
  return std::nullopt;
}

}  // namespace

// At start-up: whether each remote pool answers, and the uploads a crash
// left there aborted. Logged; nothing here stops the server.
void TidyRemotePools(const Storage& st) {
  for (const object::Pool& pool : st.pools) {
    auto* r = dynamic_cast<remote::RemoteDataStore*>(pool.store);
    if (!r) continue;
    if (Status c = r->Check(); !c.ok()) {
      STRATA_LOG("pool '%s' (%s) does not answer: %s; transitions to it and reads from it fail "
                 "until it does (they are retried)", pool.name.c_str(), r->Describe().c_str(),
                 c.ToString().c_str());
      continue;
    }
    auto aborted = r->AbortStaleUploads();
    if (!aborted.ok()) {
      STRATA_LOG("pool '%s': listing its unfinished uploads: %s", pool.name.c_str(),
                 aborted.status().ToString().c_str());
    } else if (*aborted > 0) {
      STRATA_LOG("recovery: aborted %zu unfinished uploads in pool '%s' (%s)", *aborted,
                 pool.name.c_str(), r->Describe().c_str());
    }
  }
}

// Opens the data store (plain directory or erasure-coded drives) and, unless
// `open_meta` is false, the metadata store in DIR/meta.
std::variant<Storage, std::string> OpenStorage(const Config& cfg, bool open_meta) {
  Storage s;
  s.fs = io::NewPosixFileSystem({.direct_bulk_writes = cfg.direct_writes});
  if (Status st = io::CreateDirsDurably(s.fs.get(), cfg.data_dir); !st.ok()) {
    return "cannot create data dir: " + st.ToString();
  }
  if (open_meta) {
    auto kv = meta::OpenRocksDbStore(cfg.data_dir + "/meta");
    if (!kv.ok()) return "cannot open metadata: " + kv.status().ToString();
    s.kv = std::move(kv).value();
  }
  if (!cfg.pools.empty()) {
    if (auto err = OpenPools(cfg, &s)) return *err;
    return s;
  }
  if (cfg.drives.empty()) {
    auto store = storage::OpenPlainDataStore(s.fs.get(), cfg.data_dir);
    if (!store.ok()) return "cannot open data store: " + store.status().ToString();
    s.plain = std::move(store).value();
    s.data = s.plain.get();
    return s;
  }
  storage::PoolOptions pool;
  pool.drives = cfg.drives;
  pool.k = cfg.ec_k;
  pool.m = cfg.ec_m;
  auto store = storage::ErasureDataStore::Open(s.fs.get(), pool);
  if (!store.ok()) return "cannot open drives: " + store.status().ToString();
  s.erasure = std::move(store).value();
  s.data = s.erasure.get();
  return s;
}

// What `GET tiers` says of each pool beside what the engine counts.
std::vector<TierDescription> DescribeTiers(const Config& cfg, const Storage& st) {
  std::vector<TierDescription> out;
  auto layout = [](const std::vector<std::string>& drives, storage::DataStore* store) {
    if (auto* r = dynamic_cast<remote::RemoteDataStore*>(store)) {
      return "remote bucket " + r->Describe();
    }
    if (auto a = storage::ArchiveStatsOf(store)) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "archive segments (zstd): %llu entries in %llu files, "
                    "%.1f MiB stored for %.1f MiB of data",
                    static_cast<unsigned long long>(a->live_entries),
                    static_cast<unsigned long long>(a->segments), a->segment_bytes / 1048576.0,
                    a->raw_bytes / 1048576.0);
      return std::string(buf);
    }
    if (auto* e = dynamic_cast<storage::ErasureDataStore*>(store)) {
      return std::to_string(e->k()) + "+" + std::to_string(e->m()) + " over " +
             std::to_string(drives.size()) + " drives";
    }
    return std::string("1+0 (one directory)");
  };
  if (st.pools.empty()) {
    std::vector<std::string> drives = cfg.drives.empty() ? std::vector<std::string>{cfg.data_dir}
                                                         : cfg.drives;
    out.push_back({"", "hot", layout(drives, st.data), drives});
    return out;
  }
  for (const object::Pool& p : st.pools) {
    const PoolConfig& c = *std::find_if(cfg.pools.begin(), cfg.pools.end(),
                                        [&](const PoolConfig& x) { return x.name == p.name; });
    std::vector<std::string> drives;
    for (const std::string& d : c.drives) drives.push_back(PoolPath(cfg, d));
    out.push_back({p.name, c.media, layout(drives, p.store), drives});
  }
  return out;
}

// Everything strata writes (objects, metadata, credentials) is readable by
// its own user only: files 0600, directories 0700, including RocksDB's.
void RestrictFileModes(const Config& cfg) {
  ::umask(0077);
  std::vector<std::string> roots = cfg.drives;
  roots.push_back(cfg.data_dir);
  for (const PoolConfig& p : cfg.pools) {
    for (const std::string& d : p.drives) roots.push_back(PoolPath(cfg, d));
  }
  for (const std::string& dir : roots) {
    // Only existing directories: a drive whose directory vanished is never
    // recreated (the storage layer reports it); a new data dir is made 0700.
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0 && (st.st_mode & 0077) != 0) {
      if (::chmod(dir.c_str(), st.st_mode & 0700) != 0) {
        STRATA_LOG("cannot restrict the mode of %s: %s", dir.c_str(), std::strerror(errno));
      }
    }
  }
}

// The KV tier's default global cap: half of what the data store's file
// systems hold (for erasure-coded drives, the data share of them).
uint64_t HalfOfCapacity(const Config& cfg) {
  auto capacity = [](const std::string& dir) -> uint64_t {
    struct statvfs sv {};
    if (::statvfs(dir.c_str(), &sv) != 0) return 0;
    return static_cast<uint64_t>(sv.f_blocks) * sv.f_frsize;
  };
  if (cfg.drives.empty()) return capacity(cfg.data_dir) / 2;
  uint64_t total = 0;
  for (const std::string& d : cfg.drives) total += capacity(d);
  int k = cfg.ec_k, m = cfg.ec_m;
  if (k <= 0 || m < 0) storage::DefaultLayout(static_cast<int>(cfg.drives.size()), &k, &m);
  return total / 2 * static_cast<uint64_t>(k) / static_cast<uint64_t>(k + m);
}

}  // namespace strata::server
