// The pinned ring against the fake CUDA runtime (testing/fake_cudart.cc), whose streams
// run copies late on threads of their own, and against the real libcudart where this
// machine has one.
#include "cuda/pinned_ring.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "cuda/testing/fake_cudart.h"
#include "cuda/testing/fake_cudart_path.h"

namespace strata::cuda {
namespace {

// The build's stand-in runtime, or $STRATA_FAKE_CUDART (a build copied elsewhere:
// bench/device_check.sh).
std::string FakePath() {
  const char* env = std::getenv("STRATA_FAKE_CUDART");
  return env && *env ? env : STRATA_FAKE_CUDART_PATH;
}

class PinnedRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rt = Runtime::Load(FakePath());
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    rt_ = *rt;
    void* h = dlopen(FakePath().c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    configure_ = reinterpret_cast<FakeCudartConfigureFn>(dlsym(h, "fake_cudart_configure"));
    stats_ = reinterpret_cast<FakeCudartStatsFn>(dlsym(h, "fake_cudart_stats"));
    dlclose(h);  // rt_ holds it
    ASSERT_TRUE(configure_ && stats_);
    configure_(1, 0, 0, 0);
  }
  FakeCudartStats Stats() {
    FakeCudartStats s;
    stats_(&s);
    return s;
  }
  std::unique_ptr<PinnedRing> Open(size_t slot_bytes, int slots) {
    RingOptions o;
    o.slot_bytes = slot_bytes;
    o.slots = slots;
    return Open(o);
  }
  std::unique_ptr<PinnedRing> Open(RingOptions o) {
    auto r = PinnedRing::Open(rt_, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : nullptr;
  }
  static std::vector<unsigned char> Random(size_t n, uint32_t seed) {
    std::vector<unsigned char> v(n);
    std::mt19937 g(seed);
    for (auto& b : v) b = static_cast<unsigned char>(g());
    return v;
  }

  std::shared_ptr<Runtime> rt_;
  FakeCudartConfigureFn configure_ = nullptr;
  FakeCudartStatsFn stats_ = nullptr;
};

TEST_F(PinnedRingTest, CopiesEverySizeThroughTheSlotsWithLateCopies) {
  // Copies run 300 us after they are queued: a slot refilled before its copy ran, or a
  // ticket taken as done too early, shows as wrong bytes.
  configure_(1, 300, 0, 0);
  auto ring = Open(4096, 3);
  ASSERT_TRUE(ring);
  const size_t sizes[] = {0, 1, 4095, 4096, 4097, 3 * 4096, 5 * 4096 + 2048, 40000};
  uint32_t seed = 1;
  for (size_t n : sizes) {
    auto src = Random(n, seed++);
    std::vector<unsigned char> dev(n + 64, 0xEE);  // "device" memory, with a guard after
    auto t = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), src.data(), n);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    // The source may be reused at once: scribble on it before the copies have run.
    std::fill(src.begin(), src.end(), 0x55);
    auto expect = Random(n, seed - 1);
    ASSERT_TRUE(ring->Wait(*t).ok());
    ASSERT_TRUE(std::equal(expect.begin(), expect.end(), dev.begin())) << "size " << n;
    for (size_t i = n; i < dev.size(); ++i) ASSERT_EQ(dev[i], 0xEE) << "wrote past the end";
  }
  const RingStats st = ring->stats();
  EXPECT_GT(st.slot_waits, 0u);  // 3 slots, up to 10 pieces per copy
  EXPECT_EQ(Stats().pageable_async_copies, 0u) << "every async copy must come from pinned memory";
}

TEST_F(PinnedRingTest, WaitOnATicketMeansThatCopyAndEveryEarlierOneAreDone) {
  configure_(1, 2000, 0, 0);
  auto ring = Open(1024, 8);
  ASSERT_TRUE(ring);
  std::vector<std::vector<unsigned char>> dev(6, std::vector<unsigned char>(1024));
  std::vector<uint64_t> tickets;
  for (size_t i = 0; i < dev.size(); ++i) {
    auto src = Random(1024, 100 + static_cast<uint32_t>(i));
    auto t = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev[i].data()), src.data(), 1024);
    ASSERT_TRUE(t.ok());
    tickets.push_back(*t);
  }
  for (size_t i = 1; i < tickets.size(); ++i) EXPECT_GT(tickets[i], tickets[i - 1]);
  // 8 slots: nothing waited, so the copies are still queued (2 ms each).
  ASSERT_TRUE(ring->Wait(tickets[3]).ok());
  for (size_t i = 0; i <= 3; ++i) {
    EXPECT_EQ(dev[i], Random(1024, 100 + static_cast<uint32_t>(i))) << i;
  }
  ASSERT_TRUE(ring->Synchronize().ok());
  for (size_t i = 0; i < dev.size(); ++i) {
    EXPECT_EQ(dev[i], Random(1024, 100 + static_cast<uint32_t>(i))) << i;
  }
  EXPECT_FALSE(ring->Wait(tickets.back() + 1).ok());
}

