// Who may sign requests: the store's root user, users with access keys,
// groups, and managed (identity) policies attached to users and groups. Kept
// in metadata under the 'A' prefix (meta/keys.h; JSON records, layout in
// docs/formats/metadata-keys.md), secret keys sealed with the IAM master key
// (secret_box.h). The request path reads an immutable snapshot (Secret,
// Resolve: a lock held for a pointer copy); every change writes metadata
// first (synced) and then publishes a new snapshot, so a change is in force
// for the next request and survives a crash once acknowledged.
//
// Names follow IAM's rules: users 1-64 and groups / policies 1-128 characters
// of letters, digits and + = , . @ _ -. A user has at most two access keys
// (rotation: create the second, move clients, disable and delete the first).
// Errors: InvalidArgument (a bad name, a malformed policy: the message says
// what), AlreadyExists, NotFound, PreconditionFailed (a conflict: a policy
// still attached, a third key), IOError (metadata).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "common/status.h"
#include "meta/kv_store.h"

namespace strata::auth {

// Identity policies are at most this long (IAM's managed-policy limit).
inline constexpr size_t kMaxIdentityPolicyBytes = 6144;
inline constexpr size_t kMaxKeysPerUser = 2;

struct AccessKeyInfo {
  std::string id;
  std::string user;
  bool active = true;
  int64_t created_ns = 0;
};

struct UserInfo {
  std::string name;
  std::string user_id;       // "AIDA" + 17 characters, never reused
  std::string canonical_id;  // 64 hex digits
  std::string arn;           // arn:aws:iam::<account>:user/<name>
  bool active = true;
  int64_t created_ns = 0;
  std::vector<std::string> groups;
  std::vector<std::string> policies;  // attached managed policies
  std::vector<AccessKeyInfo> keys;
};

struct GroupInfo {
  std::string name;
  std::string arn;  // arn:aws:iam::<account>:group/<name>
  int64_t created_ns = 0;
  std::vector<std::string> members;
  std::vector<std::string> policies;
};

struct PolicyInfo {
  std::string name;
  std::string arn;  // arn:aws:iam::<account>:policy/<name>
  std::string document;
  int64_t created_ns = 0;
  std::vector<std::string> users, groups;  // attached to
};

struct NewAccessKey {
  std::string id;
  std::string secret;  // shown once, to the caller that created it
};

// The identity a request was signed by, with every identity policy that
// applies to it (the user's and its groups'); root and anonymous have none.
struct Caller {
  Principal principal;
  std::vector<std::shared_ptr<const Policy>> policies;
};

struct RootKey {
  std::string access_key;
  std::string secret_key;
};

// The stored records (defined in identities.cc).
struct UserRecord;
struct KeyRecord;
struct GroupRecord;
struct PolicyRecord;

class IdentityStore {
 public:
  // Loads every 'A' record; on a new store, makes the account id and the
  // root's canonical id. `master_key`: kSecretBoxKeyBytes.
  static Result<std::unique_ptr<IdentityStore>> Open(meta::KvStore* kv, std::string master_key,
                                                     RootKey root);

  // The request path. Secret: of an active key of an active user, or root's.
  std::optional<std::string> Secret(std::string_view access_key) const;
  // nullptr: no such key, or it or its user is disabled.
  std::shared_ptr<const Caller> Resolve(std::string_view access_key) const;
  std::shared_ptr<const Caller> Anonymous() const { return anonymous_; }
  const Principal& root() const { return root_->principal; }
  const std::string& account() const { return account_; }
  // For Owner / Grantee elements: the display name of a canonical id
  // ("root" or the user name); nullopt if nobody has it.
  std::optional<std::string> DisplayName(std::string_view canonical_id) const;

  // Administration (the admin API lets only root call these).
  Result<UserInfo> CreateUser(const std::string& name);
  Status DeleteUser(const std::string& name);  // with its keys and memberships
  Status SetUserActive(const std::string& name, bool active);
  Result<UserInfo> GetUser(const std::string& name) const;
  std::vector<UserInfo> ListUsers() const;

  Result<NewAccessKey> CreateKey(const std::string& user);
  Status SetKeyActive(const std::string& key_id, bool active);
  Status DeleteKey(const std::string& key_id);

  Result<GroupInfo> CreateGroup(const std::string& name);
  Status DeleteGroup(const std::string& name);  // members leave it
  Status AddUserToGroup(const std::string& group, const std::string& user);
  Status RemoveUserFromGroup(const std::string& group, const std::string& user);
  std::vector<GroupInfo> ListGroups() const;

  // The document is compiled (Policy::Parse, kIdentity) and refused with
  // InvalidArgument if it does not compile. Put replaces an existing one.
  Result<PolicyInfo> PutPolicy(const std::string& name, const std::string& document);
  Status DeletePolicy(const std::string& name);  // PreconditionFailed while attached
  Result<PolicyInfo> GetPolicy(const std::string& name) const;
  std::vector<PolicyInfo> ListPolicies() const;
  // target_kind: "user" or "group".
  Status AttachPolicy(const std::string& policy, const std::string& target_kind,
                      const std::string& target);
  Status DetachPolicy(const std::string& policy, const std::string& target_kind,
                      const std::string& target);

  ~IdentityStore();

 private:
  struct State;  // the records by name (identities.cc)
  struct Snapshot;
  IdentityStore(meta::KvStore* kv, std::string master_key, RootKey root);
  Status Load();
  // Writes `batch` (synced), applies the change to the in-memory state and
  // publishes a snapshot. Called with write_mu_ held.
  Status Commit(const meta::WriteBatch& batch);
  // Runs `change` with write_mu_ held and publishes a snapshot if it succeeds.
  Status Mutate(const std::function<Status()>& change);
  // One record changed through Mutate (a copy, written before it replaces
  // the original); NotFound if there is none.
  Status ChangeUser(const std::string& name, const std::function<Status(UserRecord&)>& change);
  Status ChangeKey(const std::string& id, const std::function<Status(KeyRecord&)>& change);
  Status ChangeGroup(const std::string& name, const std::function<Status(GroupRecord&)>& change);
  void Publish();
  std::shared_ptr<const Snapshot> snapshot() const;

  meta::KvStore* kv_;
  std::string master_key_;
  RootKey root_key_;
  std::string account_;
  std::shared_ptr<const Caller> root_;
  std::shared_ptr<const Caller> anonymous_;

  mutable std::mutex write_mu_;  // serialises changes; guards state_
  std::unique_ptr<State> state_;
  mutable std::mutex snap_mu_;  // guards the pointer only
  std::shared_ptr<const Snapshot> snap_;
};

bool IsValidIamName(std::string_view name, size_t max_chars);

}  // namespace strata::auth
