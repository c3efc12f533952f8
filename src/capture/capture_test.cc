#include "capture/capture.h"

#include <atomic>
#include <chrono>

#include <gtest/gtest.h>

#include "manifest/diff.h"
#include "mcp/testing/memory_transport.h"

namespace udon::capture {
namespace {

using manifest::DiffManifests;
using manifest::ManifestDiff;
using manifest::ParseInstant;
using manifest::Policy;
using manifest::Seconds;
using mcp::Message;

struct ScriptedServer {
  std::string version = "2025-11-25";
  json::Value server_info = {{"name", "demo"}, {"version", "1.0.0"}, {"title", "Demo"}};
  std::vector<json::Value> pages = {
      {{"tools", {{{"name", "a"}, {"inputSchema", {{"type", "object"}}}}}}, {"nextCursor", "c1"}},
      {{"tools", {{{"name", "b"}, {"inputSchema", {{"type", "object"}}}}}}, {"_meta", {{"x/y", 1}}}}};
  int disturb_listings = 0;  // send list_changed during this many listings
  std::atomic<int> listings{0};
  // How server/discover is met: unanswered (the default), refused as an unknown method,
  // by hanging up, or by a frame that is not JSON.
  enum class Probe { kSilent, kRefuse, kHangUp, kGarbage } probe = Probe::kSilent;
  std::atomic<int> probes{0};
  // On a ping: announce a change (and log a message), then serve another catalog.
  bool change_on_ping = false;

  void Handle(const Message& m, mcp::MemoryPeer& p) {
    if (m.kind != mcp::MessageKind::kRequest) return;
    if (m.method == "server/discover") {
      ++probes;
      if (probe == Probe::kRefuse) p.Send(mcp::MakeError(m.id, -32601, "Method not found"));
      if (probe == Probe::kHangUp) p.Disconnect();
      if (probe == Probe::kGarbage) p.SendRaw("}{");
    } else if (m.method == "initialize") {
      p.Send(mcp::MakeResult(m.id, {{"protocolVersion", version}, {"capabilities", {{"tools", json::Value::object()}}},
                                    {"serverInfo", server_info}}));
    } else if (m.method == "ping") {
      if (change_on_ping) {
        p.Send(mcp::MakeNotification("notifications/message", {{"level", "info"}, {"data", "secret-value"}}));
        p.Send(mcp::MakeNotification("notifications/tools/list_changed"));
        pages[1]["tools"][0]["description"] = "changed";
      }
      p.Send(mcp::MakeResult(m.id, json::Value::object()));
    } else if (m.method == "tools/list") {
      const bool first = !m.params.is_object() || !m.params.contains("cursor");
      if (first) ++listings;
      if (first && listings <= disturb_listings) p.Send(mcp::MakeNotification("notifications/tools/list_changed"));
      p.Send(mcp::MakeResult(m.id, first ? pages[0] : pages[1]));
    }
  }
};

class CaptureTest : public ::testing::Test {
 protected:
  CaptureTest() {
    for (const char* key : {"one", "two"}) config_.servers[key].key = key;
  }

  CaptureOptions Options(std::vector<std::string> servers) {
    CaptureOptions options;
    options.servers = std::move(servers);
    options.connect = [this](const mcp::ServerConfig& server, const mcp::ClientOptions& client_options) {
      ++connects_;
      ScriptedServer* target = server.key == "one" ? &one_ : &two_;
      // A silent server/discover costs the whole probe timeout; the tests need its outcome,
      // not its length.
      mcp::ClientOptions quick_probe = client_options;
      quick_probe.probe_timeout = std::chrono::milliseconds(100);
      auto client = std::make_unique<mcp::Client>(
          std::make_unique<mcp::MemoryTransport>([target](const Message& m, mcp::MemoryPeer& p) { target->Handle(m, p); }),
          quick_probe);
      Status started = client->Start();
      if (!started.ok()) return Result<std::unique_ptr<mcp::Client>>(std::move(started).error());
      return Result<std::unique_ptr<mcp::Client>>(std::move(client));
    };
    return options;
  }