TEST_F(PinnedRingTest, ManyThreadsCopyAtOnce) {
  configure_(1, 50, 0, 0);
  auto ring = Open(3000, 4);
  ASSERT_TRUE(ring);
  constexpr int kThreads = 6, kCopies = 25;
  constexpr size_t kLen = 7000;
  std::vector<unsigned char> dev(kThreads * kCopies * kLen);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCopies; ++c) {
        const size_t at = (static_cast<size_t>(t) * kCopies + c) * kLen;
        auto src = Random(kLen, static_cast<uint32_t>(at));
        auto tk = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data() + at), src.data(), kLen);
        if (!tk.ok() || !ring->Wait(*tk).ok()) ++failures;
        // After Wait, this copy's bytes are in place whatever the other threads do.
        if (!std::equal(src.begin(), src.end(), dev.begin() + static_cast<long>(at))) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(ring->stats().bytes, uint64_t{kThreads} * kCopies * kLen);
  EXPECT_EQ(Stats().pageable_async_copies, 0u);
}

TEST_F(PinnedRingTest, AfterStreamOrdersTheCopyBehindThatStreamsWork) {
  // Another stream (torch's, in the loader) still has a slow copy into the same memory
  // queued; the ring's copy must land after it.
  configure_(1, 0, 0, 0);
  auto ring = Open(RingOptions{});
  ASSERT_TRUE(ring);
  Runtime& r = *rt_;
  cudaStream_t other = nullptr;
  ASSERT_EQ(r.StreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  void* pinned = nullptr;
  ASSERT_EQ(r.HostAlloc(&pinned, 4096, cudaHostAllocDefault), cudaSuccess);
  std::memset(pinned, 'A', 4096);
  std::vector<unsigned char> dev(4096);
  configure_(1, 20000, 0, 0);  // the other stream's copy takes 20 ms
  ASSERT_EQ(r.MemcpyAsync(dev.data(), pinned, 4096, cudaMemcpyHostToDevice, other), cudaSuccess);
  configure_(1, 0, 0, 0);
  std::vector<unsigned char> b(4096, 'B');
  auto t = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), b.data(), b.size(),
                              reinterpret_cast<uintptr_t>(other));
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(ring->Wait(*t).ok());
  EXPECT_EQ(dev, b);
  ASSERT_EQ(r.StreamSynchronize(other), cudaSuccess);
  EXPECT_EQ(dev, b) << "the other stream's copy ran after the ring's";
  ASSERT_EQ(r.StreamDestroy(other), cudaSuccess);
  ASSERT_EQ(r.FreeHost(pinned), cudaSuccess);
}

TEST_F(PinnedRingTest, AfterStreamZeroIsTheDefaultStream) {
  // torch's default stream is stream 0: "after stream 0" must wait for it, not mean
  // "no stream" (the ring's own stream is non-blocking and would not wait by itself).
  configure_(1, 0, 0, 0);
  auto ring = Open(RingOptions{});
  ASSERT_TRUE(ring);
  Runtime& r = *rt_;
  void* pinned = nullptr;
  ASSERT_EQ(r.HostAlloc(&pinned, 4096, cudaHostAllocDefault), cudaSuccess);
  std::memset(pinned, 'A', 4096);
  std::vector<unsigned char> dev(4096), b(4096, 'B');
  configure_(1, 20000, 0, 0);
  ASSERT_EQ(r.MemcpyAsync(dev.data(), pinned, 4096, cudaMemcpyHostToDevice, nullptr), cudaSuccess);
  configure_(1, 0, 0, 0);
  auto t = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), b.data(), b.size(), 0);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(ring->Wait(*t).ok());
  ASSERT_EQ(r.StreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(dev, b) << "the default stream's copy ran after the ring's";
  ASSERT_EQ(r.FreeHost(pinned), cudaSuccess);
}

TEST_F(PinnedRingTest, TheCallersCurrentDeviceIsLeftAsItWas) {
  // The runtime keeps a current device per thread; torch relies on it. A ring on device 1
  // used from a thread whose current device is 2 must leave it at 2.
  configure_(3, 0, 0, 0);
  Runtime& r = *rt_;
  ASSERT_EQ(r.SetDevice(2), cudaSuccess);
  int now = -1;
  {
    RingOptions o;
    o.device = 1;
    auto ring = Open(o);
    ASSERT_TRUE(ring);
    ASSERT_EQ(r.GetDevice(&now), cudaSuccess);
    EXPECT_EQ(now, 2) << "Open";
    std::vector<unsigned char> src(10000, 3), dev(10000);
    auto t = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), src.data(), src.size());
    ASSERT_TRUE(t.ok());
    ASSERT_EQ(r.GetDevice(&now), cudaSuccess);
    EXPECT_EQ(now, 2) << "CopyToDevice";
    ASSERT_TRUE(ring->Wait(*t).ok());
  }
  ASSERT_EQ(r.GetDevice(&now), cudaSuccess);
  EXPECT_EQ(now, 2) << "the destructor";
  ASSERT_EQ(r.SetDevice(0), cudaSuccess);
}

