#include "auth/identities.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "crypto/secret_box.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/time_util.h"
#include "meta/keys.h"

namespace strata::auth {

namespace {

using nlohmann::json;

constexpr char kUserKind = 'u', kKeyKind = 'k', kGroupKind = 'g', kPolicyKind = 'p',
               kStoreKind = 's';
constexpr int kRecordVersion = 1;

// IAM's id alphabet (uppercase letters and digits 2-7, as in base32).
std::string RandomId(std::string_view prefix, size_t chars) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string bytes = RandomBytes(chars);
  std::string out(prefix);
  for (char b : bytes) out.push_back(kAlphabet[static_cast<unsigned char>(b) % 32]);
  return out;
}

std::string RandomSecret() {
  std::string s = Base64Encode(RandomBytes(30));  // 40 characters
  for (char& c : s) {
    if (c == '/') c = 'x';  // keeps it shell- and URL-friendly
  }
  return s;
}

std::string RandomAccount() {
  std::string bytes = RandomBytes(12);
  std::string out;
  for (char b : bytes) out.push_back(static_cast<char>('0' + static_cast<unsigned char>(b) % 10));
  if (out[0] == '0') out[0] = '1';
  return out;
}

void AddUnique(std::vector<std::string>* v, const std::string& s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}
bool RemoveValue(std::vector<std::string>* v, const std::string& s) {
  auto it = std::find(v->begin(), v->end(), s);
  if (it == v->end()) return false;
  v->erase(it);
  return true;
}

// A record that does not decode is corruption of the metadata: the store
// does not open rather than serve with identities missing.
Status Corrupt(std::string_view what) {
  return Status(Code::kCorruption, "identity record " + std::string(what) + " is malformed");
}

}  // namespace

