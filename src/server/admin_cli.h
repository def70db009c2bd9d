// `strata admin drives|heal`: clients of a running server's admin API
// (/_strata/admin/..., SigV4-signed with the root credentials).
#pragma once

#include <string>
#include <vector>

namespace strata::server {

int AdminDrivesCommand(const std::vector<std::string>& args);
int AdminHealCommand(const std::vector<std::string>& args);

}  // namespace strata::server
