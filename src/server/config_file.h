// `strata server --config FILE`: the server's settings in TOML (toml++),
// read before the command-line flags, which override them. Keys:
//
//   listen = "127.0.0.1:9000"     data = "./data"      region = "us-east-1"
//   domain = "s3.local"           workers = 64         kv_listen = "off" | "HOST:PORT"
//   drives = ["/d1", "/d2"]       ec = "2+2"
//   lifecycle_day_seconds = 86400 lifecycle_interval_seconds = 0
//   lifecycle_max_actions_per_second = 1000
//   [[pool]]  name = "hot"  media = "hot"  path = "pools/hot"       (one directory)
//   [[pool]]  name = "warm" media = "warm" drives = [...]  ec = "4+2" (erasure-coded)
//   [storage_classes]  GLACIER = "warm"   (overrides of the default mapping)
//   [kmip]  endpoint = "kms.example:5696"  ca = "ca.pem"  cert = "strata.pem"  key = "strata.key"
//
// Unknown keys, wrong types and bad values are errors naming the key and the
// line: a server never starts on a file it half understood.
#pragma once

#include <optional>
#include <string>

#include "server/config.h"

namespace strata::server {

// Reads `path` into `c` (only what the file sets). The error message, if any.
std::optional<std::string> LoadConfigFile(const std::string& path, Config* c);

}  // namespace strata::server
