// The built-in key service (SSE-S3 and SSE-KMS, docs/encryption.md): master
// keys that never leave it, data keys generated and wrapped under them.
//
// A master key is a list of 32-byte key materials (one per rotation; the
// newest wraps, every one unwraps), each sealed at rest under the operator
// key (crypto/secret_box.h) and stored in the metadata as JSON under
// "K" + key id. Every key is held decoded in memory, so wrapping and
// unwrapping take no metadata read. A wrapped data key names its master key
// and material, and is bound to the encryption context it was made with.
// Disabling a key makes every data key wrapped under it unopenable until it
// is enabled again (crypto-erase by key, reversibly); the SSE-S3 key is the
// store's own and cannot be disabled.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "kms/external_keys.h"
#include "meta/kv_store.h"

namespace strata::kms {

inline constexpr size_t kOperatorKeyBytes = 32;
// The alias of the key SSE-S3 wraps under, and the AWS-managed key SSE-KMS
// uses when the request names none (both created on first use).
inline constexpr std::string_view kSseS3Alias = "alias/strata/sse-s3";
inline constexpr std::string_view kDefaultKmsAlias = "alias/aws/s3";

struct KeyInfo {
  std::string id;   // a UUID
  std::string arn;  // arn:aws:kms:<region>:<account>:key/<id>
  std::string alias;  // "alias/..." or ""
  std::string description;
  bool enabled = true;
  bool managed = false;  // created by strata (SSE-S3, aws/s3)
  uint32_t materials = 1;  // 1 + rotations
  int64_t created_ns = 0;
  int64_t rotated_ns = 0;  // 0: never
  bool external = false;  // held by the external key server
};

struct DataKey {
  std::string plaintext;  // 32 bytes
  std::string wrapped;    // what to store
  std::string key_arn;    // the master key's ARN
};

class KeyService {
 public:
  // `operator_key`: kOperatorKeyBytes. Loads every key (Corruption if one does
  // not open under the operator key: the wrong key file). `external` (may be
  // null: then external keys load but cannot be used) must outlive the service.
  static Result<std::unique_ptr<KeyService>> Open(meta::KvStore* kv, std::string operator_key,
                                                  std::string region, std::string account,
                                                  ExternalKeys* external = nullptr);
  ~KeyService();

  // AlreadyExists if the alias is taken; InvalidArgument for a malformed one.
  // `external`: the key is made in the external key server (PreconditionFailed
  // if there is none; Unavailable if it cannot be reached).
  Result<KeyInfo> CreateKey(std::string alias, std::string description, bool external = false);
  std::vector<KeyInfo> ListKeys() const;
  // By id, ARN, "alias/name" or alias ARN. NotFound (kKmsKey) if none.
  Result<KeyInfo> Describe(std::string_view ref) const;
  // A new key material; data keys wrapped under older ones stay readable.
  Result<KeyInfo> Rotate(std::string_view ref);
  // PreconditionFailed for the SSE-S3 key.
  Result<KeyInfo> SetEnabled(std::string_view ref, bool enabled);

  // A fresh data key under `ref` ("" = kDefaultKmsAlias; kSseS3Alias for
  // SSE-S3; the managed keys are created on first use). NotFound (kKmsKey),
  // PreconditionFailed (kKmsDisabled).
  Result<DataKey> GenerateDataKey(std::string_view ref, std::string_view context);
  // The data key inside `wrapped`: NotFound (kKmsKey) if its master key is
  // gone, PreconditionFailed (kKmsDisabled) if disabled, PermissionDenied
  // (kKmsCiphertext) if it does not open (altered, another context).
  Result<std::string> Decrypt(std::string_view wrapped, std::string_view context) const;
  // The ARN of the master key a wrapped data key names ("" if unreadable).
  static std::string KeyIdOf(std::string_view wrapped);
  // The encryption context SSE-KMS binds when the client gives none (AWS's):
  // {"aws:s3:arn":"arn:aws:s3:::<bucket>/<key>"}, canonical JSON.
  static std::string DefaultContext(std::string_view bucket, std::string_view key);

 private:
  struct Key;
  KeyService(meta::KvStore* kv, std::string operator_key, std::string region, std::string account,
             ExternalKeys* external);
  // A new material for `key`: 32 random bytes, or a key made at the external
  // server (its identifier). Called without mu_ held for external keys.
  Result<std::string> NewMaterial(const std::string& id, bool external);
  Status NoExternal(const std::string& id) const;
  Status Load();
  const Key* FindLocked(std::string_view ref) const;
  Result<const Key*> EnsureManagedLocked(std::string_view alias);
  Status StoreLocked(const Key& key);
  Status CheckAliasLocked(const std::string& alias) const;
  Result<Key*> CreateLocked(std::string alias, std::string description, bool managed,
                            std::string id, std::string material, bool external);
  KeyInfo InfoOf(const Key& key) const;
  std::string Arn(const std::string& id) const;

  // Data keys opened recently (wrapped blob | context -> data key), so that a
  // small GET does not unwrap its key again; consulted only after the master
  // key was found enabled, so disabling takes effect at once. Bounded: emptied
  // (and wiped) when full. Those of external keys are kept at most
  // kExternalCacheSeconds, so that a key revoked at the server stops working
  // here within that time.
  static constexpr size_t kCachedDataKeys = 4096;
  static constexpr int64_t kExternalCacheSeconds = 30;
  struct Opened {
    std::string key;
    int64_t expires_ns = 0;  // 0: never
  };
  std::optional<std::string> CachedDataKey(const std::string& cache_key) const;
  void CacheDataKey(std::string cache_key, const std::string& key, bool external) const;
  void ForgetDataKeys() const;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, Opened> opened_;  // guarded by cache_mu_
  ExternalKeys* external_;

  meta::KvStore* kv_;
  std::string operator_key_;
  std::string arn_prefix_;  // arn:aws:kms:<region>:<account>:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<Key>> keys_;  // by id
  std::map<std::string, std::string> aliases_;         // alias -> id
};

}  // namespace strata::kms
