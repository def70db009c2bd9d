// tier_bench: what tiers cost (issue 14), on this machine's disk, in-process.
//  - Transition throughput: ObjectEngine::MoveVersion of N objects from a
//    "hot" pool directory to a "warm" one (copy, fsync, metadata switch,
//    removal of the old file), against the same machine's limit measured in
//    the same run: a plain copy of the same bytes between the same two
//    directories (read, write, fdatasync, unlink), alternating run by run.
//    Target >= 80 %.
//  - Scanner time per million versions with 10 rules: a lifecycle pass over
//    a bucket whose versions no rule acts on (listing + evaluation, what a
//    pass costs when nothing is due), on one core. Target <= 10 s.
// Medians of --runs runs. Every moved object is read back and compared.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/cli11.h"
#include "io/file_system.h"
#include "meta/keys.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "object/record.h"
#include "storage/plain_store.h"
#include "tier/classes.h"
#include "tier/lifecycle.h"
#include "tier/scanner.h"

namespace strata {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

[[noreturn]] void Die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "tier_bench: %s: %s\n", what.c_str(), st.ToString().c_str());
  std::exit(1);
}

std::string Body(size_t n, int seed) {
  std::string s(n, '\0');
  uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (size_t i = 0; i < n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(&s[i], &x, std::min<size_t>(8, n - i));
  }
  return s;
}

