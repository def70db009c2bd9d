// Command-line parsing over CLI11 (header-only; users link CLI11::CLI11):
// Parse() turns CLI11's outcome into a cli::UsageError, WholeNumber() is the
// validator of integer flags.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cli.h"

namespace strata::cli {

// Parses `args` (the words after the program name, in order) into `app`.
inline std::optional<UsageError> Parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them last-first
  try {
    app.parse(args);
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    return UsageError{UsageError::Kind::kHelp, "", app.help()};
  } catch (const CLI::CallForAllHelp&) {
    return UsageError{UsageError::Kind::kHelp, "", app.help("", CLI::AppFormatMode::All)};
  } catch (const CLI::ParseError& e) {
    return Usage(e.what(), app.help());
  }
}

// Accepts a whole decimal number in [lo, hi] and hands it on without leading
// zeros (CLI11 converts "010" as octal otherwise).
inline CLI::Validator WholeNumber(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::optional<int64_t> v = ParseWholeNumber(text);
        if (!v || *v < lo || *v > hi) {
          return "needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                 ", got '" + text + "'";
        }
        text = std::to_string(*v);
        return "";
      },
      "");  // no text in --help: the flag's own type name says it
}

// Accepts a decimal number greater than 0 ("0.3", "5").
inline CLI::Validator PositiveReal() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(v > 0) || v > 1e12) {
          return "needs a number greater than 0, got '" + text + "'";
        }
        return "";
      },
      "");
}

}  // namespace strata::cli