bool IsValidIamName(std::string_view name, size_t max_chars) {
  if (name.empty() || name.size() > max_chars) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '=' || c == ',' || c == '.' || c == '@' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

struct UserRecord {
  std::string name, user_id, canonical_id;
  bool active = true;
  int64_t created_ns = 0;
  std::vector<std::string> groups, policies;
};
struct KeyRecord {
  std::string id, user, sealed, secret;
  bool active = true;
  int64_t created_ns = 0;
};
struct GroupRecord {
  std::string name;
  int64_t created_ns = 0;
  std::vector<std::string> policies;
};
struct PolicyRecord {
  std::string name, document;
  int64_t created_ns = 0;
  std::shared_ptr<const Policy> compiled;
};

struct IdentityStore::State {
  std::map<std::string, UserRecord> users;
  std::map<std::string, KeyRecord> keys;
  std::map<std::string, GroupRecord> groups;
  std::map<std::string, PolicyRecord> policies;
};

struct IdentityStore::Snapshot {
  struct Entry {
    std::string secret;
    std::shared_ptr<const Caller> caller;
  };
  std::unordered_map<std::string, Entry> keys;  // active keys of active users, and root's
  std::unordered_map<std::string, std::string> display_names;  // canonical id -> name
};

namespace {

std::string EncodeUser(const UserRecord& u) {
  return json{{"v", kRecordVersion}, {"name", u.name},        {"id", u.user_id},
              {"canonical_id", u.canonical_id},               {"active", u.active},
              {"created_ns", u.created_ns},                   {"groups", u.groups},
              {"policies", u.policies}}
      .dump();
}
std::string EncodeKey(const KeyRecord& k) {
  return json{{"v", kRecordVersion},       {"user", k.user},
              {"secret", Base64Encode(k.sealed)}, {"active", k.active},
              {"created_ns", k.created_ns}}
      .dump();
}
std::string EncodeGroup(const GroupRecord& g) {
  return json{{"v", kRecordVersion}, {"name", g.name}, {"created_ns", g.created_ns},
              {"policies", g.policies}}
      .dump();
}
std::string EncodePolicy(const PolicyRecord& p) {
  return json{{"v", kRecordVersion}, {"name", p.name}, {"document", p.document},
              {"created_ns", p.created_ns}}
      .dump();
}

}  // namespace

IdentityStore::IdentityStore(meta::KvStore* kv, std::string master_key, RootKey root)
    : kv_(kv), master_key_(std::move(master_key)), root_key_(std::move(root)),
      state_(std::make_unique<State>()) {
  auto anon = std::make_shared<Caller>();
  anon->principal.kind = Principal::Kind::kAnonymous;
  anonymous_ = anon;
}

IdentityStore::~IdentityStore() = default;

Result<std::unique_ptr<IdentityStore>> IdentityStore::Open(meta::KvStore* kv,
                                                           std::string master_key, RootKey root) {
  if (master_key.size() != crypto::kSecretBoxKeyBytes) {
    return Status(Code::kInvalidArgument, "the IAM key must be 32 bytes");
  }
  std::unique_ptr<IdentityStore> store(
      new IdentityStore(kv, std::move(master_key), std::move(root)));
  if (Status s = store->Load(); !s.ok()) return s;
  return store;
}

Status IdentityStore::Load() {
  // The store's own identity: made once, kept for ever (owners and ARNs name it).
  std::string root_canonical;
  auto own = kv_->Get(meta::IamKey(kStoreKind, "account"));
  if (!own.ok()) return own.status();
  if (*own) {
    json j = json::parse(**own, nullptr, false);
    if (!j.is_object() || !j.contains("account") || !j.contains("root_canonical_id")) {
      return Corrupt("account");
    }
    account_ = j["account"].get<std::string>();
    root_canonical = j["root_canonical_id"].get<std::string>();
  } else {
    account_ = RandomAccount();
    root_canonical = HexEncode(RandomBytes(32));
    meta::WriteBatch b;
    b.Put(meta::IamKey(kStoreKind, "account"),
          json{{"v", kRecordVersion}, {"account", account_}, {"root_canonical_id", root_canonical}}
              .dump());
    if (Status s = kv_->Write(b, true); !s.ok()) return s;
  }
  auto root = std::make_shared<Caller>();
  root->principal.kind = Principal::Kind::kRoot;
  root->principal.account = account_;
  root->principal.arn = "arn:aws:iam::" + account_ + ":root";
  root->principal.canonical_id = root_canonical;
  root->principal.user_id = account_;
  root_ = root;

  auto it = kv_->NewIterator();
  const std::string prefix = meta::PrefixKey(meta::kIamPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string_view key = it->key();
    if (key.size() < 2) continue;
    char kind = key[1];
    std::string name(key.substr(2));
    json j = json::parse(it->value(), nullptr, false);
    if (kind == kStoreKind) continue;
    if (!j.is_object()) return Corrupt(name);
    try {
      if (kind == kUserKind) {
        UserRecord u;
        u.name = name;
        u.user_id = j.at("id").get<std::string>();
        u.canonical_id = j.at("canonical_id").get<std::string>();
        u.active = j.at("active").get<bool>();
        u.created_ns = j.at("created_ns").get<int64_t>();
        u.groups = j.at("groups").get<std::vector<std::string>>();
        u.policies = j.at("policies").get<std::vector<std::string>>();
        state_->users[name] = std::move(u);
      } else if (kind == kKeyKind) {
        KeyRecord k;
        k.id = name;
        k.user = j.at("user").get<std::string>();
        auto sealed = Base64Decode(j.at("secret").get<std::string>());
        if (!sealed) return Corrupt(name);
        k.sealed = *sealed;
        auto secret = crypto::Open(master_key_, k.sealed, k.id);
        if (!secret) {
          return Status(Code::kPermissionDenied,
                        "the secret of access key " + k.id +
                            " does not open with this IAM key (a different --iam-key-file?)");
        }
        k.secret = *secret;
        k.active = j.at("active").get<bool>();
        k.created_ns = j.at("created_ns").get<int64_t>();
        state_->keys[name] = std::move(k);
      } else if (kind == kGroupKind) {
        GroupRecord g;
        g.name = name;
        g.created_ns = j.at("created_ns").get<int64_t>();
        g.policies = j.at("policies").get<std::vector<std::string>>();
        state_->groups[name] = std::move(g);
      } else if (kind == kPolicyKind) {
        PolicyRecord p;
        p.name = name;
        p.document = j.at("document").get<std::string>();
        p.created_ns = j.at("created_ns").get<int64_t>();
        auto parsed = Policy::Parse(p.document, Policy::Kind::kIdentity);
        if (std::holds_alternative<PolicyError>(parsed)) return Corrupt("policy " + name);
        p.compiled = std::make_shared<const Policy>(std::move(std::get<Policy>(parsed)));
        state_->policies[name] = std::move(p);
      }
    } catch (const json::exception&) {
      return Corrupt(name);
    }
  }
  if (Status s = it->status(); !s.ok()) return s;
  Publish();
  return Status::OK();
}

void IdentityStore::Publish() {
  auto snap = std::make_shared<Snapshot>();
  snap->keys[root_key_.access_key] = {root_key_.secret_key, root_};
  snap->display_names[root_->principal.canonical_id] = "root";
  std::map<std::string, std::shared_ptr<const Caller>> callers;
  for (const auto& [name, u] : state_->users) {
    snap->display_names[u.canonical_id] = name;
    if (!u.active) continue;
    auto c = std::make_shared<Caller>();
    c->principal.kind = Principal::Kind::kUser;
    c->principal.account = account_;
    c->principal.arn = "arn:aws:iam::" + account_ + ":user/" + name;
    c->principal.canonical_id = u.canonical_id;
    c->principal.username = name;
    c->principal.user_id = u.user_id;
    auto attach = [&](const std::string& policy) {
      auto it = state_->policies.find(policy);
      if (it == state_->policies.end()) return;
      if (std::find(c->policies.begin(), c->policies.end(), it->second.compiled) ==
          c->policies.end()) {
        c->policies.push_back(it->second.compiled);
      }
    };
    for (const std::string& p : u.policies) attach(p);
    for (const std::string& g : u.groups) {
      auto git = state_->groups.find(g);
      if (git == state_->groups.end()) continue;
      for (const std::string& p : git->second.policies) attach(p);
    }
    callers[name] = c;
  }
  for (const auto& [id, k] : state_->keys) {
    if (!k.active) continue;
    auto c = callers.find(k.user);
    if (c == callers.end()) continue;  // the user is disabled
    snap->keys[id] = {k.secret, c->second};
  }
  std::lock_guard<std::mutex> lock(snap_mu_);
  snap_ = std::move(snap);
}

std::shared_ptr<const IdentityStore::Snapshot> IdentityStore::snapshot() const {
  std::lock_guard<std::mutex> lock(snap_mu_);
  return snap_;
}

namespace {

Status BadName(std::string_view what, std::string_view name, size_t max) {
  return Status(Code::kInvalidArgument,
                std::string(what) + " name \"" + std::string(name) + "\" is not valid: 1 to " +
                    std::to_string(max) + " letters, digits or + = , . @ _ -");
}
Status NoSuch(std::string_view what, std::string_view name) {
  return Status(Code::kNotFound, "no such " + std::string(what) + ": " + std::string(name));
}

}  // namespace

Status IdentityStore::Commit(const meta::WriteBatch& batch) { return kv_->Write(batch, true); }

namespace {

// Read-copy-change-write of one record: the change is made on a copy, the
// copy written (synced), and only then does it replace the record in memory,
// so a failed write changes nothing. Called with write_mu_ held.
template <typename Rec, typename Change, typename Encode>
Status ChangeRecord(meta::KvStore* kv, std::map<std::string, Rec>& records, char kind,
                    std::string_view what, const std::string& name, const Change& change,
                    const Encode& encode) {
  auto it = records.find(name);
  if (it == records.end()) return NoSuch(what, name);
  Rec copy = it->second;
  RETURN_IF_ERROR(change(copy));
  meta::WriteBatch b;
  b.Put(meta::IamKey(kind, name), encode(copy));
  RETURN_IF_ERROR(kv->Write(b, /*sync=*/true));
  it->second = std::move(copy);
  return Status::OK();
}

}  // namespace

Status IdentityStore::Mutate(const std::function<Status()>& change) {
  std::lock_guard<std::mutex> lock(write_mu_);
  RETURN_IF_ERROR(change());
  Publish();
  return Status::OK();
}

Status IdentityStore::ChangeUser(const std::string& name,
                                 const std::function<Status(UserRecord&)>& change) {
  return Mutate([&] { return ChangeRecord(kv_, state_->users, kUserKind, "user", name, change, EncodeUser); });
}

Status IdentityStore::ChangeKey(const std::string& id,
                                const std::function<Status(KeyRecord&)>& change) {
  return Mutate([&] { return ChangeRecord(kv_, state_->keys, kKeyKind, "access key", id, change, EncodeKey); });
}

Status IdentityStore::ChangeGroup(const std::string& name,
                                  const std::function<Status(GroupRecord&)>& change) {
  return Mutate([&] { return ChangeRecord(kv_, state_->groups, kGroupKind, "group", name, change, EncodeGroup); });
}

std::optional<std::string> IdentityStore::Secret(std::string_view access_key) const {
  auto snap = snapshot();
  auto it = snap->keys.find(std::string(access_key));
  if (it == snap->keys.end()) return std::nullopt;
  return it->second.secret;
}

std::shared_ptr<const Caller> IdentityStore::Resolve(std::string_view access_key) const {
  auto snap = snapshot();
  auto it = snap->keys.find(std::string(access_key));
  if (it == snap->keys.end()) return nullptr;
  return it->second.caller;
}

std::optional<std::string> IdentityStore::DisplayName(std::string_view canonical_id) const {
  auto snap = snapshot();
  auto it = snap->display_names.find(std::string(canonical_id));
  if (it == snap->display_names.end()) return std::nullopt;
  return it->second;
}

// --- administration --------------------------------------------------------


Result<UserInfo> IdentityStore::CreateUser(const std::string& name) {
  if (!IsValidIamName(name, 64)) return BadName("user", name, 64);
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (state_->users.count(name)) {
      return Status(Code::kAlreadyExists, "user " + name + " already exists");
    }
    UserRecord u;
    u.name = name;
    u.user_id = RandomId("AIDA", 17);
    u.canonical_id = HexEncode(RandomBytes(32));
    u.created_ns = static_cast<int64_t>(UnixNowNs());
    meta::WriteBatch b;
    b.Put(meta::IamKey(kUserKind, name), EncodeUser(u));
    if (Status s = Commit(b); !s.ok()) return s;
    state_->users[name] = std::move(u);
    Publish();
  }
  return GetUser(name);
}

