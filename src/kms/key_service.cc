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

constexpr char kWrapFormat = 1;
constexpr size_t kMaterialBytes = 32;

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
  int64_t created_ns = 0, rotated_ns = 0;
  std::vector<std::string> sealed;     // as stored
  std::vector<std::string> materials;  // opened; the newest last
  ~Key() {
    for (std::string& m : materials) OPENSSL_cleanse(m.data(), m.size());
  }
};

KeyService::KeyService(meta::KvStore* kv, std::string operator_key, std::string region,
                       std::string account)
    : kv_(kv),
      operator_key_(std::move(operator_key)),
      arn_prefix_("arn:aws:kms:" + region + ":" + account + ":") {}

KeyService::~KeyService() {
  OPENSSL_cleanse(operator_key_.data(), operator_key_.size());
  ForgetDataKeys();
}

void KeyService::ForgetDataKeys() const {
  std::lock_guard lock(cache_mu_);
  for (auto& [blob, key] : opened_) OPENSSL_cleanse(key.data(), key.size());
  opened_.clear();
}

Result<std::unique_ptr<KeyService>> KeyService::Open(meta::KvStore* kv, std::string operator_key,
                                                     std::string region, std::string account) {
  if (operator_key.size() != kOperatorKeyBytes) {
    return Status(Code::kInvalidArgument, "the key service's operator key must be 32 bytes");
  }
  std::unique_ptr<KeyService> s(
      new KeyService(kv, std::move(operator_key), std::move(region), std::move(account)));
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
      for (const auto& m : j.at("materials")) {
        auto sealed = HexDecode(m.get<std::string>());
        if (!sealed) throw std::runtime_error("a material is not hex");
        key->sealed.push_back(std::move(*sealed));
      }
    } catch (const std::exception& e) {
      return Status(Code::kCorruption, "key service: the record of key " + key->id +
                                           " is malformed (" + e.what() + ")");
    }
    if (key->sealed.empty()) {
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
                 static_cast<uint32_t>(k.materials.size()), k.created_ns, k.rotated_ns};
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
  meta::WriteBatch batch;
  batch.Put(meta::KmsKey(k.id), j.dump());
  return kv_->Write(batch, /*sync=*/true);
}

Result<KeyService::Key*> KeyService::CreateLocked(std::string alias, std::string description,
                                                  bool managed) {
  if (!alias.empty() && !ValidAlias(alias)) {
    return Status(Code::kInvalidArgument,
                  "an alias is alias/ followed by 1-250 letters, digits, '/', '_' or '-'");
  }
  if (!alias.empty() && aliases_.count(alias)) {
    return Status(Code::kAlreadyExists, "the alias " + alias + " is taken");
  }
  auto key = std::make_unique<Key>();
  key->id = NewKeyId();
  key->alias = std::move(alias);
  key->description = std::move(description);
  key->managed = managed;
  key->created_ns = NowNs();
  key->materials.push_back(RandomBytes(kMaterialBytes));
  key->sealed.push_back(crypto::Seal(operator_key_, key->materials[0], MaterialAad(key->id, 0)));
  RETURN_IF_ERROR(StoreLocked(*key));
  if (!key->alias.empty()) aliases_[key->alias] = key->id;
  Key* raw = key.get();
  keys_[key->id] = std::move(key);
  return raw;
}

Result<KeyInfo> KeyService::CreateKey(std::string alias, std::string description) {
  if (alias.starts_with("alias/aws/") || alias.starts_with("alias/strata/")) {
    return Status(Code::kInvalidArgument, "aliases under alias/aws/ and alias/strata/ are reserved");
  }
  std::unique_lock lock(mu_);
  ASSIGN_OR_RETURN(Key * k, CreateLocked(std::move(alias), std::move(description), false));
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
  std::unique_lock lock(mu_);
  Key* k = const_cast<Key*>(FindLocked(ref));
  if (!k) return KeyNotFound(ref);
  const uint32_t index = static_cast<uint32_t>(k->materials.size());
  std::string material = RandomBytes(kMaterialBytes);
  k->sealed.push_back(crypto::Seal(operator_key_, material, MaterialAad(k->id, index)));
  const int64_t before = k->rotated_ns;
  k->rotated_ns = NowNs();
  if (Status st = StoreLocked(*k); !st.ok()) {
    k->sealed.pop_back();
    k->rotated_ns = before;
    OPENSSL_cleanse(material.data(), material.size());
    return st;
  }
  k->materials.push_back(std::move(material));
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
  ASSIGN_OR_RETURN(Key * k, CreateLocked(std::string(alias), what, true));
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
  out.wrapped.push_back(kWrapFormat);
  PutLengthPrefixed(&out.wrapped, k->id);
  PutVarint64(&out.wrapped, index);
  out.wrapped += crypto::Seal(k->materials[index], out.plaintext, WrapAad(k->id, index, context));
  return out;
}

namespace {

bool ParseWrapped(std::string_view in, std::string_view* id, uint64_t* index,
                  std::string_view* sealed) {
  if (in.empty() || in[0] != kWrapFormat) return false;
  in.remove_prefix(1);
  if (!GetLengthPrefixed(&in, id) || !GetVarint64(&in, index)) return false;
  *sealed = in;
  return true;
}

}  // namespace

std::string KeyService::KeyIdOf(std::string_view wrapped) {
  std::string_view id, sealed;
  uint64_t index;
  return ParseWrapped(wrapped, &id, &index, &sealed) ? std::string(id) : std::string();
}

Result<std::string> KeyService::Decrypt(std::string_view wrapped, std::string_view context) const {
  std::string_view id, sealed;
  uint64_t index;
  if (!ParseWrapped(wrapped, &id, &index, &sealed)) {
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
  if (index >= k.materials.size()) {
    return Status(Code::kPermissionDenied, "the wrapped data key names no material of its key",
                  Detail::kKmsCiphertext);
  }
  std::string cache_key(wrapped);
  cache_key.push_back('\0');
  cache_key.append(context);
  {
    std::lock_guard cache_lock(cache_mu_);
    if (auto hit = opened_.find(cache_key); hit != opened_.end()) return hit->second;
  }
  auto plain = crypto::Open(k.materials[index], sealed,
                            WrapAad(k.id, static_cast<uint32_t>(index), context));
  if (!plain) {
    return Status(Code::kPermissionDenied,
                  "the data key does not open under its key and encryption context",
                  Detail::kKmsCiphertext);
  }
  lock.unlock();
  {
    std::lock_guard cache_lock(cache_mu_);
    if (opened_.size() >= kCachedDataKeys) {
      for (auto& [blob, key] : opened_) OPENSSL_cleanse(key.data(), key.size());
      opened_.clear();
    }
    opened_.emplace(std::move(cache_key), *plain);
  }
  return std::move(*plain);
}

}  // namespace strata::kms
