#include "kms/key_service.h"

#include <openssl/crypto.h>

#include <cctype>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>

#include "common/encoding.h"
#include "common/hash.h"
#include "crypto/secret_box.h"
#include "meta/keys.h"

namespace strata::kms {

namespace {

constexpr char kWrapFormat = 1;          // wrapped here: the material's AES-GCM (secret_box)
constexpr char kWrapExternalFormat = 2;  // wrapped by the external key server
constexpr size_t kMaterialBytes = 32;
constexpr size_t kExternalIvBytes = 12;
constexpr size_t kExternalTagBytes = 16;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string NewKeyId() {
  std::string hex = HexEncode(RandomBytes(16));
  hex[12] = '4';  // a version-4 UUID
  hex[16] = "89ab"[static_cast<unsigned char>(hex[16]) % 4];
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

// What a material is sealed with: bound to its key and its place in the list.
std::string MaterialAad(const std::string& id, uint32_t index) {
  return "strata-kms-material-v1|" + id + "|" + std::to_string(index);
}

std::string WrapAad(const std::string& id, uint32_t index, std::string_view context) {
  std::string aad = "strata-kms-data-key-v1|" + id + "|" + std::to_string(index) + "|";
  aad.append(context);
  return aad;
}

bool ValidAlias(std::string_view alias) {
  if (!alias.starts_with("alias/") || alias.size() <= 6 || alias.size() > 256) return false;
  for (char c : alias.substr(6)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-')) {
      return false;
    }
  }
  return true;
}

Status KeyNotFound(std::string_view ref) {
  return Status(Code::kNotFound, "Invalid keyId " + std::string(ref), Detail::kKmsKey);
}

}  // namespace

struct KeyService::Key {
  std::string id, alias, description;
  bool enabled = true, managed = false;
  bool external = false;  // materials are the external server's key identifiers
  int64_t created_ns = 0, rotated_ns = 0;
  std::vector<std::string> sealed;     // as stored
  std::vector<std::string> materials;  // opened; the newest last
  ~Key() {
    for (std::string& m : materials) OPENSSL_cleanse(m.data(), m.size());
  }
};

KeyService::KeyService(meta::KvStore* kv, std::string operator_key, std::string region,
                       std::string account, ExternalKeys* external)
    : external_(external),
      kv_(kv),
      operator_key_(std::move(operator_key)),
      arn_prefix_("arn:aws:kms:" + region + ":" + account + ":") {}

KeyService::~KeyService() {
  OPENSSL_cleanse(operator_key_.data(), operator_key_.size());
  ForgetDataKeys();
}

void KeyService::ForgetDataKeys() const {
  std::lock_guard lock(cache_mu_);
  for (auto& [blob, o] : opened_) OPENSSL_cleanse(o.key.data(), o.key.size());
  opened_.clear();
}

std::optional<std::string> KeyService::CachedDataKey(const std::string& cache_key) const {
  std::lock_guard lock(cache_mu_);
  auto hit = opened_.find(cache_key);
  if (hit == opened_.end()) return std::nullopt;
  if (hit->second.expires_ns != 0 && hit->second.expires_ns <= NowNs()) {
    OPENSSL_cleanse(hit->second.key.data(), hit->second.key.size());
    opened_.erase(hit);
    return std::nullopt;
  }
  return hit->second.key;
}

void KeyService::CacheDataKey(std::string cache_key, const std::string& key, bool external) const {
  std::lock_guard lock(cache_mu_);
  if (opened_.size() >= kCachedDataKeys) {
    for (auto& [blob, o] : opened_) OPENSSL_cleanse(o.key.data(), o.key.size());
    opened_.clear();
  }
  opened_[std::move(cache_key)] = Opened{key, external ? NowNs() + kExternalCacheSeconds * 1'000'000'000 : 0};
}

Status KeyService::NoExternal(const std::string& id) const {
  return Status(Code::kUnavailable, "KMS key " + id +
                                        " is held by an external key server, and none is "
                                        "configured (--kmip-endpoint)");
}

Result<std::string> KeyService::NewMaterial(const std::string& id, bool external) {
  if (!external) return RandomBytes(kMaterialBytes);
  if (!external_) return NoExternal(id);
  return external_->CreateKey("strata/" + id);
}

Result<std::unique_ptr<KeyService>> KeyService::Open(meta::KvStore* kv, std::string operator_key,
                                                     std::string region, std::string account,
                                                     ExternalKeys* external) {
  if (operator_key.size() != kOperatorKeyBytes) {
    return Status(Code::kInvalidArgument, "the key service's operator key must be 32 bytes");
  }
  std::unique_ptr<KeyService> s(
      new KeyService(kv, std::move(operator_key), std::move(region), std::move(account), external));
  RETURN_IF_ERROR(s->Load());
  return s;
}

Status KeyService::Load() {
  auto it = kv_->NewIterator();
  const std::string prefix = meta::PrefixKey(meta::kKmsPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto key = std::make_unique<Key>();
    key->id = std::string(it->key().substr(1));
    nlohmann::json j = nlohmann::json::parse(it->value(), nullptr, /*allow_exceptions=*/false);
    try {
      if (!j.is_object()) throw std::runtime_error("not an object");
      key->alias = j.at("alias").get<std::string>();
      key->description = j.at("description").get<std::string>();
      key->enabled = j.at("enabled").get<bool>();
      key->managed = j.at("managed").get<bool>();
      key->created_ns = j.at("created_ns").get<int64_t>();
      key->rotated_ns = j.at("rotated_ns").get<int64_t>();
      key->external = j.value("external", false);
      if (key->external) {
        for (const auto& uid : j.at("kmip")) key->materials.push_back(uid.get<std::string>());
      }
      for (const auto& m : j.at("materials")) {
        auto sealed = HexDecode(m.get<std::string>());
        if (!sealed) throw std::runtime_error("a material is not hex");
        key->sealed.push_back(std::move(*sealed));
      }
    } catch (const std::exception& e) {
      return Status(Code::kCorruption, "key service: the record of key " + key->id +
                                           " is malformed (" + e.what() + ")");
    }
    if (key->sealed.empty() == !key->external || (key->external && key->materials.empty())) {
      return Status(Code::kCorruption, "key service: key " + key->id + " has no material");
    }
    for (size_t i = 0; i < key->sealed.size(); ++i) {
      auto m = crypto::Open(operator_key_, key->sealed[i], MaterialAad(key->id, i));
      if (!m || m->size() != kMaterialBytes) {
        return Status(Code::kCorruption,
                      "key service: key " + key->id +
                          " does not open under this operator key (the wrong key file?)");
      }
      key->materials.push_back(std::move(*m));
    }
    if (!key->alias.empty()) aliases_[key->alias] = key->id;
    keys_[key->id] = std::move(key);
  }
  return it->status();
}

std::string KeyService::Arn(const std::string& id) const { return arn_prefix_ + "key/" + id; }

KeyInfo KeyService::InfoOf(const Key& k) const {
  return KeyInfo{k.id,         Arn(k.id),  k.alias, k.description, k.enabled, k.managed,
                 static_cast<uint32_t>(k.materials.size()), k.created_ns, k.rotated_ns, k.external};
}

const KeyService::Key* KeyService::FindLocked(std::string_view ref) const {
  std::string_view r = ref;
  if (r.starts_with(arn_prefix_)) r.remove_prefix(arn_prefix_.size());
  if (r.starts_with("key/")) r.remove_prefix(4);
  if (r.starts_with("alias/")) {
    auto a = aliases_.find(std::string(r));
    if (a == aliases_.end()) return nullptr;
    r = a->second;
  }
  auto k = keys_.find(std::string(r));
  return k == keys_.end() ? nullptr : k->second.get();
}

Status KeyService::StoreLocked(const Key& k) {
  nlohmann::json materials = nlohmann::json::array();
  for (const std::string& s : k.sealed) materials.push_back(HexEncode(s));
  nlohmann::json j = {{"alias", k.alias},           {"description", k.description},
                      {"enabled", k.enabled},       {"managed", k.managed},
                      {"created_ns", k.created_ns}, {"rotated_ns", k.rotated_ns},
                      {"materials", materials}};
  if (k.external) {
    j["external"] = true;
    j["kmip"] = k.materials;  // the server's identifiers: not secret
  }
  meta::WriteBatch batch;
  batch.Put(meta::KmsKey(k.id), j.dump());
  return kv_->Write(batch, /*sync=*/true);
}

Status KeyService::CheckAliasLocked(const std::string& alias) const {
  if (!alias.empty() && !ValidAlias(alias)) {
    return Status(Code::kInvalidArgument,
                  "an alias is alias/ followed by 1-250 letters, digits, '/', '_' or '-'");
  }
  if (!alias.empty() && aliases_.count(alias)) {
    return Status(Code::kAlreadyExists, "the alias " + alias + " is taken");
  }
  return Status::OK();
}

Result<KeyService::Key*> KeyService::CreateLocked(std::string alias, std::string description,
                                                  bool managed, std::string id,
                                                  std::string material, bool external) {
  RETURN_IF_ERROR(CheckAliasLocked(alias));
  auto key = std::make_unique<Key>();
  key->id = std::move(id);
  key->alias = std::move(alias);
  key->description = std::move(description);
  key->managed = managed;
  key->external = external;
  key->created_ns = NowNs();
  if (!external) key->sealed.push_back(crypto::Seal(operator_key_, material, MaterialAad(key->id, 0)));
  key->materials.push_back(std::move(material));
  RETURN_IF_ERROR(StoreLocked(*key));
  if (!key->alias.empty()) aliases_[key->alias] = key->id;
  Key* raw = key.get();
  keys_[key->id] = std::move(key);
  return raw;
}

Result<KeyInfo> KeyService::CreateKey(std::string alias, std::string description, bool external) {
  if (alias.starts_with("alias/aws/") || alias.starts_with("alias/strata/")) {
    return Status(Code::kInvalidArgument, "aliases under alias/aws/ and alias/strata/ are reserved");
  }
  if (external && !external_) {
    return Status(Code::kPreconditionFailed,
                  "no external key server is configured (--kmip-endpoint)");
  }
  {
    std::shared_lock lock(mu_);
    RETURN_IF_ERROR(CheckAliasLocked(alias));
  }
  std::string id = NewKeyId();
  // The external server is asked without mu_ held (a network round trip).
  ASSIGN_OR_RETURN(std::string material, NewMaterial(id, external));
  std::unique_lock lock(mu_);
  ASSIGN_OR_RETURN(Key * k, CreateLocked(std::move(alias), std::move(description), false,
                                         std::move(id), std::move(material), external));
  return InfoOf(*k);
}

std::vector<KeyInfo> KeyService::ListKeys() const {
  std::shared_lock lock(mu_);
  std::vector<KeyInfo> out;
  for (const auto& [id, k] : keys_) out.push_back(InfoOf(*k));
  return out;
}

Result<KeyInfo> KeyService::Describe(std::string_view ref) const {
  std::shared_lock lock(mu_);
  const Key* k = FindLocked(ref);
  if (!k) return KeyNotFound(ref);
  return InfoOf(*k);
}

Result<KeyInfo> KeyService::Rotate(std::string_view ref) {
  std::string id;
  bool external = false;
  {
    std::shared_lock lock(mu_);
    const Key* k = FindLocked(ref);
    if (!k) return KeyNotFound(ref);
    id = k->id;
    external = k->external;
  }
  ASSIGN_OR_RETURN(std::string material, NewMaterial(id, external));
  std::unique_lock lock(mu_);
  Key* k = keys_.at(id).get();  // keys are never removed
  const uint32_t index = static_cast<uint32_t>(k->materials.size());
  if (!external) k->sealed.push_back(crypto::Seal(operator_key_, material, MaterialAad(k->id, index)));
  k->materials.push_back(std::move(material));
  const int64_t before = k->rotated_ns;
  k->rotated_ns = NowNs();
  if (Status st = StoreLocked(*k); !st.ok()) {
    if (!external) k->sealed.pop_back();
    OPENSSL_cleanse(k->materials.back().data(), k->materials.back().size());
    k->materials.pop_back();
    k->rotated_ns = before;
    return st;
  }
  return InfoOf(*k);
}

Result<KeyInfo> KeyService::SetEnabled(std::string_view ref, bool enabled) {
  std::unique_lock lock(mu_);
  Key* k = const_cast<Key*>(FindLocked(ref));
  if (!k) return KeyNotFound(ref);
  if (!enabled && k->alias == kSseS3Alias) {
    return Status(Code::kPreconditionFailed,
                  "the SSE-S3 key is the store's own and cannot be disabled");
  }
  if (k->enabled == enabled) return InfoOf(*k);
  k->enabled = enabled;
  if (Status st = StoreLocked(*k); !st.ok()) {
    k->enabled = !enabled;
    return st;
  }
  return InfoOf(*k);
}

Result<const KeyService::Key*> KeyService::EnsureManagedLocked(std::string_view alias) {
  if (const Key* k = FindLocked(alias)) return k;
  const char* what = alias == kSseS3Alias ? "SSE-S3 (the store's own key)"
                                          : "SSE-KMS without a key id (the AWS-managed key)";
  ASSIGN_OR_RETURN(Key * k, CreateLocked(std::string(alias), what, true, NewKeyId(),
                                         RandomBytes(kMaterialBytes), false));
  return k;
}

Result<DataKey> KeyService::GenerateDataKey(std::string_view ref, std::string_view context) {
  if (ref.empty()) ref = kDefaultKmsAlias;
  const Key* k = nullptr;
  {
    std::shared_lock lock(mu_);
    k = FindLocked(ref);
    if (!k && ref != kSseS3Alias && ref != kDefaultKmsAlias) return KeyNotFound(ref);
  }
  if (!k) {
    std::unique_lock lock(mu_);
    ASSIGN_OR_RETURN(k, EnsureManagedLocked(ref));
  }
  std::shared_lock lock(mu_);  // keys are never removed: k stays valid
  if (!k->enabled) {
    return Status(Code::kPreconditionFailed, Arn(k->id) + " is disabled.", Detail::kKmsDisabled);
  }
  const uint32_t index = static_cast<uint32_t>(k->materials.size() - 1);
  DataKey out;
  out.plaintext = RandomBytes(kMaterialBytes);
  out.key_arn = Arn(k->id);
  out.wrapped.push_back(k->external ? kWrapExternalFormat : kWrapFormat);
  PutLengthPrefixed(&out.wrapped, k->id);
  PutVarint64(&out.wrapped, index);
  const std::string aad = WrapAad(k->id, index, context);
  if (!k->external) {
    out.wrapped += crypto::Seal(k->materials[index], out.plaintext, aad);
    return out;
  }
  const std::string uid = k->materials[index], id = k->id;
  lock.unlock();  // the external server is asked without mu_ held
  if (!external_) return NoExternal(id);
  const std::string iv = RandomBytes(kExternalIvBytes);
  ASSIGN_OR_RETURN(ExternalSealed sealed, external_->Encrypt(uid, out.plaintext, iv, aad));
  if (sealed.tag.size() != kExternalTagBytes || sealed.ciphertext.size() != kMaterialBytes) {
    return Status(Code::kUnavailable, "the external key server " + external_->Describe() +
                                          " wrapped a data key into an unexpected form");
  }
  out.wrapped += iv + sealed.tag + sealed.ciphertext;
  return out;
}

namespace {

bool ParseWrapped(std::string_view in, char* format, std::string_view* id, uint64_t* index,
                  std::string_view* sealed) {
  if (in.empty() || (in[0] != kWrapFormat && in[0] != kWrapExternalFormat)) return false;
  *format = in[0];
  in.remove_prefix(1);
  if (!GetLengthPrefixed(&in, id) || !GetVarint64(&in, index)) return false;
  if (*format == kWrapExternalFormat && in.size() != kExternalIvBytes + kExternalTagBytes + kMaterialBytes) {
    return false;
  }
  *sealed = in;
  return true;
}

}  // namespace

std::string KeyService::DefaultContext(std::string_view bucket, std::string_view key) {
  std::map<std::string, std::string> context;
  context["aws:s3:arn"] = "arn:aws:s3:::" + std::string(bucket) + "/" + std::string(key);
  return nlohmann::json(context).dump();
}

std::string KeyService::KeyIdOf(std::string_view wrapped) {
  std::string_view id, sealed;
  uint64_t index;
  char format;
  return ParseWrapped(wrapped, &format, &id, &index, &sealed) ? std::string(id) : std::string();
}

Result<std::string> KeyService::Decrypt(std::string_view wrapped, std::string_view context) const {
  std::string_view id, sealed;
  uint64_t index;
  char format;
  if (!ParseWrapped(wrapped, &format, &id, &index, &sealed)) {
    return Status(Code::kPermissionDenied, "the wrapped data key is malformed",
                  Detail::kKmsCiphertext);
  }
  std::shared_lock lock(mu_);
  auto it = keys_.find(std::string(id));
  if (it == keys_.end()) return KeyNotFound(id);
  const Key& k = *it->second;
  if (!k.enabled) {
    return Status(Code::kPreconditionFailed, Arn(k.id) + " is disabled.", Detail::kKmsDisabled);
  }
  if (index >= k.materials.size() || k.external != (format == kWrapExternalFormat)) {
    return Status(Code::kPermissionDenied, "the wrapped data key names no material of its key",
                  Detail::kKmsCiphertext);
  }
  std::string cache_key(wrapped);
  cache_key.push_back('\0');
  cache_key.append(context);
  if (auto hit = CachedDataKey(cache_key)) return std::move(*hit);
  const std::string aad = WrapAad(k.id, static_cast<uint32_t>(index), context);
  std::optional<std::string> plain;
  if (!k.external) {
    plain = crypto::Open(k.materials[index], sealed, aad);
    lock.unlock();
  } else {
    const std::string uid = k.materials[index], key_id = k.id;
    lock.unlock();  // the external server is asked without mu_ held
    if (!external_) return NoExternal(key_id);
    ExternalSealed blob{std::string(sealed.substr(kExternalIvBytes + kExternalTagBytes)),
                        std::string(sealed.substr(kExternalIvBytes, kExternalTagBytes))};
    ASSIGN_OR_RETURN(std::string opened,
                     external_->Decrypt(uid, blob, sealed.substr(0, kExternalIvBytes), aad));
    if (opened.size() == kMaterialBytes) plain = std::move(opened);
  }
  if (!plain) {
    return Status(Code::kPermissionDenied,
                  "the data key does not open under its key and encryption context",
                  Detail::kKmsCiphertext);
  }
  CacheDataKey(std::move(cache_key), *plain, format == kWrapExternalFormat);
  return std::move(*plain);
}

}  // namespace strata::kms