Status IdentityStore::DeleteUser(const std::string& name) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!state_->users.count(name)) return NoSuch("user", name);
  meta::WriteBatch b;
  b.Delete(meta::IamKey(kUserKind, name));
  std::vector<std::string> keys;
  for (const auto& [id, k] : state_->keys) {
    if (k.user == name) keys.push_back(id);
  }
  for (const std::string& id : keys) b.Delete(meta::IamKey(kKeyKind, id));
  if (Status s = Commit(b); !s.ok()) return s;
  state_->users.erase(name);
  for (const std::string& id : keys) state_->keys.erase(id);
  Publish();
  return Status::OK();
}

Status IdentityStore::SetUserActive(const std::string& name, bool active) {
  return ChangeUser(name, [&](UserRecord& u) {
    u.active = active;
    return Status::OK();
  });
}

Result<UserInfo> IdentityStore::GetUser(const std::string& name) const {
  std::lock_guard<std::mutex> lock(write_mu_);
  auto it = state_->users.find(name);
  if (it == state_->users.end()) return NoSuch("user", name);
  const UserRecord& u = it->second;
  UserInfo info;
  info.name = u.name;
  info.user_id = u.user_id;
  info.canonical_id = u.canonical_id;
  info.arn = "arn:aws:iam::" + account_ + ":user/" + u.name;
  info.active = u.active;
  info.created_ns = u.created_ns;
  info.groups = u.groups;
  info.policies = u.policies;
  for (const auto& [id, k] : state_->keys) {
    if (k.user == name) info.keys.push_back({id, k.user, k.active, k.created_ns});
  }
  return info;
}

