// Minimal logging to stderr with a UTC timestamp. Printf-style on purpose:
// cheap to compile, no iostreams in headers.
#pragma once

namespace strata {
void LogLine(const char* file, int line, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
}  // namespace strata

#define STRATA_LOG(...) ::strata::LogLine(__FILE__, __LINE__, __VA_ARGS__)
