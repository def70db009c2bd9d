// `strata admin drives|heal`: clients of a running server's admin API
// (/_strata/admin/..., SigV4-signed with the root credentials; docs/admin-api.md).
#pragma once

#include <string>

#include "server/config.h"

namespace strata::server {

// Prints the drive table; 0 when every drive is online, 1 otherwise or on failure.
int RunAdminDrives(const AdminOptions& admin);
// Heals `bucket` (every bucket when empty) under `prefix`, with progress on
// stderr and a summary on stdout; 0 when nothing was unrecoverable or failed.
int RunAdminHeal(const AdminOptions& admin, const std::string& bucket, const std::string& prefix);
// One identity action (user/key/group/policy): prints the result (JSON,
// or the new key pair); 0 on success, 1 when the server refused, 2 on a
// local problem (credentials, the policy file).
int RunAdminIam(const AdminIamCommand& cmd);

}  // namespace strata::server
