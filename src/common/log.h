// Logging to stderr, one JSON object per line (JSON Lines), so that log
// collectors read fields instead of parsing prose:
//
//   {"time":"2026-12-02T08:00:00.123Z","level":"info","source":"scanner.cc:284","msg":"..."}
//
// SetLogFormat(kText) gives the plain "TIME source msg" lines instead
// (`strata server --log-format text`). LogJson writes a line whose fields the
// caller built (the access log, s3/service.cc). Printf-style on purpose:
// cheap to compile, no iostreams in headers.
#pragma once

#include <string>
#include <string_view>

namespace strata {

enum class LogFormat { kJson, kText };
void SetLogFormat(LogFormat f);
LogFormat CurrentLogFormat();

void LogLine(const char* file, int line, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
// Writes `{"time":...,<fields>}` as one line; `fields` is JSON object members
// without braces ("\"a\":1,\"b\":\"x\""), made with JsonString.
void LogJson(std::string_view fields);
// A JSON string literal (quoted, escaped; bytes that are not UTF-8 become
// \u00XX escapes of their values, so the line always parses).
std::string JsonString(std::string_view s);

}  // namespace strata

#define STRATA_LOG(...) ::strata::LogLine(__FILE__, __LINE__, __VA_ARGS__)
