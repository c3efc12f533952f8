#include "gate/evidence_record.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "gate/evidence.h"
#include "json/json.h"
#include "test_support.h"

namespace udon::gate {
namespace {

json::Value ParseLine(const char* text) {
  auto value = json::Parse(text);
  EXPECT_TRUE(value.ok());
  return value.ok() ? *value : json::Value();
}

// A record as the gate writes it today, every member set.
constexpr const char* kCurrent =
    R"({"argumentsHmacSha256":"aa","barrier":true,"callMs":1.5,"cause":"mcp.timeout","code":"call.indeterminate",)"
    R"("command":"run","connection":"reused","contentTypes":{"image":1,"text":2},"digestKeyId":"k1:0011223344556677","dispatched":true,)"
    R"("disturbedListings":1,"drift":[{"area":"description","change":"changed","pointer":"/description"}],)"
    R"("era":"modern","exit":5,"gateMs":2.25,"hasStructuredContent":true,"invalidation":"list_changed_during_call",)"
    R"("invalidationWriteFailed":"state.write_failed","listChangedBeforeBinding":0,"listings":2,)"
    R"("liveToolSha256":"bb","manifestSha256":"cc","modelBacked":false,"notificationStream":"established",)"
    R"("pinnedSha256":"cc","probe":{"concurrency":2,"connections":"reuse","overlapped":true,"repeat":4,)"
    R"("repetition":3,"run":"0123456789abcdef"},"protocolVersion":"2026-07-28","reason":"list_changed",)"
    R"("resultHmacSha256":"dd","reuseRefused":"list_changed","sandbox":{"enabled":false},"server":"demo",)"
    R"("serverInfoDrift":[{"change":"changed","pointer":"/version"}],"serverRequests":["sampling/createMessage"],)"
    R"("steps":[{"ms":0.5,"outcome":"ok","step":"digest"},{"ms":1.0,"outcome":"call.indeterminate","step":"dispatch"}],)"
    R"("storeTls":"require","subscription":"active","time":"2026-11-30T04:49:24.123Z","tool":"render"})";

TEST(EvidenceRecord, RoundTripsEveryMemberByteForByte) {
  const json::Value written = ParseLine(kCurrent);
  const EvidenceRecord record = EvidenceRecord::FromJson(written);
  EXPECT_EQ(record.exit, 5);
  EXPECT_EQ(record.code, "call.indeterminate");
  ASSERT_TRUE(record.probe.has_value());
  EXPECT_TRUE(record.probe->overlapped);
  EXPECT_EQ(FailedStep(record), "dispatch");
  EXPECT_EQ(record.ToJson().dump(), written.dump());
}

// Written before keyed digests, eras, subscriptions, sandboxes and barriers: nothing
// newer is invented on reading, and the legacy digests survive.
TEST(EvidenceRecord, AnOlderRecordLackingNewerMembersRoundTrips) {
  const json::Value written = ParseLine(
      R"({"argumentsSha256":"aa","callMs":1.0,"code":"ok","command":"call","connection":"fresh","dispatched":true,)"
      R"("disturbedListings":0,"exit":0,"gateMs":2.0,"listings":1,"manifestSha256":"cc","pinnedSha256":"cc",)"
      R"("resultSha256":"dd","server":"demo","steps":[{"ms":1.0,"outcome":"ok","step":"digest"}],)"
      R"("time":"2026-01-01T00:00:00.000Z","tool":"render"})");
  const EvidenceRecord record = EvidenceRecord::FromJson(written);
  EXPECT_FALSE(record.era.has_value());
  EXPECT_FALSE(record.barrier.has_value());
  EXPECT_FALSE(record.list_changed_before_binding.has_value());
  EXPECT_FALSE(record.digest_key_id.has_value());
  EXPECT_TRUE(record.sandbox.is_null());
  EXPECT_EQ(record.result_sha256, "dd");
  EXPECT_EQ(FailedStep(record), "");
  EXPECT_EQ(record.ToJson().dump(), written.dump());
}

TEST(EvidenceRecord, MembersOfTheWrongTypeAreNeverTakenAsValues) {
  const EvidenceRecord record = EvidenceRecord::FromJson(
      ParseLine(R"({"code":5,"exit":"0","gateMs":"1","dispatched":"yes","invalidation":4,)"
                R"("steps":[{"step":7,"outcome":5},3],"probe":{"overlapped":"no"}})"));
  EXPECT_EQ(record.code, "") << "present, unreadable";
  EXPECT_FALSE(record.exit.has_value());
  EXPECT_FALSE(record.gate_ms.has_value());
  EXPECT_FALSE(record.dispatched.has_value());
  EXPECT_EQ(record.invalidation, "");
  ASSERT_TRUE(record.steps.has_value());
  ASSERT_EQ(record.steps->size(), 1u) << "a non-object step names nothing";
  EXPECT_EQ(FailedStep(record), "");
  ASSERT_TRUE(record.probe.has_value());
  EXPECT_FALSE(record.probe->overlapped);
  EXPECT_TRUE(EvidenceRecord::FromJson(json::Value::array()).ToJson().empty());
}

TEST(EvidenceRecord, DecisionExitFollowsTheGatesClasses) {
  EXPECT_EQ(DecisionExit(std::nullopt), 0);
  EXPECT_EQ(DecisionExit(MakeError("call.indeterminate", "x")), 5);
  EXPECT_EQ(DecisionExit(MakeError("call.tool_error", "x")), 4);
  EXPECT_EQ(DecisionExit(MakeError("manifest.invalid", "x")), 3);
  EXPECT_EQ(DecisionExit(MakeError("catalog.tool_drift", "x")), 3);
  EXPECT_EQ(DecisionExit(MakeError("state.lock_timeout", "x")), 3);
  EXPECT_EQ(DecisionExit(MakeError("manifest.unreadable", "x")), 2);
  EXPECT_EQ(DecisionExit(MakeError("config.server_unknown", "x")), 2);
  EXPECT_EQ(DecisionExit(MakeError("state.write_failed", "x")), 1);
  EXPECT_EQ(DecisionExit(MakeError("mcp.closed", "x")), 1);
}

// Issue 41: the evidence file stays open across calls. Two writers (as two serve
// processes: each its own open file) append concurrently; the file is rotated (renamed)
// between two bursts. Every line stays whole, none is lost, and the lines written after
// the rotation are in the file the path names now, not in the renamed one.
TEST(EvidenceWriter, TwoWritersLinesStayWholeAndFollowThePathThroughARotation) {
  udon::testing::TempDir dir;
  const std::string path = dir.File("evidence.jsonl");
  auto first = EvidenceWriter::Open(path);
  auto second = EvidenceWriter::Open(path);
  ASSERT_TRUE(first.ok() && second.ok());
  const std::string pad(3000, 'x');  // lines longer than a pipe's atomic write
  const auto burst = [&](int from, int to) {
    const auto write = [&](EvidenceWriter& writer, const char* who) {
      for (int n = from; n < to; ++n) ASSERT_TRUE(writer.Append({{"writer", who}, {"n", n}, {"pad", pad}}).ok());
    };
    std::thread a([&] { write(**first, "a"); });
    std::thread b([&] { write(**second, "b"); });
    a.join();
    b.join();
  };
  burst(0, 100);
  ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);
  burst(100, 200);
  const auto lines = [](const std::string& file, int& count, bool rotated) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      auto record = json::Parse(line);
      ASSERT_TRUE(record.ok()) << "a torn line in " << file;
      EXPECT_EQ((*record)["n"].get<int>() >= 100, !rotated) << file;
      ++count;
    }
  };
  int before = 0;
  int after = 0;
  lines(path + ".1", before, true);
  lines(path, after, false);
  EXPECT_EQ(before, 200);
  EXPECT_EQ(after, 200);
}

}  // namespace
}  // namespace udon::gate