  mcp::RuntimeConfig config_;
  ScriptedServer one_, two_;
  std::atomic<int> connects_{0};
  const Seconds now_ = *ParseInstant("2026-11-30T10:00:00Z");
};

TEST_F(CaptureTest, RecordsEveryPageIntactWithVersionAndServerInfo) {
  auto manifest = Capture(config_, Policy{}, Options({"one", "two"}), now_);
  ASSERT_TRUE(manifest.ok()) << manifest.error().Describe();
  const json::Value& doc = manifest->document();
  EXPECT_EQ(doc["protocolVersion"], "2025-11-25");
  EXPECT_EQ(doc["capturedAt"], "2026-11-30T10:00:00Z");
  EXPECT_EQ(doc["expiresAt"], "2026-12-07T10:00:00Z");
  EXPECT_EQ(doc["servers"]["one"]["serverInfo"], one_.server_info);
  EXPECT_EQ(doc["servers"]["one"]["toolPages"], json::Value(one_.pages));  // nextCursor and _meta kept
  EXPECT_TRUE(manifest->CheckCaptureComplete().ok());
}

TEST_F(CaptureTest, CapturingTwiceDiffersOnlyInTheInstants) {
  auto first = Capture(config_, Policy{}, Options({"one"}), now_);
  auto second = Capture(config_, Policy{}, Options({"one"}), now_ + 60);
  ASSERT_TRUE(first.ok() && second.ok());
  ManifestDiff diff = DiffManifests(*first, *second);
  EXPECT_TRUE(diff.servers.empty());
  ASSERT_EQ(diff.top_level.size(), 2u);
  EXPECT_EQ(diff.top_level[0].pointer, "/capturedAt");
  EXPECT_EQ(diff.top_level[1].pointer, "/expiresAt");
}

TEST_F(CaptureTest, ADisturbedListingStartsOverAndThreeAreUnstable) {
  one_.disturb_listings = 2;
  auto manifest = Capture(config_, Policy{}, Options({"one"}), now_);
  ASSERT_TRUE(manifest.ok()) << manifest.error().Describe();
  EXPECT_EQ(one_.listings.load(), 3);
  one_.listings = 0;
  one_.disturb_listings = 3;
  EXPECT_EQ(Capture(config_, Policy{}, Options({"one"}), now_).error().code, "catalog.unstable");
}

TEST_F(CaptureTest, ACursorLoopIsRefused) {
  one_.pages[1]["nextCursor"] = "c1";
  EXPECT_EQ(Capture(config_, Policy{}, Options({"one"}), now_).error().code, "catalog.pagination_invalid");
}

TEST_F(CaptureTest, ServersMustAgreeOnTheProtocolVersion) {
  two_.version = "2025-06-18";
  EXPECT_EQ(Capture(config_, Policy{}, Options({"one", "two"}), now_).error().code,
            "server.protocol_version_mismatch");
  CaptureOptions asked = Options({"one"});
  asked.protocol_version = "2025-06-18";  // one_ answers 2025-11-25 regardless
  EXPECT_EQ(Capture(config_, Policy{}, asked, now_).error().code, "server.protocol_version_mismatch");
}

TEST_F(CaptureTest, RefusesExpiryBeyondPolicyAndUnknownServers) {
  CaptureOptions options = Options({"one"});
  options.expires_in_days = 31;
  EXPECT_EQ(Capture(config_, Policy{}, options, now_).error().code, "manifest.window_exceeds_policy");
  EXPECT_EQ(Capture(config_, Policy{}, Options({"three"}), now_).error().code, "config.server_unknown");
  EXPECT_EQ(Capture(config_, Policy{}, Options({}), now_).error().code, "usage.invalid");
}

TEST_F(CaptureTest, AServerThatHangsUpOnTheProbeIsOpenedAgainWithInitialize) {
  std::vector<std::string> paths;
  auto capture = [&](std::optional<std::string> version = std::nullopt) {
    paths.clear();
    connects_ = 0;
    one_.probes = 0;
    CaptureOptions options = Options({"one"});
    options.protocol_version = std::move(version);
    options.on_negotiated = [&](const std::string& server, const std::string& path, mcp::Era era) {
      EXPECT_EQ(era, mcp::Era::kLegacy);
      paths.push_back(server + ":" + path);
    };
    return Capture(config_, Policy{}, options, now_);
  };
  one_.probe = ScriptedServer::Probe::kHangUp;
  auto restarted = capture();
  ASSERT_TRUE(restarted.ok()) << restarted.error().Describe() << restarted.error().details.dump();
  EXPECT_EQ(paths, std::vector<std::string>{"one:initialize_after_restart"});
  EXPECT_EQ(connects_.load(), 2);
  EXPECT_EQ(one_.probes.load(), 1) << "the new connection opens with initialize, no second probe";
  EXPECT_EQ(restarted->document()["servers"]["one"]["toolPages"], json::Value(one_.pages));

  // Refused: a legacy server that stays connected; the same connection initializes.
  one_.probe = ScriptedServer::Probe::kRefuse;
  ASSERT_TRUE(capture().ok());
  EXPECT_EQ(paths, std::vector<std::string>{"one:initialize_fallback"});
  EXPECT_EQ(connects_.load(), 1);

  // Asked for a version: no probe at all.
  ASSERT_TRUE(capture("2025-11-25").ok());
  EXPECT_EQ(paths, std::vector<std::string>{"one:exact"});
  EXPECT_EQ(one_.probes.load(), 0);

  // A hostile frame is not a hang-up: no second connection, the capture fails.
  one_.probe = ScriptedServer::Probe::kGarbage;
  auto hostile = capture();
  ASSERT_FALSE(hostile.ok());
  EXPECT_EQ(hostile.error().code, "server.connect_failed");
  EXPECT_EQ(connects_.load(), 1);
  EXPECT_TRUE(paths.empty());
}

TEST_F(CaptureTest, ObservingReportsTheCapabilitiesAndWhatWasAnnouncedWhileIdle) {
  const json::Value first_pages = json::Value(one_.pages);
  one_.change_on_ping = true;
  std::vector<json::Value> sessions;
  CaptureOptions options = Options({"one"});
  options.observe_idle = std::chrono::milliseconds(0);
  options.on_session = [&](const std::string& server, json::Value session) {
    EXPECT_EQ(server, "one");
    sessions.push_back(std::move(session));
  };
  auto manifest = Capture(config_, Policy{}, options, now_);
  ASSERT_TRUE(manifest.ok()) << manifest.error().Describe();
  ASSERT_EQ(sessions.size(), 1u);
  const json::Value& session = sessions[0];
  EXPECT_EQ(session["capabilities"], json::Value({{"tools", json::Value::object()}}));
  EXPECT_EQ(session["notifications"]["idle"],
            json::Value({{"notifications/message", 1}, {"notifications/tools/list_changed", 1}}));
  for (const char* phase : {"opening", "listing", "relisting"}) {
    EXPECT_EQ(session["notifications"][phase], json::Value::object()) << phase;
  }
  EXPECT_EQ(session["relistIdentical"], false);
  EXPECT_EQ(session.dump().find("secret-value"), std::string::npos) << "methods only, never params";
  EXPECT_EQ(one_.listings.load(), 2);
  EXPECT_EQ(manifest->document()["servers"]["one"]["toolPages"], first_pages) << "the manifest is the first listing";
}

TEST_F(CaptureTest, AQuietSessionRelistsTheSameCatalogAndNoObservationListsOnce) {
  std::vector<json::Value> sessions;
  CaptureOptions options = Options({"one"});
  options.on_session = [&](const std::string&, json::Value session) { sessions.push_back(std::move(session)); };
  ASSERT_TRUE(Capture(config_, Policy{}, options, now_).ok());
  EXPECT_TRUE(sessions.empty());
  EXPECT_EQ(one_.listings.load(), 1);
  options.observe_idle = std::chrono::milliseconds(0);
  ASSERT_TRUE(Capture(config_, Policy{}, options, now_).ok());
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0]["relistIdentical"], true);
  EXPECT_EQ(sessions[0]["notifications"]["idle"], json::Value::object());
}

}  // namespace
}  // namespace udon::capture