std::vector<UserInfo> IdentityStore::ListUsers() const {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    for (const auto& [name, u] : state_->users) names.push_back(name);
  }
  std::vector<UserInfo> out;
  for (const std::string& n : names) {
    auto u = GetUser(n);
    if (u.ok()) out.push_back(std::move(u).value());
  }
  return out;
}

Result<NewAccessKey> IdentityStore::CreateKey(const std::string& user) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!state_->users.count(user)) return NoSuch("user", user);
  size_t have = 0;
  for (const auto& [id, k] : state_->keys) have += k.user == user;
  if (have >= kMaxKeysPerUser) {
    return Status(Code::kPreconditionFailed,
                  "user " + user + " already has " + std::to_string(kMaxKeysPerUser) +
                      " access keys: delete one first");
  }
  KeyRecord k;
  do {
    k.id = RandomId("AKIA", 16);
  } while (state_->keys.count(k.id) || k.id == root_key_.access_key);
  k.user = user;
  k.secret = RandomSecret();
  k.sealed = crypto::Seal(master_key_, k.secret, k.id);
  k.created_ns = static_cast<int64_t>(UnixNowNs());
  meta::WriteBatch b;
  b.Put(meta::IamKey(kKeyKind, k.id), EncodeKey(k));
  if (Status s = Commit(b); !s.ok()) return s;
  NewAccessKey out{k.id, k.secret};
  state_->keys[k.id] = std::move(k);
  Publish();
  return out;
}

