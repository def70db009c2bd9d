#include "kv_cases.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/checksum.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "machine_limits.h"
#include "pattern.h"
#include "strata/kv_client.h"
#include "workload.h"

namespace strata::bench {
namespace {

using kv::GetItem;
using kv::KeyView;
using kv::KvClient;
using kv::KvCode;
using kv::KvStatus;
using kv::NamespaceDescriptor;
using kv::NamespaceInfo;
using kv::PutItem;

// Llama-3-8B, fp16, 16 tokens: 32 layers x (K, V) x 8 KV heads x 128 dims x 2 bytes x 16.
constexpr uint64_t kBigBlock = 32ull * 2 * 8 * 128 * 2 * 16;
static_assert(kBigBlock == 2ull << 20);
constexpr uint64_t kSmallBlock = 64 << 10;
constexpr uint64_t kLookupBlock = 4096;
constexpr int kLookupKeys = 1000;
constexpr int kLookupSizes[] = {1, 100, kLookupKeys};
constexpr int kConnections[] = {1, 8};
constexpr int kSmallConnections[] = {1, 8};
constexpr int kSources = 16;           // distinct block contents per block size
constexpr size_t kPopulateBatch = 16;  // blocks per PUT while storing beforehand
constexpr size_t kDeleteBatch = 1000;

// ---- helpers -------------------------------------------------------------------------

std::string Quote(const KvStatus& s) { return s.ToString(); }

// The contents of block i of a given size: one of kSources windows of the
// shared pattern (distinct per source, so a GET answered with another
// block's bytes fails verification), built once.
class BlockSource {
 public:
  BlockSource(uint64_t block_bytes, uint64_t salt) {
    for (int j = 0; j < kSources; ++j) {
      std::string b;
      b.reserve(block_bytes);
      uint64_t offset = salt + j * 7919ull * 131;
      while (b.size() < block_bytes) {
        size_t step =
            static_cast<size_t>(std::min<uint64_t>(block_bytes - b.size(), Pattern::kMaxSlice));
        b.append(SharedPattern().Slice(offset + b.size(), step));
      }
      crcs_.push_back(Crc32c(b.data(), b.size()));
      data_.push_back(std::move(b));
    }
  }
  const std::string& Of(uint64_t index) const { return data_[index % kSources]; }
  uint32_t CrcOf(uint64_t index) const { return crcs_[index % kSources]; }

 private:
  std::vector<std::string> data_;
  std::vector<uint32_t> crcs_;
};

// A 32-byte key: a 16-byte tag (padded) and the index in hex.
std::string MakeKey(const std::string& tag, uint64_t index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%-16.16s%016" PRIx64, tag.c_str(), index);
  return std::string(buf, 32);
}

std::vector<std::string> MakeKeys(const std::string& tag, uint64_t n) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (uint64_t i = 0; i < n; ++i) keys.push_back(MakeKey(tag, i));
  return keys;
}

struct KvSetup {
  KvEndpoint endpoint;
  Credentials credentials;
  std::string run_id;  // makes this s3bench run's namespaces fresh

  std::unique_ptr<KvClient> Connect() const {
    kv::ConnectOptions o;
    o.host = endpoint.host;
    o.port = static_cast<uint16_t>(endpoint.port);
    o.access_key = credentials.access_key;
    o.secret_key = credentials.secret_key;
    std::unique_ptr<KvClient> client;
    KvStatus s = KvClient::Connect(o, &client);
    if (!s.ok()) throw BenchError("KV connect: " + Quote(s));
    return client;
  }