// The limit: copy each file hot -> warm durably (read, write, fdatasync, and
// fsync of the destination directory so the new name survives a power loss,
// as any durable copy must), then unlink the source.
double PlainCopy(const std::string& from, const std::string& to, int n, size_t bytes) {
  std::vector<char> buf(1 << 20);
  for (int i = 0; i < n; ++i) {  // the sources, written and synced outside the clock
    std::string body = Body(bytes, i);
    int fd = ::open((from + "/f" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || ::write(fd, body.data(), body.size()) != static_cast<ssize_t>(body.size())) {
      std::exit(1);
    }
    ::fdatasync(fd);
    ::close(fd);
  }
  const double start = Now();
  const int dir = ::open(to.c_str(), O_RDONLY | O_DIRECTORY);
  for (int i = 0; i < n; ++i) {
    const std::string src = from + "/f" + std::to_string(i), dst = to + "/f" + std::to_string(i);
    int in = ::open(src.c_str(), O_RDONLY);
    int out = ::open(dst.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    ssize_t r;
    while ((r = ::read(in, buf.data(), buf.size())) > 0) {
      if (::write(out, buf.data(), r) != r) std::exit(1);
    }
    ::fdatasync(out);
    ::fsync(dir);
    ::close(in);
    ::close(out);
    ::unlink(src.c_str());
  }
  const double s = Now() - start;
  ::close(dir);
  for (int i = 0; i < n; ++i) ::unlink((to + "/f" + std::to_string(i)).c_str());
  return static_cast<double>(n) * bytes / s;
}

struct Engine {
  std::unique_ptr<io::FileSystem> fs = io::NewPosixFileSystem();
  std::unique_ptr<meta::KvStore> kv;
  std::unique_ptr<storage::DataStore> hot, warm;
  std::unique_ptr<object::ObjectEngine> engine;

  explicit Engine(const std::string& root) {
    std::filesystem::create_directories(root + "/hot");
    std::filesystem::create_directories(root + "/warm");
    auto k = meta::OpenRocksDbStore(root + "/meta");
    if (!k.ok()) Die("metadata", k.status());
    kv = std::move(k).value();
    auto h = storage::OpenPlainDataStore(fs.get(), root + "/hot");
    auto w = storage::OpenPlainDataStore(fs.get(), root + "/warm");
    if (!h.ok() || !w.ok()) Die("stores", h.ok() ? w.status() : h.status());
    hot = std::move(h).value();
    warm = std::move(w).value();
    auto e = object::ObjectEngine::Open({{"hot", hot.get()}, {"warm", warm.get()}}, kv.get());
    if (!e.ok()) Die("engine", e.status());
    engine = std::move(e).value();
  }
};

// `via_scanner`: the moves made by a lifecycle pass (its moves_in_flight at
// once) instead of one MoveVersion after another.
double Transition(const std::string& root, int n, size_t bytes, int run, bool via_scanner) {
  Engine e(root);
  const std::string bucket = "t" + std::to_string(run);
  if (Status st = e.engine->CreateBucket(bucket, object::BucketRecord{1, "us-east-1", "me"});
      !st.ok()) {
    Die("bucket", st);
  }
  std::vector<uint64_t> stamps;
  for (int i = 0; i < n; ++i) {
    object::WriteOptions o;
    o.pool = "hot";
    o.md5 = false;
    auto w = e.engine->NewWriter(bucket, "k" + std::to_string(i), {}, o);
    if (!w.ok()) Die("writer", w.status());
    (*w)->SetEtag("0");
    if (Status st = (*w)->Append(Body(bytes, i)); !st.ok()) Die("append", st);
    auto rec = (*w)->Commit();
    if (!rec.ok()) Die("commit", rec.status());
    stamps.push_back(rec->version_stamp);
  }
  double start = Now();
  if (via_scanner) {
    tier::Configuration c;
    tier::Rule r;
    r.id = "to-warm";
    r.transitions.push_back({tier::When{1, std::nullopt}, "GLACIER_IR"});
    c.rules.push_back(r);
    if (Status st = e.engine->SetBucketLifecycle(bucket, tier::RenderLifecycle(c)); !st.ok()) {
      Die("lifecycle", st);
    }
    auto classes = tier::ClassMap::Make({{"hot", tier::Media::kHot}, {"warm", tier::Media::kWarm}},
                                        {});
    if (!classes.ok()) Die("classes", classes.status());
    tier::ScannerOptions o;
    o.day_ns = 1'000'000;  // a 1 ms "day": every object is due at once
    o.max_actions_per_s = 0;
    tier::Scanner scanner(e.engine.get(), e.kv.get(), &*classes, o);
    usleep(5000);
    start = Now();
    auto stats = scanner.RunPass();
    if (!stats.ok()) Die("pass", stats.status());
    if (stats->transitioned != static_cast<uint64_t>(n)) {
      std::fprintf(stderr, "tier_bench: the pass moved %llu of %d\n",
                   static_cast<unsigned long long>(stats->transitioned), n);
      std::exit(1);
    }
  } else {
    for (int i = 0; i < n; ++i) {
      Status st = e.engine->MoveVersion(bucket, "k" + std::to_string(i), stamps[i], "warm",
                                        "STANDARD_IA");
      if (!st.ok()) Die("move", st);
    }
  }
  const double s = Now() - start;
  for (int i = 0; i < n; ++i) {  // every byte where it should be
    auto r = e.engine->OpenObject(bucket, "k" + std::to_string(i));
    if (!r.ok() || (*r)->record().pool != "warm") Die("read back", r.status());
    std::string got(bytes, '\0');
    for (size_t off = 0; off < bytes;) {
      auto m = (*r)->ReadAt(off, got.data() + off, bytes - off);
      if (!m.ok() || *m == 0) Die("read back", m.status());
      off += *m;
    }
    if (got != Body(bytes, i)) {
      std::fprintf(stderr, "tier_bench: object %d differs after the move\n", i);
      std::exit(1);
    }
    if (Status st = e.engine->DeleteObject(bucket, "k" + std::to_string(i)); !st.ok()) {
      Die("delete", st);
    }
  }
  return static_cast<double>(n) * bytes / s;
}

// Writes `versions` inline object records straight into the metadata (as
// many PUTs would leave them; unsynced batches), then times one scanner pass
// with 10 rules none of which is due.
double ScanSecondsPerMillion(const std::string& root, int versions) {
  Engine e(root);
  if (Status st = e.engine->CreateBucket("scan", object::BucketRecord{1, "us-east-1", "me"});
      !st.ok()) {
    Die("bucket", st);
  }
  tier::Configuration c;
  for (int i = 0; i < 10; ++i) {
    tier::Rule r;
    r.id = "rule-" + std::to_string(i);
    r.filter_form = tier::FilterForm::kAnd;
    r.filter.prefix = "data/";
    r.filter.tags = {{"team", "t" + std::to_string(i)}};  // the objects carry other tags
    r.expiration = tier::When{30, std::nullopt};
    r.transitions.push_back({tier::When{5, std::nullopt}, "GLACIER_IR"});
    c.rules.push_back(std::move(r));
  }
  if (Status st = e.engine->SetBucketLifecycle("scan", tier::RenderLifecycle(c)); !st.ok()) {
    Die("lifecycle", st);
  }
  const int64_t now = e.engine->NowNs();
  meta::WriteBatch batch;
  for (int i = 0; i < versions; ++i) {
    object::ObjectRecord rec;
    rec.size_bytes = 100;
    rec.etag = "0123456789abcdef0123456789abcdef";
    rec.mtime_ns = now;
    rec.version_stamp = static_cast<uint64_t>(now) + i;
    rec.is_inline = true;
    rec.inline_data.assign(100, 'x');
    rec.tags = {{"team", "other"}};
    char key[32];
    std::snprintf(key, sizeof(key), "data/%09d", i);
    batch.Put(meta::ObjectVersionKey("scan", key, rec.version_stamp), object::EncodeObjectRecord(rec));
    if (batch.ops().size() >= 10000 || i + 1 == versions) {
      if (Status st = e.kv->Write(batch, false); !st.ok()) Die("records", st);
      batch = meta::WriteBatch();
    }
  }
  tier::ScannerOptions o;
  o.max_actions_per_s = 0;
  tier::Scanner scanner(e.engine.get(), e.kv.get(), nullptr, o);
  const double start = Now();
  auto stats = scanner.RunPass();
  const double s = Now() - start;
  if (!stats.ok()) Die("pass", stats.status());
  if (stats->versions != static_cast<uint64_t>(versions) || stats->deleted || stats->transitioned) {
    std::fprintf(stderr, "tier_bench: the pass saw %llu versions, acted on %llu\n",
                 static_cast<unsigned long long>(stats->versions),
                 static_cast<unsigned long long>(stats->deleted + stats->transitioned));
    std::exit(1);
  }
  return s * 1e6 / versions;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  using namespace strata;
  CLI::App app("tier_bench: transition throughput and lifecycle scanner cost", "tier_bench");
  std::string dir = "/tmp/strata-tier-bench";
  int runs = 5, objects = 32, mib = 16, versions = 1'000'000;
  bool smoke = false;
  app.add_option("--dir", dir, "scratch directory (removed after)")->capture_default_str();
  app.add_option("--runs", runs, "runs per figure (median)")->capture_default_str();
  app.add_option("--objects", objects, "objects moved per run")->capture_default_str();
  app.add_option("--mib", mib, "object size")->capture_default_str();
  app.add_option("--versions", versions, "versions in the scanned bucket")->capture_default_str();
  app.add_flag("--smoke", smoke, "seconds long: correctness only");
  CLI11_PARSE(app, argc, argv);
  if (smoke) {
    runs = 1;
    objects = 4;
    mib = 1;
    versions = 20000;
  }
  const size_t bytes = static_cast<size_t>(mib) << 20;
  std::filesystem::remove_all(dir);
  std::vector<double> moved, scanned, copied, scan;
  for (int r = 0; r < runs; ++r) {
    const std::string root = dir + "/run" + std::to_string(r);
    std::filesystem::create_directories(root + "/plain/hot");
    std::filesystem::create_directories(root + "/plain/warm");
    // Alternating which goes first, so that neither always inherits the
    // other's writeback.
    if (r % 2 == 0) {
      copied.push_back(PlainCopy(root + "/plain/hot", root + "/plain/warm", objects, bytes));
      moved.push_back(Transition(root + "/engine", objects, bytes, r, false));
      scanned.push_back(Transition(root + "/scanner", objects, bytes, r, true));
    } else {
      scanned.push_back(Transition(root + "/scanner", objects, bytes, r, true));
      moved.push_back(Transition(root + "/engine", objects, bytes, r, false));
      copied.push_back(PlainCopy(root + "/plain/hot", root + "/plain/warm", objects, bytes));
    }
    ::sync();
    std::filesystem::remove_all(root);
  }
  for (int r = 0; r < runs; ++r) {
    const std::string root = dir + "/scan" + std::to_string(r);
    scan.push_back(ScanSecondsPerMillion(root, versions));
    std::filesystem::remove_all(root);
  }
  std::filesystem::remove_all(dir);
  const double m = Median(moved), c = Median(copied), s = Median(scan), t = Median(scanned);
  std::printf("tier_bench (%d runs, medians; %d objects of %d MiB, %d versions scanned)\n", runs,
              objects, mib, versions);
  std::printf("  transition hot -> warm, lifecycle pass  %8.1f MB/s   (2 moves in flight)\n",
              t / 1e6);
  std::printf("  transition hot -> warm, MoveVersion one at a time %8.1f MB/s\n", m / 1e6);
  std::printf("  durable plain copy hot -> warm (the limit) %8.1f MB/s\n", c / 1e6);
  std::printf("  lifecycle transition / plain copy     %8.1f %%   (target >= 80 %%)\n",
              100.0 * t / c);
  std::printf("  one-at-a-time MoveVersion / plain copy %8.1f %%\n", 100.0 * m / c);
  std::printf("  scanner pass, 10 rules                 %8.2f s per million versions "
              "(target <= 10 s)\n", s);
  return 0;
}