Status IdentityStore::SetKeyActive(const std::string& key_id, bool active) {
  return ChangeKey(key_id, [&](KeyRecord& k) {
    k.active = active;
    return Status::OK();
  });
}

Status IdentityStore::DeleteKey(const std::string& key_id) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!state_->keys.count(key_id)) return NoSuch("access key", key_id);
  meta::WriteBatch b;
  b.Delete(meta::IamKey(kKeyKind, key_id));
  if (Status s = Commit(b); !s.ok()) return s;
  state_->keys.erase(key_id);
  Publish();
  return Status::OK();
}

Result<GroupInfo> IdentityStore::CreateGroup(const std::string& name) {
  if (!IsValidIamName(name, 128)) return BadName("group", name, 128);
  std::lock_guard<std::mutex> lock(write_mu_);
  if (state_->groups.count(name)) {
    return Status(Code::kAlreadyExists, "group " + name + " already exists");
  }
  GroupRecord g;
  g.name = name;
  g.created_ns = static_cast<int64_t>(UnixNowNs());
  meta::WriteBatch b;
  b.Put(meta::IamKey(kGroupKind, name), EncodeGroup(g));
  if (Status s = Commit(b); !s.ok()) return s;
  state_->groups[name] = g;
  Publish();
  return GroupInfo{name, "arn:aws:iam::" + account_ + ":group/" + name, g.created_ns, {}, {}};
}

Status IdentityStore::DeleteGroup(const std::string& name) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!state_->groups.count(name)) return NoSuch("group", name);
  meta::WriteBatch b;
  b.Delete(meta::IamKey(kGroupKind, name));
  std::map<std::string, UserRecord> changed;
  for (const auto& [uname, u] : state_->users) {
    UserRecord copy = u;
    if (RemoveValue(&copy.groups, name)) {
      b.Put(meta::IamKey(kUserKind, uname), EncodeUser(copy));
      changed[uname] = std::move(copy);
    }
  }
  if (Status s = Commit(b); !s.ok()) return s;
  state_->groups.erase(name);
  for (auto& [uname, u] : changed) state_->users[uname] = std::move(u);
  Publish();
  return Status::OK();
}

Status IdentityStore::AddUserToGroup(const std::string& group, const std::string& user) {
  return ChangeUser(user, [&](UserRecord& u) {
    if (!state_->groups.count(group)) return NoSuch("group", group);
    AddUnique(&u.groups, group);
    return Status::OK();
  });
}

Status IdentityStore::RemoveUserFromGroup(const std::string& group, const std::string& user) {
  return ChangeUser(user, [&](UserRecord& u) {
    if (!RemoveValue(&u.groups, group)) {
      return Status(Code::kNotFound, "user " + user + " is not in group " + group);
    }
    return Status::OK();
  });
}

