#include "kvcache/namespace_registry.h"

#include <cstring>
#include <unordered_map>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/log.h"

namespace strata::kvcache {
namespace {

uint64_t RandomSeed() {
  std::string b = RandomBytes(8);
  uint64_t v;
  std::memcpy(&v, b.data(), 8);
  return v;
}

// "<64 hex digest>/<hex key>" -> digest, key. False for anything else.
bool ParseObjectKey(const std::string& object_key, Sha256Digest* digest, std::string* key) {
  if (object_key.size() < 65 || object_key[64] != '/') return false;
  auto d = HexDecode(std::string_view(object_key).substr(0, 64));
  auto k = HexDecode(std::string_view(object_key).substr(65));
  if (!d || !k || !proto::ValidKey(*k)) return false;
  // Only the canonical (lowercase) spelling names a block.
  if (HexEncode(*k) != std::string_view(object_key).substr(65) ||
      HexEncode(*d) != std::string_view(object_key).substr(0, 64)) {
    return false;
  }
  std::memcpy(digest->data(), d->data(), 32);
  *key = std::move(*k);
  return true;
}

}  // namespace

std::optional<uint32_t> BlockCrc32c(const object::ObjectRecord& rec) {
  if (rec.checksum_algorithm != "CRC32C") return std::nullopt;
  auto raw = Base64Decode(rec.checksum_value);
  if (!raw || raw->size() != 4) return std::nullopt;
  const auto* b = reinterpret_cast<const unsigned char*>(raw->data());
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | uint32_t{b[3]};
}

Namespace::Namespace(const Sha256Digest& digest, std::string owner, uint64_t hash_seed)
    : index(hash_seed),
      digest_(digest),
      digest_hex_(proto::DigestHex(digest)),
      bucket_(proto::NamespaceBucket(digest)),
      owner_(std::move(owner)) {}

std::string Namespace::ObjectKey(std::string_view key) const {
  return digest_hex_ + "/" + HexEncode(key);
}

NamespaceRegistry::NamespaceRegistry(object::ObjectEngine* engine, RegistryOptions options)
    : engine_(engine), options_(std::move(options)) {}

Namespace* NamespaceRegistry::GetOrAdd(const Sha256Digest& digest, const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = by_digest_[digest];
  if (!slot) {
    slot = std::make_unique<Namespace>(digest, owner, RandomSeed());
    slot->index.set_shared_bytes(&stored_total_);
  }
  return slot.get();
}

bool NamespaceRegistry::ReserveTotal(uint64_t n) {
  uint64_t reserved = reserved_total_.fetch_add(n, std::memory_order_relaxed) + n;
  if (options_.max_total_bytes == 0 ||
      stored_total_.load(std::memory_order_relaxed) + reserved <= options_.max_total_bytes) {
    return true;
  }
  reserved_total_.fetch_sub(n, std::memory_order_relaxed);
  return false;
}

std::vector<Namespace*> NamespaceRegistry::All() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Namespace*> out;
  out.reserve(by_digest_.size());
  for (auto& [d, ns] : by_digest_) out.push_back(ns.get());
  return out;
}

Status NamespaceRegistry::Rebuild() {
  ASSIGN_OR_RETURN(auto buckets, engine_->ListBuckets());
  size_t total = 0;
  for (const auto& [name, record] : buckets) {
    if (name.size() != proto::kBucketPrefix.size() + 16 ||
        !name.starts_with(proto::kBucketPrefix)) {
      continue;
    }
    std::map<Sha256Digest, std::vector<BlockIndex::Restored>> found;
    object::ListParams params;
    params.max_keys = 1000;
    while (true) {
      ASSIGN_OR_RETURN(object::ListResult page, engine_->ListObjects(name, params));
      for (const object::ListEntry& e : page.objects) {
        Sha256Digest digest;
        BlockIndex::Restored b;
        // A block sits in its own namespace's bucket only.
        if (!ParseObjectKey(e.key, &digest, &b.key) || proto::NamespaceBucket(digest) != name) {
          continue;
        }
        b.length = e.record.size_bytes;
        b.stamp = static_cast<uint64_t>(e.record.mtime_ns);
        b.crc32c = BlockCrc32c(e.record);
        for (const auto& [k, v] : e.record.headers.user_metadata) {
          if (k == kBlockMetadata) b.has_meta = true;
          if (k != kParentMetadata) continue;
          auto parent = HexDecode(v);
          if (parent && proto::ValidKey(*parent)) b.parent = std::move(*parent);
        }
        found[digest].push_back(std::move(b));
      }
      if (!page.is_truncated) break;
      params.start_after = page.last_emitted;
    }
    for (auto& [digest, blocks] : found) {
      total += blocks.size();
      Namespace* ns = GetOrAdd(digest, record.owner);
      std::lock_guard<std::mutex> lock(ns->mu);
      ns->index.Restore(std::move(blocks));
    }
  }
  if (total > 0) STRATA_LOG("kv: indexed %zu blocks from the kv-* buckets", total);
  return Status::OK();
}

