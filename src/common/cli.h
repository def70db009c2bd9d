// The typed outcome of every strata command line parser (strata server and
// admin, s3bench) and the number syntax their flags share. The CLI11 side of
// parsing is in common/cli11.h.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace strata::cli {

// Why a command line did not yield a command to run.
struct UsageError {
  enum class Kind {
    kHelp,   // --help: print `help` to stdout, exit 0
    kUsage,  // a bad command line: print `message` and `help` to stderr, exit 2
  };
  Kind kind = Kind::kUsage;
  std::string message;  // kUsage: what was wrong, e.g. "--workers: needs a whole number ..."
  std::string help;     // the help text of the command the line was for

  int exit_code() const { return kind == Kind::kHelp ? 0 : 2; }
};

inline UsageError Usage(std::string message, std::string help = "") {
  return UsageError{UsageError::Kind::kUsage, std::move(message), std::move(help)};
}

// Prints `e` as described at Kind (prefixing the message with `program`) and
// returns the exit status.
inline int Report(const UsageError& e, std::string_view program) {
  if (e.kind == UsageError::Kind::kHelp) {
    std::fputs(e.help.c_str(), stdout);
    return e.exit_code();
  }
  std::fprintf(stderr, "%.*s: %s\n%s", static_cast<int>(program.size()), program.data(),
               e.message.c_str(), e.help.c_str());
  return e.exit_code();
}

// A whole decimal number: digits only (no sign, no 0x, no exponent, no
// blanks), at most 18 of them.
inline std::optional<int64_t> ParseWholeNumber(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.front() == '-' ||
      text.front() == '+') {
    return std::nullopt;
  }
  return v;
}

}  // namespace strata::cli