std::vector<GroupInfo> IdentityStore::ListGroups() const {
  std::lock_guard<std::mutex> lock(write_mu_);
  std::vector<GroupInfo> out;
  for (const auto& [name, g] : state_->groups) {
    GroupInfo info{name, "arn:aws:iam::" + account_ + ":group/" + name, g.created_ns, {},
                   g.policies};
    for (const auto& [uname, u] : state_->users) {
      if (std::find(u.groups.begin(), u.groups.end(), name) != u.groups.end()) {
        info.members.push_back(uname);
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<PolicyInfo> IdentityStore::PutPolicy(const std::string& name, const std::string& document) {
  if (!IsValidIamName(name, 128)) return BadName("policy", name, 128);
  if (document.size() > kMaxIdentityPolicyBytes) {
    return Status(Code::kInvalidArgument,
                  "policy document is " + std::to_string(document.size()) +
                      " bytes; identity policies are at most " +
                      std::to_string(kMaxIdentityPolicyBytes));
  }
  auto parsed = Policy::Parse(document, Policy::Kind::kIdentity);
  if (auto* e = std::get_if<PolicyError>(&parsed)) {
    return Status(Code::kInvalidArgument, "MalformedPolicyDocument: " + e->message);
  }
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    PolicyRecord p;
    p.name = name;
    p.document = document;
    auto old = state_->policies.find(name);
    p.created_ns = old != state_->policies.end() ? old->second.created_ns
                                                  : static_cast<int64_t>(UnixNowNs());
    p.compiled = std::make_shared<const Policy>(std::move(std::get<Policy>(parsed)));
    meta::WriteBatch b;
    b.Put(meta::IamKey(kPolicyKind, name), EncodePolicy(p));
    if (Status s = Commit(b); !s.ok()) return s;
    state_->policies[name] = std::move(p);
    Publish();
  }
  return GetPolicy(name);
}

Status IdentityStore::DeletePolicy(const std::string& name) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!state_->policies.count(name)) return NoSuch("policy", name);
  for (const auto& [uname, u] : state_->users) {
    if (std::find(u.policies.begin(), u.policies.end(), name) != u.policies.end()) {
      return Status(Code::kPreconditionFailed,
                    "policy " + name + " is attached to user " + uname + ": detach it first");
    }
  }
  for (const auto& [gname, g] : state_->groups) {
    if (std::find(g.policies.begin(), g.policies.end(), name) != g.policies.end()) {
      return Status(Code::kPreconditionFailed,
                    "policy " + name + " is attached to group " + gname + ": detach it first");
    }
  }
  meta::WriteBatch b;
  b.Delete(meta::IamKey(kPolicyKind, name));
  if (Status s = Commit(b); !s.ok()) return s;
  state_->policies.erase(name);
  Publish();
  return Status::OK();
}

Result<PolicyInfo> IdentityStore::GetPolicy(const std::string& name) const {
  std::lock_guard<std::mutex> lock(write_mu_);
  auto it = state_->policies.find(name);
  if (it == state_->policies.end()) return NoSuch("policy", name);
  PolicyInfo info{name, "arn:aws:iam::" + account_ + ":policy/" + name, it->second.document,
                  it->second.created_ns, {}, {}};
  for (const auto& [uname, u] : state_->users) {
    if (std::find(u.policies.begin(), u.policies.end(), name) != u.policies.end()) {
      info.users.push_back(uname);
    }
  }
  for (const auto& [gname, g] : state_->groups) {
    if (std::find(g.policies.begin(), g.policies.end(), name) != g.policies.end()) {
      info.groups.push_back(gname);
    }
  }
  return info;
}

std::vector<PolicyInfo> IdentityStore::ListPolicies() const {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    for (const auto& [name, p] : state_->policies) names.push_back(name);
  }
  std::vector<PolicyInfo> out;
  for (const std::string& n : names) {
    auto p = GetPolicy(n);
    if (p.ok()) out.push_back(std::move(p).value());
  }
  return out;
}

Status IdentityStore::AttachPolicy(const std::string& policy, const std::string& target_kind,
                                   const std::string& target) {
  auto attach = [&](std::vector<std::string>& policies) {
    if (!state_->policies.count(policy)) return NoSuch("policy", policy);
    AddUnique(&policies, policy);
    return Status::OK();
  };
  if (target_kind == "user") {
    return ChangeUser(target, [&](UserRecord& u) { return attach(u.policies); });
  }
  if (target_kind == "group") {
    return ChangeGroup(target, [&](GroupRecord& g) { return attach(g.policies); });
  }
  return Status(Code::kInvalidArgument, "attach to \"user\" or \"group\", not " + target_kind);
}

Status IdentityStore::DetachPolicy(const std::string& policy, const std::string& target_kind,
                                   const std::string& target) {
  auto detach = [&](std::vector<std::string>& policies) {
    if (RemoveValue(&policies, policy)) return Status::OK();
    return Status(Code::kNotFound,
                  "policy " + policy + " is not attached to " + target_kind + " " + target);
  };
  if (target_kind == "user") {
    return ChangeUser(target, [&](UserRecord& u) { return detach(u.policies); });
  }
  if (target_kind == "group") {
    return ChangeGroup(target, [&](GroupRecord& g) { return detach(g.policies); });
  }
  return Status(Code::kInvalidArgument, "detach from \"user\" or \"group\", not " + target_kind);
}

}  // namespace strata::auth
