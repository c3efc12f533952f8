#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gate/state_store.h"
#include "telemetry/telemetry.h"

namespace udon::telemetry {
namespace {

// A store whose optional operations say whether they were reached.
class RecordingStore : public gate::StateStore {
 public:
  Result<bool> IsInvalidated(std::string_view, std::string_view, std::int64_t) override { return false; }
  Status Record(std::string_view, std::string_view, std::string_view, std::int64_t) override { return OkStatus(); }
  Result<std::unique_ptr<gate::StateLock>> AcquireSerializeLock(const std::string&,
                                                                std::chrono::milliseconds) override {
    return MakeError("state.lock_timeout", "not in this test");
  }
  std::optional<std::string> WeakenedTls() const override { return "sslmode=disable"; }
  void Warm() override { warmed = true; }
  Status CheckReachable() override { return MakeError("state.unavailable", "the store does not answer"); }
  void WatchInvalidations(InvalidationHeard heard) override { watcher = std::move(heard); }

  bool warmed = false;
  InvalidationHeard watcher;
};

// The observer counts operations; everything else is the inner store's. Readiness and the
// replicas' NOTIFY watch once stopped at the observer: /readyz stayed 200 on a dead
// PostgreSQL and replicas never withdrew an invalidated server's tools.
TEST(ObservedStoreTest, ForwardsEveryOperationOfTheStoreItObserves) {
  auto inner = std::make_shared<RecordingStore>();
  Telemetry telemetry(OtlpConfig{});
  std::shared_ptr<gate::StateStore> observed = telemetry.Observe(inner);

  EXPECT_EQ(observed->CheckReachable().error().code, "state.unavailable");
  std::string heard;
  observed->WatchInvalidations([&](const std::string& digest, const std::string& server) { heard = digest + " " + server; });
  ASSERT_TRUE(inner->watcher);
  inner->watcher("abc", "demo");
  EXPECT_EQ(heard, "abc demo");
  observed->Warm();
  EXPECT_TRUE(inner->warmed);
  EXPECT_EQ(observed->WeakenedTls(), "sslmode=disable");
  EXPECT_FALSE(*observed->IsInvalidated("abc", "demo", 0));
}

}  // namespace
}  // namespace udon::telemetry
