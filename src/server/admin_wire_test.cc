#include "server/admin_wire.h"

#include <gtest/gtest.h>

namespace strata::server::admin {
namespace {

TEST(AdminWire, DrivesRoundTripAndFieldNames) {
  DrivesReply r;
  r.erasure_coded = true;
  r.k = 4;
  r.m = 2;
  r.drives.push_back({0, "/d/0 \"quoted\" {braces}", "online", "", 12});
  r.drives.push_back({1, "/d/1", "missing", "no such directory", 0});
  std::string body = Encode(r);
  EXPECT_EQ(body,
            R"j({"drives":[{"detail":"","path":"/d/0 \"quoted\" {braces}","position":0,)j"
            R"j("shard_files":12,"state":"online"},{"detail":"no such directory","path":"/d/1",)j"
            R"j("position":1,"shard_files":0,"state":"missing"}],"k":4,"m":2})j");
  std::string error;
  auto back = DecodeDrives(body, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(back->erasure_coded);
  EXPECT_EQ(back->k, 4);
  EXPECT_EQ(back->m, 2);
  ASSERT_EQ(back->drives.size(), 2u);
  EXPECT_EQ(back->drives[0].path, r.drives[0].path);
  EXPECT_EQ(back->drives[1].detail, "no such directory");
  EXPECT_EQ(back->drives[0].shard_files, 12u);

  DrivesReply plain;
  plain.layout = "single directory (no erasure coding)";
  EXPECT_EQ(Encode(plain), R"j({"drives":[],"layout":"single directory (no erasure coding)"})j");
  auto plain_back = DecodeDrives(Encode(plain), &error);
  ASSERT_TRUE(plain_back) << error;
  EXPECT_FALSE(plain_back->erasure_coded);
  EXPECT_EQ(plain_back->layout, plain.layout);
}

TEST(AdminWire, HealAndStatus) {
  HealReply h{3, true, "id: IOError: x"};
  EXPECT_EQ(Encode(h), R"j({"errors":"id: IOError: x","shards_rebuilt":3,"unrecoverable":true})j");
  std::string error;
  auto hb = DecodeHeal(Encode(h), &error);
  ASSERT_TRUE(hb) << error;
  EXPECT_EQ(hb->shards_rebuilt, 3u);
  EXPECT_TRUE(hb->unrecoverable);
  EXPECT_EQ(hb->errors, h.errors);

  HealStatusReply s;
  s.has_healer = true;
  s.queued = 5;
  s.healed_from_queue = 4;
  s.scrubbed = 100;
  s.shards_rebuilt = 7;
  s.unrecoverable = 1;
  s.scrub_passes = 2;
  EXPECT_EQ(Encode(s), R"j({"healed_from_queue":4,"queued":5,"scrub_passes":2,"scrubbed":100,)j"
                       R"j("shards_rebuilt":7,"unrecoverable":1})j");
  auto sb = DecodeHealStatus(Encode(s), &error);
  ASSERT_TRUE(sb) << error;
  EXPECT_TRUE(sb->has_healer);
  EXPECT_EQ(sb->queued, 5u);
  EXPECT_EQ(sb->scrub_passes, 2u);
  HealStatusReply none;
  none.healer = "none (single directory)";
  EXPECT_EQ(Encode(none), R"j({"healer":"none (single directory)"})j");
  auto nb = DecodeHealStatus(Encode(none), &error);
  ASSERT_TRUE(nb) << error;
  EXPECT_FALSE(nb->has_healer);
}

TEST(AdminWire, ErrorsAndBadBodies) {
  EXPECT_EQ(Encode(ErrorReply{"heal-object needs bucket and key"}),
            R"j({"error":"heal-object needs bucket and key"})j");
  // Control characters and invalid UTF-8 still give valid JSON.
  std::string odd = Encode(ErrorReply{std::string("a\x01\xff", 3)});
  std::string error;
  auto e = DecodeError(odd, &error);
  ASSERT_TRUE(e) << error << " " << odd;
  EXPECT_EQ(e->error.substr(0, 2), std::string("a\x01", 2));
  EXPECT_FALSE(DecodeHeal("not json", &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(DecodeHeal(R"j({"shards_rebuilt":"three"})j", &error));
  EXPECT_FALSE(DecodeDrives(R"j({"k":4,"m":2})j", &error));  // no drives
  EXPECT_FALSE(DecodeError("<Error/>", &error));
}

}  // namespace
}  // namespace strata::server::admin
