#include "energy/rapl.h"

#include <algorithm>
#include <charconv>

namespace strata::energy {

namespace {

Result<uint64_t> ReadCounter(io::FileSystem* fs, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadSmallFile(fs, path));
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Corruption(path + ": not a counter: '" + text + "'");
  }
  return v;
}

// "intel-rapl:0" (a package), not "intel-rapl:0:1" (a subzone of it).
bool IsPackageZone(const std::string& name) {
  const std::string_view kHead = "intel-rapl:";
  if (!name.starts_with(kHead) || name.size() == kHead.size()) return false;
  return std::all_of(name.begin() + kHead.size(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<std::string> ReadSmallFile(io::FileSystem* fs, const std::string& path) {
  ASSIGN_OR_RETURN(auto f, fs->NewReadableFile(path));
  char buf[256];
  ASSIGN_OR_RETURN(size_t n, f->ReadAt(0, buf, sizeof buf));
  std::string text(buf, n);
  if (size_t nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  return text;
}

std::unique_ptr<RaplReader> RaplReader::Open(io::FileSystem* fs, std::string root) {
  auto names = fs->ListDir(root);
  if (!names.ok()) return nullptr;
  std::vector<std::string> zones = *names;
  std::sort(zones.begin(), zones.end());
  std::unique_ptr<RaplReader> r(new RaplReader(fs));
  for (const std::string& z : zones) {
    if (!IsPackageZone(z)) continue;
    Domain d;
    d.dir = root + "/" + z;
    auto now = ReadCounter(fs, d.dir + "/energy_uj");
    auto range = ReadCounter(fs, d.dir + "/max_energy_range_uj");
    if (!now.ok() || !range.ok() || *range == 0) continue;  // unreadable: not measured
    auto name = ReadSmallFile(fs, d.dir + "/name");
    d.name = name.ok() ? *name : "";
    d.last_uj = *now;
    d.range_uj = *range;
    r->domains_.push_back(std::move(d));
  }
  if (r->domains_.empty()) return nullptr;
  return r;
}

Result<double> RaplReader::Joules() {
  std::lock_guard lock(mu_);
  uint64_t total = 0;
  for (Domain& d : domains_) {
    ASSIGN_OR_RETURN(uint64_t now, ReadCounter(fs_, d.dir + "/energy_uj"));
    // A counter below its last value wrapped (once: see the header).
    const uint64_t delta = now >= d.last_uj ? now - d.last_uj : d.range_uj - d.last_uj + now;
    d.total_uj += delta;
    d.last_uj = now;
    total += d.total_uj;
  }
  return static_cast<double>(total) / 1e6;
}

std::vector<std::string> RaplReader::Domains() const {
  std::vector<std::string> out;
  for (const Domain& d : domains_) {
    out.push_back(d.dir.substr(d.dir.rfind('/') + 1) + (d.name.empty() ? "" : " (" + d.name + ")"));
  }
  return out;
}

}  // namespace strata::energy
