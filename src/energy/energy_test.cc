// Energy (energy/rapl.h, energy/meter.h): the measured path against a fake
// powercap tree through the io seam (packages summed, subzones left out,
// wraparound undone, unreadable counters not measured), and the model's
// arithmetic per node and per workload.
#include <gtest/gtest.h>

#include <thread>

#include "energy/meter.h"
#include "energy/rapl.h"
#include "io/mem_fs.h"

namespace strata::energy {
namespace {

constexpr char kRoot[] = "/sys/class/powercap";

class EnergyTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_ = io::NewMemFileSystem(); }
  void Put(const std::string& path, const std::string& text) {
    ASSERT_TRUE(fs_->CreateDirs(path.substr(0, path.rfind('/'))).ok());
    auto f = fs_->NewWritableFile(path);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append(text).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  void Zone(const std::string& zone, const std::string& name, uint64_t uj, uint64_t range) {
    Put(std::string(kRoot) + "/" + zone + "/name", name + "\n");
    Put(std::string(kRoot) + "/" + zone + "/energy_uj", std::to_string(uj) + "\n");
    Put(std::string(kRoot) + "/" + zone + "/max_energy_range_uj", std::to_string(range) + "\n");
  }
  void Counter(const std::string& zone, uint64_t uj) {
    Put(std::string(kRoot) + "/" + zone + "/energy_uj", std::to_string(uj) + "\n");
  }
  std::unique_ptr<io::MemFileSystem> fs_;
};

TEST_F(EnergyTest, RaplSumsPackagesAndUndoesWraparound) {
  Zone("intel-rapl:0", "package-0", 5'000'000, 100'000'000);
  Zone("intel-rapl:0:0", "core", 1'000'000, 100'000'000);  // inside package 0
  Zone("intel-rapl:1", "package-1", 7'000'000, 100'000'000);
  auto rapl = RaplReader::Open(fs_.get(), kRoot);
  ASSERT_NE(rapl, nullptr);
  EXPECT_EQ(rapl->Domains(),
            (std::vector<std::string>{"intel-rapl:0 (package-0)", "intel-rapl:1 (package-1)"}));
  auto j = rapl->Joules();
  ASSERT_TRUE(j.ok());
  EXPECT_DOUBLE_EQ(*j, 0.0);  // since Open
  Counter("intel-rapl:0", 8'000'000);     // +3 J
  Counter("intel-rapl:0:0", 90'000'000);  // a subzone: not added again
  Counter("intel-rapl:1", 9'500'000);     // +2.5 J
  j = rapl->Joules();
  ASSERT_TRUE(j.ok());
  EXPECT_DOUBLE_EQ(*j, 5.5);
  Counter("intel-rapl:0", 1'000'000);  // wrapped: 92 J to the range, then 1 J
  j = rapl->Joules();
  ASSERT_TRUE(j.ok());
  EXPECT_DOUBLE_EQ(*j, 5.5 + 93.0);
  // A counter that can no longer be read is an error, not a figure.
  ASSERT_TRUE(fs_->RemoveFile(std::string(kRoot) + "/intel-rapl:1/energy_uj").ok());
  EXPECT_FALSE(rapl->Joules().ok());
}

TEST_F(EnergyTest, NoReadableCounterMeansNotMeasured) {
  EXPECT_EQ(RaplReader::Open(fs_.get(), kRoot), nullptr);  // no tree at all
  Put(std::string(kRoot) + "/intel-rapl:0/name", "package-0\n");  // no energy_uj (root-only)
  EXPECT_EQ(RaplReader::Open(fs_.get(), kRoot), nullptr);
  Zone("intel-rapl:1", "package-1", 10, 0);  // no range: cannot undo wraps
  EXPECT_EQ(RaplReader::Open(fs_.get(), kRoot), nullptr);
  Zone("intel-rapl:2", "package-2", 10, 1000);
  Put(std::string(kRoot) + "/intel-rapl:2/energy_uj", "garbage\n");
  EXPECT_EQ(RaplReader::Open(fs_.get(), kRoot), nullptr);
}

TEST_F(EnergyTest, ModelAndMeasuredShares) {
  double cpu = 100.0;  // the process's CPU seconds so far
  Zone("intel-rapl:0", "package-0", 0, 1'000'000'000'000);
  Meter m(ForMedia("hot"), RaplReader::Open(fs_.get(), kRoot), [&] { return cpu; });
  ASSERT_TRUE(m.measured());
  m.Record({{WorkloadKind::kBucket, "a"}, {WorkloadKind::kIdentity, "alice"}}, 1.0, 1'000'000'000);
  m.Record({{WorkloadKind::kBucket, "b"}, {WorkloadKind::kIdentity, "alice"}}, 3.0, 0);
  m.Record({{WorkloadKind::kKvNamespace, "llama"}}, 0.5, 0);
  cpu = 110.0;  // 10 s of CPU since the meter started (background work included)
  Counter("intel-rapl:0", 300'000'000);  // 300 J
  EnergyReport r = m.Snapshot();
  const double per_byte = 1e-9 + 2e-9;
  EXPECT_DOUBLE_EQ(r.process_cpu_seconds, 10.0);
  EXPECT_EQ(r.bytes, 1'000'000'000u);
  EXPECT_DOUBLE_EQ(r.node_modelled_joules, 10.0 * 15 + 1e9 * per_byte);
  ASSERT_TRUE(r.node_measured_joules);
  EXPECT_DOUBLE_EQ(*r.node_measured_joules, 300.0);
  ASSERT_EQ(r.workloads.size(), 4u);  // bucket a, b; identity alice; namespace llama
  const WorkloadFigure& a = r.workloads[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_DOUBLE_EQ(a.modelled_joules, 15.0 + 1e9 * per_byte);
  ASSERT_TRUE(a.measured_joules);
  EXPECT_DOUBLE_EQ(*a.measured_joules, 300.0 * a.modelled_joules / r.node_modelled_joules);
  const WorkloadFigure& alice = r.workloads[2];
  EXPECT_EQ(alice.kind, WorkloadKind::kIdentity);
  EXPECT_DOUBLE_EQ(alice.cpu_seconds, 4.0);
  EXPECT_EQ(r.workloads[3].kind, WorkloadKind::kKvNamespace);

  // Disks cost more per byte; without RAPL nothing is "measured".
  Meter cold(ForMedia("cold"), nullptr, [] { return 0.0; });
  EXPECT_FALSE(cold.measured());
  cold.Record({{WorkloadKind::kBucket, "x"}}, 0, 1000);
  EnergyReport c = cold.Snapshot();
  EXPECT_FALSE(c.node_measured_joules);
  EXPECT_FALSE(c.workloads[0].measured_joules);
  EXPECT_DOUBLE_EQ(c.workloads[0].modelled_joules, 1000 * (1e-9 + 40e-9));
}

double Burn(double seconds) {  // spins this thread for `seconds` of its CPU time
  const double until = ThreadCpuSeconds() + seconds;
  volatile uint64_t x = 0;
  while (ThreadCpuSeconds() < until) {
    for (int i = 0; i < 10000; ++i) x = x + i;
  }
  return seconds;
}

TEST(ThreadCpuTest, TakeReturnsWhatTheThreadUsedSinceItsLastTake) {
  std::thread([] {
    Burn(0.02);
    const double first = TakeThreadCpuSeconds();  // all this thread used so far
    EXPECT_GE(first, 0.02);
    EXPECT_LT(first, 1.0);
    EXPECT_LE(first, ThreadCpuSeconds());
    Burn(0.03);
    const double second = TakeThreadCpuSeconds();
    EXPECT_GE(second, 0.03);
    EXPECT_LT(second, 0.03 + 0.5);
    EXPECT_LT(TakeThreadCpuSeconds(), 0.01);  // nothing since
  }).join();
  std::thread([] {  // each thread keeps its own mark
    Burn(0.01);
    const double t = TakeThreadCpuSeconds();
    EXPECT_GE(t, 0.01);
    EXPECT_LT(t, 0.5);
  }).join();
}

TEST_F(EnergyTest, NamesAreBounded) {
  Meter m(Coefficients{}, nullptr, [] { return 0.0; });
  for (size_t i = 0; i < Meter::kMaxNames + 5; ++i) {
    m.Record({{WorkloadKind::kBucket, "b" + std::to_string(i)}}, 0.001, 1);
  }
  EnergyReport r = m.Snapshot();
  EXPECT_EQ(r.workloads.size(), Meter::kMaxNames + 1);
  EXPECT_EQ(r.bytes, Meter::kMaxNames + 5);
  bool other = false;
  for (const WorkloadFigure& f : r.workloads) {
    if (f.name == "(other)") {
      other = true;
      EXPECT_EQ(f.bytes, 5u);
    }
  }
  EXPECT_TRUE(other);
}

}  // namespace
}  // namespace strata::energy