TEST_F(PinnedRingTest, ACudaErrorBreaksTheRingAndNamesTheCall) {
  configure_(1, 5000, 3, 0);  // the third cudaMemcpyAsync is refused; each copy takes 5 ms
  auto ring = Open(100, 2);
  ASSERT_TRUE(ring);
  std::vector<unsigned char> src(500, 1), dev(500);
  auto t = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), src.data(), src.size());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kInternal);
  EXPECT_NE(t.status().message().find("cudaMemcpyAsync: invalid argument (1"), std::string::npos)
      << t.status().ToString();
  // The two pieces queued before the refusal have run by the time the error is back:
  // nothing writes into `dev` once the caller has heard of the failure.
  EXPECT_TRUE(std::equal(src.begin(), src.begin() + 200, dev.begin()));
  auto again = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), src.data(), 10);
  EXPECT_FALSE(again.ok());
  EXPECT_FALSE(ring->Synchronize().ok());
}

TEST_F(PinnedRingTest, AnAsynchronousFailureReachesWait) {
  configure_(1, 100, 0, 2);  // the second piece fails on the "device"
  auto ring = Open(100, 8);
  ASSERT_TRUE(ring);
  std::vector<unsigned char> src(400, 1), dev(400);
  auto t = ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), src.data(), src.size());
  ASSERT_TRUE(t.ok());  // queued fine; the failure comes later
  Status st = ring->Wait(*t);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unspecified launch failure"), std::string::npos) << st.ToString();
}

TEST_F(PinnedRingTest, TheRingFreesEverythingItMade) {
  const FakeCudartStats before = Stats();
  {
    std::vector<unsigned char> src(1 << 18, 7), dev(1 << 18);  // outlive the ring
    auto ring = Open(1 << 16, 5);
    ASSERT_TRUE(ring);
    EXPECT_EQ(Stats().pinned_live, before.pinned_live + 5);
    configure_(1, 1000, 0, 0);
    ASSERT_TRUE(ring->CopyToDevice(reinterpret_cast<uintptr_t>(dev.data()), src.data(), src.size()).ok());
    // Destroyed with copies in flight: it waits for them, then frees.
  }
  const FakeCudartStats after = Stats();
  EXPECT_EQ(after.pinned_live, before.pinned_live);
  EXPECT_EQ(after.streams_live, before.streams_live);
  EXPECT_EQ(after.events_live, before.events_live);
}

TEST_F(PinnedRingTest, NoDeviceOrAMissingOneIsUnavailable) {
  configure_(0, 0, 0, 0);
  auto none = PinnedRing::Open(rt_, RingOptions{});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kUnavailable);
  EXPECT_NE(none.status().message().find("no CUDA-capable device"), std::string::npos);
  configure_(2, 0, 0, 0);
  RingOptions o;
  o.device = 2;
  auto missing = PinnedRing::Open(rt_, o);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kUnavailable);
  EXPECT_NE(missing.status().message().find("device 2 does not exist (2 device(s)"),
            std::string::npos) << missing.status().ToString();
  o.device = 0;
  o.slots = 0;
  EXPECT_EQ(PinnedRing::Open(rt_, o).status().code(), Code::kInvalidArgument);
}

TEST(CudaRuntimeTest, AMissingOrWrongLibraryIsAClearError) {
  auto missing = Runtime::Load("/nonexistent/libcudart.so.12");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kUnavailable);
  EXPECT_NE(missing.status().message().find("/nonexistent/libcudart.so.12"), std::string::npos);
  auto wrong = Runtime::Load("libz.so.1");  // loads, but is no CUDA runtime
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("not a CUDA runtime (no cudaGetDeviceCount"),
            std::string::npos) << wrong.status().ToString();
}

// The real runtime, where the toolkit is installed: on a machine without a GPU (CI) it
// must load and report "no device" cleanly; with one, bytes must make the round trip.
TEST(CudaRuntimeTest, TheRealRuntimeLoadsAndEitherCopiesOrSaysWhyNot) {
  std::string path;
  for (const char* p : {"/usr/local/cuda/lib64/libcudart.so", "/usr/local/cuda/lib/libcudart.so"}) {
    if (std::filesystem::exists(p)) path = p;
  }
  if (path.empty()) GTEST_SKIP() << "no CUDA toolkit runtime on this machine";
  auto rt = Runtime::Load(path);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  auto ring = PinnedRing::Open(*rt, RingOptions{});
  if (!ring.ok()) {
    EXPECT_EQ(ring.status().code(), Code::kUnavailable) << ring.status().ToString();
    EXPECT_NE(ring.status().message().find(path), std::string::npos);
    return;
  }
  Runtime& r = **rt;
  const size_t n = (20 << 20) + 123;  // 2.5 slots
  std::vector<unsigned char> src(n), back(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  void* dev = nullptr;
  ASSERT_EQ(r.Malloc(&dev, n), cudaSuccess);
  auto t = (*ring)->CopyToDevice(reinterpret_cast<uintptr_t>(dev), src.data(), n);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE((*ring)->Wait(*t).ok());
  ASSERT_EQ(r.Memcpy(back.data(), dev, n, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, src);
  ASSERT_EQ(r.Free(dev), cudaSuccess);
}

}  // namespace
}  // namespace strata::cuda
