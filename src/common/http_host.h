// The Host header of S3 requests: virtual-host style bucket addressing.
#pragma once

#include <string>
#include <string_view>

namespace strata {

// "bucket.domain[:port]" -> "bucket" (lowercased) when `domain` is set and the
// host is a name below it; "" otherwise (path style, or the domain itself).
std::string VirtualHostBucket(std::string_view host, std::string_view domain);

}  // namespace strata