Result<std::string> NamespaceRegistry::ReadManifest(Namespace* ns) {
  auto reader = engine_->OpenObject(ns->bucket(), ns->ManifestKey());
  if (!reader.ok()) {
    if (reader.status().code() == Code::kNotFound) return std::string();
    return reader.status().WithContext("kv manifest");
  }
  const uint64_t size = (*reader)->record().size_bytes;
  if (size > proto::kMaxManifestBytes) return Corruption("kv manifest of " + ns->bucket() + " too large");
  std::string out(size, '\0');
  for (uint64_t got = 0; got < size;) {
    ASSIGN_OR_RETURN(size_t r, (*reader)->ReadAt(got, out.data() + got, size - got));
    if (r == 0) return Corruption("kv manifest of " + ns->bucket() + " is short");
    got += r;
  }
  return out;
}

Result<std::string> NamespaceRegistry::Manifest(Namespace* ns, std::string_view offered) {
  std::lock_guard<std::mutex> lock(manifest_mu_);
  auto known = manifests_.find(ns);
  if (known != manifests_.end() && !known->second.empty()) return known->second;
  ASSIGN_OR_RETURN(std::string stored, ReadManifest(ns));
  if (stored.empty() && !offered.empty()) {
    object::ObjectHeaders headers;
    headers.content_type = "application/octet-stream";
    ASSIGN_OR_RETURN(auto writer, engine_->NewWriter(ns->bucket(), ns->ManifestKey(), headers));
    RETURN_IF_ERROR(writer->Append(offered));
    auto committed = writer->Commit([](const std::optional<object::ObjectRecord>& current) {
      return current ? AlreadyExists("manifest exists") : Status::OK();
    });
    if (committed.ok()) {
      stored.assign(offered);
    } else if (committed.status().code() == Code::kAlreadyExists) {
      ASSIGN_OR_RETURN(stored, ReadManifest(ns));  // written meanwhile (through S3)
    } else {
      return committed.status().WithContext("kv manifest");
    }
  }
  manifests_[ns] = stored;
  return stored;
}

Result<Namespace*> NamespaceRegistry::Open(const proto::NamespaceDescriptor& d,
                                           const std::string& identity, bool is_operator) {
  Sha256Digest digest = proto::NamespaceDigest(d);
  std::string bucket = proto::NamespaceBucket(digest);
  auto rec = engine_->GetBucket(bucket);
  if (!rec.ok() && rec.status().code() == Code::kNotFound) {
    object::BucketRecord r;
    r.created_ns = engine_->NowNs();
    r.region = options_.region;
    r.owner = identity;
    Status st = engine_->CreateBucket(bucket, r);
    if (!st.ok() && st.code() != Code::kAlreadyExists) return st.WithContext("kv namespace bucket");
    rec = engine_->GetBucket(bucket);
  }
  if (!rec.ok()) return rec.status().WithContext("kv namespace bucket");
  if (rec->owner != identity && !is_operator) {
    return PermissionDenied("namespace bucket " + bucket + " belongs to another identity");
  }
  Namespace* ns = GetOrAdd(digest, rec->owner);
  std::lock_guard<std::mutex> lock(ns->mu);
  ns->block_bytes = d.block_bytes;  // part of the digest: the same for every open
  if (!ns->settings_set) {
    ns->quota_bytes = d.quota_bytes != 0 ? d.quota_bytes : options_.default_quota_bytes;
    ns->ttl_s = d.ttl_s;
    ns->settings_set = true;
  } else {  // the owner or an operator changes what it names; 0 keeps a setting
    if (d.quota_bytes != 0) ns->quota_bytes = d.quota_bytes;
    if (d.ttl_s != 0) ns->ttl_s = d.ttl_s;
  }
  return ns;
}

}  // namespace strata::kvcache