  NamespaceDescriptor Descriptor(const std::string& model, uint64_t block_bytes) const {
    NamespaceDescriptor d;
    d.model_id = model;
    d.weights_fingerprint = "s3bench";
    d.kv_dtype = "float16";
    d.kv_layout = "vllm-flash-NHD";
    d.tokens_per_block = 16;
    d.block_bytes = block_bytes;
    d.hash_algorithm = "sha256";
    d.tenant_salt = "s3bench-" + run_id;
    return d;
  }
};

uint64_t Open(KvClient& client, const NamespaceDescriptor& d, NamespaceInfo* info = nullptr) {
  NamespaceInfo local;
  if (info == nullptr) info = &local;
  KvStatus s = client.OpenNamespace(d, info);
  if (!s.ok()) throw BenchError("KV OPEN_NAMESPACE " + d.model_id + ": " + Quote(s));
  return info->handle;
}

// PUTs blocks i = 0..n-1 (key keys[i], contents source.Of(i)); chained to
// the previous key when `chain`.
void Populate(KvClient& client, uint64_t ns, const std::vector<std::string>& keys,
              const BlockSource& source, bool chain) {
  for (size_t first = 0; first < keys.size(); first += kPopulateBatch) {
    size_t n = std::min(kPopulateBatch, keys.size() - first);
    std::vector<PutItem> items(n);
    for (size_t i = 0; i < n; ++i) {
      size_t k = first + i;
      items[i].key = keys[k];
      if (chain && k > 0) items[i].parent = keys[k - 1];
      items[i].data = source.Of(k).data();
      items[i].length = source.Of(k).size();
    }
    KvStatus s = client.Put(ns, items);
    if (!s.ok()) throw BenchError("KV PUT while storing blocks: " + Quote(s));
    for (const PutItem& it : items) {
      if (it.status != KvCode::kOk && it.status != KvCode::kExists) {
        throw BenchError(std::string("KV PUT while storing blocks: ") + kv::KvCodeName(it.status));
      }
    }
  }
}

void DeleteKeys(KvClient& client, uint64_t ns, const std::vector<std::string>& keys) {
  for (size_t first = 0; first < keys.size(); first += kDeleteBatch) {
    size_t n = std::min(kDeleteBatch, keys.size() - first);
    std::vector<KeyView> views(keys.begin() + first, keys.begin() + first + n);
    std::vector<KvCode> statuses;
    KvStatus s = client.Delete(ns, views, &statuses);
    if (!s.ok()) throw BenchError("KV DELETE: " + Quote(s));
  }
}

kv::NamespaceStats Stats(KvClient& client, uint64_t ns) {
  kv::NamespaceStats st;
  KvStatus s = client.Stats(ns, &st);
  if (!s.ok()) throw BenchError("KV STATS: " + Quote(s));
  return st;
}

// Reads `count` blocks starting at block `first` (wrapping at keys.size())
// in one GET into `dst` (count buffers of block_bytes) and checks every
// status and byte. Returns the bytes received.
// The items of such a GET.
std::vector<GetItem> GetItems(const std::vector<std::string>& keys, uint64_t block_bytes,
                              uint64_t first, int count, std::vector<std::string>& dst) {
  std::vector<GetItem> items(count);
  for (int i = 0; i < count; ++i) {
    items[i].key = keys[(first + i) % keys.size()];
    items[i].dst = dst[i].data();
    items[i].dst_capacity = block_bytes;
  }
  return items;
}

// Checks every status and byte of a finished GET; returns the bytes received.
uint64_t VerifyGet(const std::vector<GetItem>& items, const std::vector<std::string>& keys,
                   const BlockSource& source, uint64_t block_bytes, uint64_t first,
                   const std::vector<std::string>& dst, bool byte_compare) {
  const int count = static_cast<int>(items.size());
  uint64_t received = 0;
  for (int i = 0; i < count; ++i) {
    uint64_t idx = (first + i) % keys.size();
    if (items[i].status != KvCode::kOk || items[i].bytes != block_bytes) {
      throw BenchError(std::string("KV GET block ") + std::to_string(idx) + ": " +
                       kv::KvCodeName(items[i].status) + ", " + std::to_string(items[i].bytes) +
                       " bytes");
    }
    // Every block is checked: the client verified the bytes it received
    // against the CRC32C the server sent, and that CRC must be the source's.
    // A byte-for-byte comparison too (a second pass over the block on the
    // client's one core, not part of what a reader does) on every 16th request.
    if (!items[i].crc_checked || items[i].crc32c != source.CrcOf(idx) ||
        (byte_compare &&
         std::memcmp(dst[i].data(), source.Of(idx).data(), block_bytes) != 0)) {
      throw BenchError("KV GET block " + std::to_string(idx) + ": wrong data");
    }
    received += items[i].bytes;
  }
  return received;
}

uint64_t GetAndVerify(KvClient& client, uint64_t ns, const std::vector<std::string>& keys,
                      const BlockSource& source, uint64_t block_bytes, uint64_t first, int count,
                      std::vector<std::string>& dst, bool byte_compare) {
  std::vector<GetItem> items = GetItems(keys, block_bytes, first, count, dst);
  KvStatus s = client.Get(ns, items);
  if (!s.ok()) throw BenchError("KV GET: " + Quote(s));
  return VerifyGet(items, keys, source, block_bytes, first, dst, byte_compare);
}

// The S3 object holding a block (kv-protocol.md "Blocks are objects").
std::string BlockObjectPath(const NamespaceInfo& info, const std::string& key) {
  std::string digest(reinterpret_cast<const char*>(info.digest.data()), info.digest.size());
  return ObjectPath(info.bucket, HexEncode(digest) + "/" + HexEncode(key));
}

// GetObject of block `idx`, every byte checked.
void S3GetBlock(S3Client& client, const NamespaceInfo& info, const std::vector<std::string>& keys,
                const BlockSource& source, uint64_t idx) {
  const std::string& expected = source.Of(idx);
  uint64_t received = 0;
  BodySink sink = [&](const char* data, size_t n) {
    if (received + n > expected.size() || std::memcmp(expected.data() + received, data, n) != 0) {
      throw BenchError("S3 GET of block " + std::to_string(idx) + ": wrong data");
    }
    received += n;
  };
  S3Response resp = client.Send({"GET", BlockObjectPath(info, keys[idx])}, "", &sink);
  ExpectStatus(resp, 200, "S3 GET of a KV block object");
  if (received != expected.size()) {
    throw BenchError("S3 GET of block " + std::to_string(idx) + ": " + std::to_string(received) +
                     " bytes, expected " + std::to_string(expected.size()));
  }
}

uint64_t Xorshift(uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

std::string C(int c) { return std::to_string(c); }

}  // namespace

void RunKvCache(const CaseOptions& opt, const KvCaseOptions& kv_opt, const Target& s3,
                const KvEndpoint& endpoint, Report& report) {
  KvSetup setup{endpoint, s3.credentials, HexEncode(RandomBytes(6))};
  auto admin = setup.Connect();

  // ---- the same-run limit ----------------------------------------------------------
  Row& loopback =
      report.Add("kv_loopback", "kv limit: loopback TCP, 1 stream", Unit::kBytesPerSecond);
  report.Measure(loopback, opt.runs,
                 [&](int) { return RunFigure{MeasureLoopbackBytesPerSecond(opt.duration_s)}; });

  // ---- LOOKUP ----------------------------------------------------------------------------
  const NamespaceDescriptor lookup_d = setup.Descriptor("s3bench/kv-lookup", kLookupBlock);
  const uint64_t lookup_ns = Open(*admin, lookup_d);
  const std::vector<std::string> lookup_keys = MakeKeys("lookup", kLookupKeys);
  {
    BlockSource small(kLookupBlock, 17);
    Populate(*admin, lookup_ns, lookup_keys, small, /*chain=*/true);
  }
  const uint64_t lookups_before = Stats(*admin, lookup_ns).lookups;
  uint64_t lookup_calls = 0;
  std::vector<Row*> lookup_rows;
  for (int n : kLookupSizes) {
    lookup_rows.push_back(&report.Add("kv_lookup_" + C(n), "KV LOOKUP " + C(n) + " key(s), 1 conn",
                                      Unit::kMicroseconds));
  }
  // Run r of every size, then run r + 1: drift on a shared machine hits all sizes alike.
  for (int run = 0; run < opt.runs; ++run) {
    for (size_t i = 0; i < lookup_rows.size(); ++i) {
      const int n = kLookupSizes[i];
      report.MeasureRun(*lookup_rows[i], run, opt.runs, [&](int) {
        TimedResult r = RunTimed(1, opt.duration_s, [&](int) -> Operation {
          auto client = std::shared_ptr<KvClient>(setup.Connect());
          uint64_t ns = Open(*client, lookup_d);
          auto views =
              std::make_shared<std::vector<KeyView>>(lookup_keys.begin(), lookup_keys.begin() + n);
          return [client, ns, views, n](uint64_t) {
            uint32_t prefix = 0;
            KvStatus s = client->Lookup(ns, *views, &prefix);
            if (!s.ok()) throw BenchError("KV LOOKUP: " + Quote(s));
            if (prefix != static_cast<uint32_t>(n)) {
              throw BenchError("KV LOOKUP of " + std::to_string(n) + " stored keys answered " +
                               std::to_string(prefix));
            }
          };
        });
        lookup_calls += r.ops;
        return RunFigure{r.PercentileUs(0.50), r.PercentileUs(0.50), r.PercentileUs(0.99)};
      });
    }
  }
  // The server does not report its own time: estimate it as the round trip
  // of 1000 keys minus that of 1 key (the fixed cost of a round trip).
  Row& lookup_server =
      report.Add("kv_lookup_server", "KV LOOKUP 1000 keys, RTT - RTT(1 key)", Unit::kMicroseconds);
  {
    const Row& one = *lookup_rows.front();
    const Row& many = *lookup_rows.back();
    for (size_t r = 0; r < std::min(one.p50_us.size(), many.p50_us.size()); ++r) {
      lookup_server.runs.push_back(many.p50_us[r] - one.p50_us[r]);
    }
    if (lookup_server.runs.empty()) lookup_server.note = "n/a (LOOKUP rows failed)";
  }
  // LOOKUP_EACH of the same 1000 keys: one bit per key (vLLM's per-key
  // probes of a scheduler step, LMCache's batched_contains).
  Row& each_row = report.Add("kv_lookup_each_1000", "KV LOOKUP_EACH 1000 keys, 1 conn",
                             Unit::kMicroseconds);
  // The server's own time per LOOKUP_EACH (STATS lookup_ns / lookups over the
  // run: from the decoded payload to the queued reply, network excluded).
  Row& each_measured = report.Add("kv_lookup_each_server_time",
                                  "KV LOOKUP_EACH 1000 keys, server time (STATS)",
                                  Unit::kMicroseconds);
  std::vector<double> each_server_us;
  report.Measure(each_row, opt.runs, [&](int) {
    const kv::NamespaceStats before = Stats(*admin, lookup_ns);
    TimedResult r = RunTimed(1, opt.duration_s, [&](int) -> Operation {
      auto client = std::shared_ptr<KvClient>(setup.Connect());
      uint64_t ns = Open(*client, lookup_d);
      auto views = std::make_shared<std::vector<KeyView>>(lookup_keys.begin(),
                                                          lookup_keys.begin() + 1000);
      return [client, ns, views](uint64_t) {
        std::vector<bool> present;
        KvStatus s = client->LookupEach(ns, *views, &present);
        if (!s.ok()) throw BenchError("KV LOOKUP_EACH: " + Quote(s));
        if (std::count(present.begin(), present.end(), true) != 1000) {
          throw BenchError("KV LOOKUP_EACH of 1000 stored keys missed some");
        }
      };
    });
    lookup_calls += r.ops;
    const kv::NamespaceStats after = Stats(*admin, lookup_ns);
    if (after.lookups > before.lookups) {
      each_server_us.push_back(static_cast<double>(after.lookup_ns - before.lookup_ns) / 1000.0 /
                               static_cast<double>(after.lookups - before.lookups));
    }
    return RunFigure{r.PercentileUs(0.50), r.PercentileUs(0.50), r.PercentileUs(0.99)};
  });
  each_measured.runs = each_server_us;
  if (each_measured.runs.empty()) each_measured.note = "n/a (LOOKUP_EACH rows failed)";
  Row& each_server = report.Add("kv_lookup_each_server", "KV LOOKUP_EACH 1000 keys, RTT - RTT(1 key)",
                                Unit::kMicroseconds);
  {
    const Row& one = *lookup_rows.front();
    for (size_t r = 0; r < std::min(one.p50_us.size(), each_row.p50_us.size()); ++r) {
      each_server.runs.push_back(each_row.p50_us[r] - one.p50_us[r]);
    }
    if (each_server.runs.empty()) each_server.note = "n/a (LOOKUP rows failed)";
  }
  const uint64_t lookups_counted = Stats(*admin, lookup_ns).lookups - lookups_before;

  // ---- 2 MiB blocks: store, then KV GET, S3 GET, KV PUT --------------------------------
  const BlockSource big(kBigBlock, 0);
  const NamespaceDescriptor big_d = setup.Descriptor("meta-llama/Meta-Llama-3-8B", kBigBlock);
  NamespaceInfo big_info;
  const uint64_t big_ns = Open(*admin, big_d, &big_info);
  const std::vector<std::string> big_keys = MakeKeys("get2m", kv_opt.get_blocks);
  Populate(*admin, big_ns, big_keys, big, /*chain=*/true);
  uint64_t client_received = 0;  // bytes the KV GETs delivered, all rows
  const kv::NamespaceStats big_before = Stats(*admin, big_ns);

  const Comparison vs_loopback{{"kv_loopback"}, "loopback", 0.80};
  for (int c : kConnections) {
    Row& row = report.Add("kv_get2m_c" + C(c),
                          "KV GET 2 MiB, " + C(kv_opt.batch) + " blocks/req, c=" + C(c),
                          Unit::kBytesPerSecond, vs_loopback);
    report.Measure(row, opt.runs, [&](int) {
      auto received = std::make_shared<std::vector<uint64_t>>(c, 0);
      TimedResult r = RunTimed(c, opt.duration_s, [&](int worker) -> Operation {
        auto client = std::shared_ptr<KvClient>(setup.Connect());
        uint64_t ns = Open(*client, big_d);
        auto dst =
            std::make_shared<std::vector<std::string>>(kv_opt.batch, std::string(kBigBlock, '\0'));
        const int batch = kv_opt.batch;
        uint64_t start = static_cast<uint64_t>(worker) * 7;
        return [client, ns, dst, batch, start, worker, received, &big_keys, &big](uint64_t seq) {
          (*received)[worker] +=
              GetAndVerify(*client, ns, big_keys, big, kBigBlock, start + seq * batch, batch, *dst,
                           seq % 16 == 0);
        };
      });
      uint64_t bytes = 0;
      for (uint64_t b : *received) bytes += b;
      client_received += bytes;
      return RunFigure{bytes / r.seconds, r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
  }
  // One connection with two GETs in flight (GetAsync), as an engine that
  // pipelines its loads runs it: the c=1 row above waits for each reply, so
  // the connection drains at every request boundary.
  {
    Row& row = report.Add("kv_get2m_c1_pipelined",
                          "KV GET 2 MiB, " + C(kv_opt.batch) + " blocks/req, c=1, 2 in flight",
                          Unit::kBytesPerSecond, vs_loopback);
    report.Measure(row, opt.runs, [&](int) {
      auto client = std::unique_ptr<KvClient>(setup.Connect());
      const uint64_t ns = Open(*client, big_d);
      const int batch = kv_opt.batch;
      struct InFlight {
        std::vector<std::string> dst;
        std::vector<GetItem> items;
        std::future<KvStatus> result;
        uint64_t first = 0;
        uint64_t seq = 0;
      };
      InFlight slots[2];
      uint64_t next_seq = 0, bytes = 0;
      auto submit = [&](InFlight& f) {
        f.seq = next_seq++;
        f.first = f.seq * batch;
        f.items = GetItems(big_keys, kBigBlock, f.first, batch, f.dst);
        // A promise per request, owned by its callback (the receiver thread
        // may still be returning from it when the next request is set up).
        auto done = std::make_shared<std::promise<KvStatus>>();
        f.result = done->get_future();
        client->GetAsync(ns, f.items, [done](const KvStatus& s) { done->set_value(s); });
      };
      for (InFlight& f : slots) {
        f.dst.assign(batch, std::string(kBigBlock, '\0'));
        submit(f);
      }
      const double start = NowSeconds();
      double end = start;
      for (int i = 0; end - start < opt.duration_s; i ^= 1) {
        KvStatus s = slots[i].result.get();
        if (!s.ok()) throw BenchError("KV GET (async): " + Quote(s));
        bytes += VerifyGet(slots[i].items, big_keys, big, kBigBlock, slots[i].first, slots[i].dst,
                           slots[i].seq % 16 == 0);
        end = NowSeconds();
        submit(slots[i]);
      }
      client_received += bytes;
      for (InFlight& f : slots) {  // the last ones: checked, not timed
        KvStatus s = f.result.get();
        if (!s.ok()) throw BenchError("KV GET (async): " + Quote(s));
        client_received +=
            VerifyGet(f.items, big_keys, big, kBigBlock, f.first, f.dst, f.seq % 16 == 0);
      }
      return RunFigure{bytes / (end - start)};
    });
  }
  for (int c : kConnections) {
    Row& row = report.Add("s3_get2m_c" + C(c), "S3 GET 2 MiB block objects, c=" + C(c),
                          Unit::kBytesPerSecond,
                          Comparison{{"kv_get2m_c" + C(c)}, "KV GET c=" + C(c), NAN});
    report.Measure(row, opt.runs, [&](int) {
      TimedResult r = RunTimed(c, opt.duration_s, [&](int worker) -> Operation {
        auto client = std::shared_ptr<S3Client>(s3.NewClient());
        client->Connect();
        uint64_t start = static_cast<uint64_t>(worker) * 7;
        return [client, start, &big_info, &big_keys, &big](uint64_t seq) {
          S3GetBlock(*client, big_info, big_keys, big, (start + seq) % big_keys.size());
        };
      });
      return RunFigure{r.ops * kBigBlock / r.seconds, r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
  }
  const kv::NamespaceStats big_after = Stats(*admin, big_ns);

  // The disk's own bound for what a KV PUT does per block (a new file made
  // durable), same filesystem as the server's data, same run.
  for (int c : kConnections) {
    Row& row = report.Add("kv_durable_files_c" + C(c),
                          "kv limit: durable 2 MiB file writes, c=" + C(c), Unit::kBytesPerSecond);
    report.Measure(row, opt.runs, [&](int run) {
      const char* base = std::getenv("TMPDIR");
      const std::string dir = std::string(base && *base ? base : "/tmp") + "/s3bench-durable-" +
                              HexEncode(RandomBytes(4)) + "-" + C(run);
      TimedResult r = MeasureDurableFileWrites(dir, kBigBlock, c, opt.duration_s);
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      return RunFigure{r.ops * kBigBlock / r.seconds, r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
  }
  // And the bound of any durable layout: a frame's blocks (batch x 2 MiB)
  // appended to one file per connection with one fdatasync.
  for (int c : kConnections) {
    Row& row = report.Add("kv_durable_appends_c" + C(c),
                          "kv limit: durable " + C(kv_opt.batch * 2) + " MiB appends, c=" + C(c),
                          Unit::kBytesPerSecond);
    report.Measure(row, opt.runs, [&](int run) {
      const char* base = std::getenv("TMPDIR");
      const std::string dir = std::string(base && *base ? base : "/tmp") + "/s3bench-appends-" +
                              HexEncode(RandomBytes(4)) + "-" + C(run);
      const uint64_t frame = static_cast<uint64_t>(kv_opt.batch) * kBigBlock;
      TimedResult r = MeasureDurableAppends(dir, frame, c, opt.duration_s);
      return RunFigure{r.ops * frame / r.seconds, r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
  }
  for (int c : kConnections) {
    Row& row = report.Add("kv_put2m_c" + C(c),
                          "KV PUT 2 MiB, " + C(kv_opt.batch) + " blocks/req, c=" + C(c),
                          Unit::kBytesPerSecond, Comparison{{"kv_loopback"}, "loopback", 0.60});
    report.Measure(row, opt.runs, [&](int run) {
      // New keys in every run (a PUT of a stored key is answered EXISTS without writing).
      auto stored = std::make_shared<std::vector<uint64_t>>(c, 0);
      auto tag = [c, run](int worker) { return "p" + C(c) + "r" + C(run) + "w" + C(worker); };
      TimedResult r = RunTimed(c, opt.duration_s, [&](int worker) -> Operation {
        auto client = std::shared_ptr<KvClient>(setup.Connect());
        uint64_t ns = Open(*client, big_d);
        const int batch = kv_opt.batch;
        std::string prefix = tag(worker);
        return [client, ns, batch, prefix, worker, stored, &big](uint64_t seq) {
          std::vector<std::string> keys;
          std::vector<PutItem> items(batch);
          for (int i = 0; i < batch; ++i) keys.push_back(MakeKey(prefix, seq * batch + i));
          for (int i = 0; i < batch; ++i) {
            items[i].key = keys[i];
            items[i].data = big.Of(seq * batch + i).data();
            items[i].length = kBigBlock;
          }
          KvStatus s = client->Put(ns, items);
          if (!s.ok()) throw BenchError("KV PUT: " + Quote(s));
          for (const PutItem& it : items) {
            if (it.status != KvCode::kOk) {
              throw BenchError(std::string("KV PUT of a new key: ") + kv::KvCodeName(it.status));
            }
          }
          (*stored)[worker] = (seq + 1) * batch;
        };
      });
      // Untimed: delete what this run stored (bounds the disk space the case needs).
      for (int w = 0; w < c; ++w) DeleteKeys(*admin, big_ns, MakeKeys(tag(w), (*stored)[w]));
      return RunFigure{r.ops * kv_opt.batch * kBigBlock / r.seconds, r.PercentileUs(0.50),
                       r.PercentileUs(0.99)};
    });
  }

  // ---- 64 KiB blocks: KV vs S3 ops/s ----------------------------------------------------
  const BlockSource small(kSmallBlock, 4099);
  const NamespaceDescriptor small_d = setup.Descriptor("s3bench/kv-64k", kSmallBlock);
  NamespaceInfo small_info;
  const uint64_t small_ns = Open(*admin, small_d, &small_info);
  const std::vector<std::string> small_keys = MakeKeys("get64k", kv_opt.small_blocks);
  Populate(*admin, small_ns, small_keys, small, /*chain=*/true);
  const kv::NamespaceStats small_before = Stats(*admin, small_ns);

  for (int c : kSmallConnections) {
    Row& row = report.Add("s3_get64k_c" + C(c), "S3 GET 64 KiB block objects, c=" + C(c),
                          Unit::kOpsPerSecond);
    report.Measure(row, opt.runs, [&](int) {
      TimedResult r = RunTimed(c, opt.duration_s, [&](int worker) -> Operation {
        auto client = std::shared_ptr<S3Client>(s3.NewClient());
        client->Connect();
        auto rng = std::make_shared<uint64_t>(0x9E3779B97F4A7C15ull * (worker + 1));
        return [client, rng, &small_info, &small_keys, &small](uint64_t) {
          S3GetBlock(*client, small_info, small_keys, small, Xorshift(*rng) % small_keys.size());
        };
      });
      return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
  }
  auto small_get_row = [&](const std::string& id, const std::string& label, int c, int batch,
                           const Comparison& cmp) {
    Row& row = report.Add(id, label, Unit::kOpsPerSecond, cmp);
    report.Measure(row, opt.runs, [&](int) {
      auto received = std::make_shared<std::vector<uint64_t>>(c, 0);
      TimedResult r = RunTimed(c, opt.duration_s, [&](int worker) -> Operation {
        auto client = std::shared_ptr<KvClient>(setup.Connect());
        uint64_t ns = Open(*client, small_d);
        auto dst =
            std::make_shared<std::vector<std::string>>(batch, std::string(kSmallBlock, '\0'));
        auto rng = std::make_shared<uint64_t>(0x2545F4914F6CDD1Dull * (worker + 1));
        return [client, ns, dst, batch, rng, worker, received, &small_keys, &small](uint64_t seq) {
          uint64_t first = Xorshift(*rng) % small_keys.size();
          (*received)[worker] +=
              GetAndVerify(*client, ns, small_keys, small, kSmallBlock, first, batch, *dst,
                           seq % 16 == 0);
        };
      });
      uint64_t bytes = 0;
      for (uint64_t b : *received) bytes += b;
      client_received += bytes;
      // Blocks per second (= requests per second when batch is 1): "ops" are blocks.
      return RunFigure{r.ops * static_cast<double>(batch) / r.seconds, r.PercentileUs(0.50),
                       r.PercentileUs(0.99)};
    });
  };
  for (int c : kSmallConnections) {
    small_get_row("kv_get64k_c" + C(c), "KV GET 64 KiB, 1 block/req, c=" + C(c), c, 1,
                  Comparison{{"s3_get64k_c" + C(c)}, "S3 GET c=" + C(c), 10.0, false, true});
  }
  small_get_row("kv_get64k_batch_c1",
                "KV GET 64 KiB, " + C(kv_opt.small_batch) + " blocks/req, c=1", 1,
                kv_opt.small_batch, Comparison{{"s3_get64k_c1"}, "S3 GET c=1", 10.0, false, true});
  const kv::NamespaceStats small_after = Stats(*admin, small_ns);

  // ---- accounting and summary -------------------------------------------------------------
  const uint64_t served = (big_after.bytes_served - big_before.bytes_served) +
                          (small_after.bytes_served - small_before.bytes_served);
  const uint64_t requested = (big_after.bytes_requested - big_before.bytes_requested) +
                             (small_after.bytes_requested - small_before.bytes_requested);
  const double served_ratio = requested ? static_cast<double>(served) / requested : NAN;
  // The S3 GETs of block objects do not go through the KV accounting, so the
  // KV GETs' bytes alone must match what the clients received.
  if (served != requested || served != client_received) {
    Row& row = report.Add("kv_served", "KV bytes served / requested", Unit::kOpsPerSecond);
    row.failed = true;
    row.note = "FAILED: served " + std::to_string(served) + ", requested " +
               std::to_string(requested) + ", received by the clients " +
               std::to_string(client_received);
  }

  // Untimed clean-up: the stored blocks (matters with a long-lived server).
  DeleteKeys(*admin, big_ns, big_keys);
  DeleteKeys(*admin, small_ns, small_keys);
  DeleteKeys(*admin, lookup_ns, lookup_keys);

  auto median_of = [&](const std::string& id) {
    const Row* r = report.Find(id);
    return r == nullptr || r->runs.empty() ? NAN : r->median();
  };
  auto pct = [](double a, double b) { return 100 * a / b; };
  const double lb = median_of("kv_loopback");
  char line[512];
  report.AddNote("kv summary (medians of this run):");
  std::snprintf(line, sizeof line,
                "  KV GET 2 MiB / loopback TCP: c=1 %.1f %%, c=8 %.1f %% (target >= 80 %%); "
                "S3 GET of the same blocks: c=1 %.1f %%, c=8 %.1f %% of loopback",
                pct(median_of("kv_get2m_c1"), lb), pct(median_of("kv_get2m_c8"), lb),
                pct(median_of("s3_get2m_c1"), lb), pct(median_of("s3_get2m_c8"), lb));
  report.AddNote(line);
  std::snprintf(line, sizeof line,
                "  KV PUT 2 MiB / loopback TCP: c=1 %.1f %%, c=8 %.1f %% (target >= 60 %%); / durable "
                "2 MiB file writes (the disk's bound for a new file per block): c=1 %.1f %%, c=8 "
                "%.1f %%",
                pct(median_of("kv_put2m_c1"), lb), pct(median_of("kv_put2m_c8"), lb),
                pct(median_of("kv_put2m_c1"), median_of("kv_durable_files_c1")),
                pct(median_of("kv_put2m_c8"), median_of("kv_durable_files_c8")));
  report.AddNote(line);
  std::snprintf(line, sizeof line,
                "  bytes served / bytes requested (server STATS, all KV GETs above) = %.2f "
                "(%" PRIu64 " / %" PRIu64 "; the clients received %" PRIu64 ")",
                served_ratio, served, requested, client_received);
  report.AddNote(line);
  std::snprintf(line, sizeof line,
                "  64 KiB ops/s KV / S3: 1 block/request c=1 %.1fx, c=8 %.1fx; %d blocks/request "
                "c=1 %.1fx (target >= 10x)",
                median_of("kv_get64k_c1") / median_of("s3_get64k_c1"),
                median_of("kv_get64k_c8") / median_of("s3_get64k_c8"), kv_opt.small_batch,
                median_of("kv_get64k_batch_c1") / median_of("s3_get64k_c1"));
  report.AddNote(line);
  const double server_us = median_of("kv_lookup_each_server_time");
  std::snprintf(line, sizeof line,
                "  LOOKUP_EACH of 1000 keys: server time %.1f us (target <= 50 us: %s), as the "
                "server measured it (STATS lookup_ns per lookup: decode, index probes, reply; "
                "RTT(1000) - RTT(1) adds the client's encoding and 40 KB on the wire: %.1f us); "
                "one round trip per call (%" PRIu64 " calls, server counted %" PRIu64 " lookups)",
                server_us,
                std::isnan(server_us) ? "n/a"
                : server_us <= 50     ? "ok"
                                      : "MISS",
                median_of("kv_lookup_each_server"), lookup_calls, lookups_counted);
  report.AddNote(line);
  if (lookup_calls != lookups_counted) {
    Row& row = report.Add("kv_lookup_count", "KV LOOKUP round trips", Unit::kOpsPerSecond);
    row.failed = true;
    row.note = "FAILED: " + std::to_string(lookup_calls) + " LOOKUP calls, server counted " +
               std::to_string(lookups_counted);
  }
}

}  // namespace strata::bench
