// Object Lock's rules (object/lock.h), case by case: what may be removed and
// how a retention may change, by mode, date, legal hold and the bypass.
#include "object/lock.h"

#include <gtest/gtest.h>

namespace strata::object {
namespace {

constexpr int64_t kNow = 1'000'000'000'000;
constexpr int64_t kLater = kNow + 3'600'000'000'000;  // +1 h
constexpr int64_t kEarlier = kNow - 1;

ObjectRecord Version(LockMode mode, int64_t until, LegalHold hold = LegalHold::kUnset) {
  ObjectRecord r;
  r.versioned = true;
  r.lock = {mode, mode == LockMode::kNone ? 0 : until, hold};
  return r;
}

bool Removable(const ObjectRecord& r, bool bypass) { return CheckRemovable(r, kNow, bypass).ok(); }

TEST(ObjectLock, WhatMayBeRemoved) {
  EXPECT_TRUE(Removable(Version(LockMode::kNone, 0), false));
  EXPECT_FALSE(Removable(Version(LockMode::kCompliance, kLater), false));
  EXPECT_FALSE(Removable(Version(LockMode::kCompliance, kLater), true));  // nobody
  EXPECT_FALSE(Removable(Version(LockMode::kGovernance, kLater), false));
  EXPECT_TRUE(Removable(Version(LockMode::kGovernance, kLater), true));
  // Expired retentions hold nothing.
  EXPECT_TRUE(Removable(Version(LockMode::kCompliance, kEarlier), false));
  EXPECT_TRUE(Removable(Version(LockMode::kGovernance, kNow), false));  // the date itself passed
  // A legal hold holds whatever the retention and the bypass.
  EXPECT_FALSE(Removable(Version(LockMode::kNone, 0, LegalHold::kOn), true));
  EXPECT_FALSE(Removable(Version(LockMode::kGovernance, kEarlier, LegalHold::kOn), true));
  EXPECT_TRUE(Removable(Version(LockMode::kNone, 0, LegalHold::kOff), false));
  // The refusal is typed.
  Status st = CheckRemovable(Version(LockMode::kCompliance, kLater), kNow, true);
  EXPECT_EQ(st.code(), Code::kPermissionDenied);
  EXPECT_EQ(st.detail(), Detail::kLocked);
  // Delete markers carry no lock.
  ObjectRecord marker = Version(LockMode::kCompliance, kLater, LegalHold::kOn);
  marker.delete_marker = true;
  EXPECT_TRUE(Removable(marker, false));
}

bool Change(LockMode from, int64_t from_until, LockMode to, int64_t to_until, bool bypass) {
  ObjectLock current{from, from == LockMode::kNone ? 0 : from_until, LegalHold::kUnset};
  return CheckRetentionChange(current, to, to_until, kNow, bypass).ok();
}

TEST(ObjectLock, ComplianceCanOnlyBeExtended) {
  EXPECT_TRUE(Change(LockMode::kCompliance, kLater, LockMode::kCompliance, kLater, false));
  EXPECT_TRUE(Change(LockMode::kCompliance, kLater, LockMode::kCompliance, kLater + 1, false));
  for (bool bypass : {false, true}) {
    EXPECT_FALSE(Change(LockMode::kCompliance, kLater, LockMode::kCompliance, kLater - 1, bypass));
    EXPECT_FALSE(Change(LockMode::kCompliance, kLater, LockMode::kNone, 0, bypass));
    EXPECT_FALSE(Change(LockMode::kCompliance, kLater, LockMode::kGovernance, kLater + 1, bypass));
  }
  // Once expired, anything goes.
  EXPECT_TRUE(Change(LockMode::kCompliance, kEarlier, LockMode::kNone, 0, false));
}

TEST(ObjectLock, GovernanceShortensOnlyWithTheBypass) {
  EXPECT_TRUE(Change(LockMode::kGovernance, kLater, LockMode::kGovernance, kLater + 1, false));
  EXPECT_TRUE(Change(LockMode::kGovernance, kLater, LockMode::kCompliance, kLater, false));
  EXPECT_FALSE(Change(LockMode::kGovernance, kLater, LockMode::kGovernance, kLater - 1, false));
  EXPECT_FALSE(Change(LockMode::kGovernance, kLater, LockMode::kNone, 0, false));
  EXPECT_FALSE(Change(LockMode::kGovernance, kLater, LockMode::kCompliance, kLater - 1, false));
  EXPECT_TRUE(Change(LockMode::kGovernance, kLater, LockMode::kGovernance, kLater - 1, true));
  EXPECT_TRUE(Change(LockMode::kGovernance, kLater, LockMode::kNone, 0, true));
  EXPECT_TRUE(Change(LockMode::kNone, 0, LockMode::kGovernance, kLater, false));
}

TEST(ObjectLock, NewVersionsGetTheRequestsLockOrTheBucketDefault) {
  BucketRecord b;
  b.object_lock = true;
  b.default_retention = {LockMode::kGovernance, 2, 0};
  ObjectLock l = InitialLock(b, std::nullopt, kNow);
  EXPECT_EQ(l.mode, LockMode::kGovernance);
  EXPECT_EQ(l.retain_until_ns, kNow + 2 * 86400LL * 1'000'000'000);
  // A legal hold alone keeps the default retention.
  l = InitialLock(b, ObjectLock{LockMode::kNone, 0, LegalHold::kOn}, kNow);
  EXPECT_EQ(l.mode, LockMode::kGovernance);
  EXPECT_EQ(l.legal_hold, LegalHold::kOn);
  // A named mode wins over the default.
  l = InitialLock(b, ObjectLock{LockMode::kCompliance, kLater, LegalHold::kUnset}, kNow);
  EXPECT_EQ(l.mode, LockMode::kCompliance);
  EXPECT_EQ(l.retain_until_ns, kLater);
  b.default_retention = {LockMode::kCompliance, 0, 1};
  EXPECT_EQ(InitialLock(b, std::nullopt, kNow).retain_until_ns, kNow + 365 * 86400LL * 1'000'000'000);
  // Without Object Lock: nothing.
  b.object_lock = false;
  EXPECT_EQ(InitialLock(b, std::nullopt, kNow), ObjectLock{});
}

}  // namespace
}  // namespace strata::object
