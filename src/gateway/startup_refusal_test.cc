#include "gateway/startup_refusal.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "json/json.h"

namespace udon::gateway {
namespace {

using std::chrono::milliseconds;

// One end of a pipe each way: what the host writes, what the gateway answers.
class Pipes {
 public:
  Pipes() {
    EXPECT_EQ(pipe(in_), 0);
    EXPECT_EQ(pipe(out_), 0);
    fcntl(out_[0], F_SETFL, O_NONBLOCK);
  }
  ~Pipes() {
    for (int fd : {in_[0], in_[1], out_[0], out_[1]}) {
      if (fd >= 0) close(fd);
    }
  }
  void HostWrites(const std::string& text) { ASSERT_EQ(write(in_[1], text.data(), text.size()), ssize_t(text.size())); }
  void HostCloses() {
    close(in_[1]);
    in_[1] = -1;
  }
  std::size_t Answer(milliseconds wait = milliseconds(5000)) {
    return AnswerStartUpRefusal(Mismatch(), 3, {in_[0], out_[1], wait});
  }
  std::vector<json::Value> Answers() {
    std::string text;
    char chunk[4096];
    for (ssize_t got; (got = read(out_[0], chunk, sizeof chunk)) > 0;) text.append(chunk, std::size_t(got));
    std::vector<json::Value> answers;
    for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
      answers.push_back(json::Parse(text.substr(at, end - at)).value());
    }
    return answers;
  }
  static Error Mismatch() {
    Error error = MakeError("manifest.digest_mismatch", "the manifest's canonical SHA-256 differs from the pin");
    error.details["expected"] = "a secret-looking value";
    return error;
  }

 private:
  int in_[2] = {-1, -1};
  int out_[2] = {-1, -1};
};

constexpr const char* kDiscover =
    R"({"jsonrpc":"2.0","id":"probe-1","method":"server/discover","params":{}})"
    "\n";
constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}})"
    "\n";

TEST(StartUpRefusalTest, AnswersDiscoverAndInitializeWithTheCodeAndFixedMessageThenStops) {
  Pipes pipes;
  pipes.HostWrites(kDiscover);
  pipes.HostWrites(R"({"jsonrpc":"2.0","method":"notifications/whatever"})"
                   "\nnot json\n");
  pipes.HostWrites(kInitialize);
  pipes.HostWrites(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})"
                   "\n");
  EXPECT_EQ(pipes.Answer(), 2u) << "nothing after initialize is read";
  const std::vector<json::Value> answers = pipes.Answers();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0]["id"], "probe-1");
  EXPECT_EQ(answers[1]["id"], 0);
  for (const json::Value& answer : answers) {
    EXPECT_EQ(answer["error"]["code"], kStartUpRefusedCode);
    EXPECT_EQ(answer["error"]["message"],
              "manifest.digest_mismatch: the manifest's canonical SHA-256 differs from the pin");
    EXPECT_EQ(answer["error"]["data"], (json::Value{{"code", "manifest.digest_mismatch"}, {"exit", 3}}));
    EXPECT_EQ(answer.dump().find("secret"), std::string::npos) << "details never reach the host";
  }
}

TEST(StartUpRefusalTest, AFrameSplitAcrossReadsAndACarriageReturnAreOneRequest) {
  Pipes pipes;
  const std::string initialize = kInitialize;
  pipes.HostWrites(initialize.substr(0, 20));
  pipes.HostWrites(initialize.substr(20, initialize.size() - 21) + "\r\n");
  EXPECT_EQ(pipes.Answer(), 1u);
}

TEST(StartUpRefusalTest, TheEndOfInputEndsTheWaitAtOnce) {
  Pipes pipes;
  pipes.HostWrites(kDiscover);
  pipes.HostCloses();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(pipes.Answer(milliseconds(60'000)), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(StartUpRefusalTest, AHostThatSendsNothingDoesNotKeepTheGatewayAlive) {
  Pipes pipes;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(pipes.Answer(milliseconds(200)), 0u);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, milliseconds(150));
  EXPECT_LT(elapsed, std::chrono::seconds(10));
  EXPECT_TRUE(pipes.Answers().empty());
}

}  // namespace
}  // namespace udon::gateway
