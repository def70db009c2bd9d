#include "common/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/encoding.h"

namespace strata {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kJson};

std::string Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t;
  gmtime_r(&ts.tv_sec, &t);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000);
  return buf;
}

// One write per line, so that lines from several threads never interleave.
void Emit(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

void SetLogFormat(LogFormat f) { g_format.store(f); }
LogFormat CurrentLogFormat() { return g_format.load(); }

std::string JsonString(std::string_view s) {
  const bool utf8 = IsValidUtf8(s);
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f || (!utf8 && c >= 0x80)) {
          char esc[8];
          std::snprintf(esc, sizeof(esc), "\\u%04x", c);
          out += esc;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

void LogLine(const char* file, int line, const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const char* base = std::strrchr(file, '/');
  const std::string source = std::string(base ? base + 1 : file) + ":" + std::to_string(line);
  if (g_format.load() == LogFormat::kText) {
    Emit(Now() + " " + source + " " + msg + "\n");
    return;
  }
  Emit("{\"time\":\"" + Now() + "\",\"level\":\"info\",\"source\":" + JsonString(source) +
       ",\"msg\":" + JsonString(msg) + "}\n");
}

void LogJson(std::string_view fields) {
  Emit("{\"time\":\"" + Now() + "\"," + std::string(fields) + "}\n");
}

}  // namespace strata
