// The state store's share of a gated call: the invalidation check (StepStatic), for a
// `serialize` tool taking the lock (StepList), asking whether it survived the call
// (Dispatch) and releasing it (Release), as the gate does them, through gate::StateStore;
// and the same with the gate's last look before dispatch (StepRecheck: this process's
// InvalidationMemory, then the store's IsInvalidated once more), timed side by side.
//
//   state_bench STORE [RUNNERS [CALLS [own|shared]]]
//
// STORE is a state directory or a postgres:// URI. RUNNERS processes (forked, each with
// its own store object and connections, as separate udon-mcp runners have) each time
// CALLS iterations after one untimed first use (which connects and checks the schema;
// reported apart). Scope "own" (default): each runner serializes its own tool, so the
// figure is the store's cost, not queueing behind another runner's lock; "shared": all
// runners contend for one lock. Every iteration times four sequences, in an order that
// alternates: a plain tool's check, without and with the recheck, and a serialize tool's
// sequence, without and with it. Prints medians and p90 in microseconds.
//
//   state_bench connect URI [COUNT]
//
// times COUNT (50) connection set-ups alone (PQconnectdb, then PQfinish) to a postgres://
// URI: the yardstick of a fresh `call`'s added cost with the PostgreSQL store.
#include <libpq-fe.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gate/state_store.h"
#include "state_pg/open.h"

namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1))];
}

// The sequences every iteration times, in this order in a runner's samples.
constexpr int kKinds = 4;
const char* const kKindNames[kKinds] = {"check", "check+recheck", "check+lock+held+release",
                                        "check+lock+recheck+held+release"};

// One runner: writes "first" and then CALLS x kKinds samples (microseconds) as doubles to
// fd. After its first use it says so on `ready` and waits for `go` to close, so all
// runners time their calls at once.
int Runner(const std::string& store_location, int index, int calls, bool shared, int fd, int ready, int go) {
  auto store = udon::state_pg::OpenStateStore(store_location);
  if (!store.ok()) return 2;
  udon::gate::InvalidationMemory memory;  // empty, as in a process that recorded nothing
  const std::string sha(64, 'e');
  const std::string scope = shared ? "bench" : "bench\ntool" + std::to_string(index);
  auto check = [&]() -> bool {
    auto invalidated = (*store)->IsInvalidated(sha, "bench", 1);
    return invalidated.ok() && !*invalidated;
  };
  auto recheck = [&]() -> bool { return !memory.Covers(sha, "bench", 1) && check(); };
  auto once = [&](int kind) -> bool {
    if (!check()) return false;
    if (kind < 2) return kind == 0 || recheck();
    auto lock = (*store)->AcquireSerializeLock(scope, std::chrono::seconds(60));
    if (!lock.ok() || (kind == 3 && !recheck())) return false;
    // After dispatch the gate asks whether the lock survived the call (Gate::Dispatch).
    return (*lock)->StillHeld().ok();  // released here, as Gate::Release does
  };
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(calls) * kKinds + 1);
  auto start = Clock::now();
  if (!once(2)) return 3;
  samples.push_back(Micros(Clock::now() - start));
  char byte = 'r';
  if (write(ready, &byte, 1) != 1) return 4;
  while (read(go, &byte, 1) > 0) {
  }
  std::vector<double> row(kKinds);
  for (int i = 0; i < calls; ++i) {
    for (int k = 0; k < kKinds; ++k) {
      const int kind = i % 2 == 0 ? k : kKinds - 1 - k;  // alternate the order
      start = Clock::now();
      if (!once(kind)) return 3;
      row[static_cast<std::size_t>(kind)] = Micros(Clock::now() - start);
    }
    samples.insert(samples.end(), row.begin(), row.end());
  }
  const auto bytes = static_cast<ssize_t>(samples.size() * sizeof(double));
  return write(fd, samples.data(), static_cast<std::size_t>(bytes)) == bytes ? 0 : 4;
}

int TimeConnections(const std::string& uri, int count) {
  std::vector<double> samples;
  for (int i = 0; i < count; ++i) {
    const auto start = Clock::now();
    PGconn* conn = PQconnectdb(uri.c_str());
    const bool ok = PQstatus(conn) == CONNECTION_OK;
    PQfinish(conn);
    if (!ok) return 3;
    samples.push_back(Micros(Clock::now() - start));
  }
  std::printf("postgres   connection set-up (PQconnectdb + PQfinish) x %d: median %.1f us, p90 %.1f us\n", count,
              Percentile(samples, 0.5), Percentile(samples, 0.9));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "connect") {
    return TimeConnections(argv[2], argc > 3 ? std::atoi(argv[3]) : 50);
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: state_bench STORE [RUNNERS [CALLS [own|shared]]]\n");
    return 2;
  }
  const std::string store = argv[1];
  const int runners = argc > 2 ? std::atoi(argv[2]) : 8;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 1000;
  const bool shared = argc > 4 && std::string(argv[4]) == "shared";
  std::vector<std::pair<pid_t, int>> children;
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return 2;
  for (int r = 0; r < runners; ++r) {
    char path[] = "/tmp/udon-state-bench-XXXXXX";
    const int fd = mkstemp(path);
    unlink(path);
    const pid_t pid = fork();
    if (pid == 0) {
      close(go[1]);
      _exit(Runner(store, r, calls, shared, fd, ready[1], go[0]));
    }
    children.emplace_back(pid, fd);
  }
  close(go[0]);
  char byte;
  for (int r = 0; r < runners && read(ready[0], &byte, 1) == 1; ++r) {
  }
  close(go[1]);  // every runner has made its first use: go
  std::vector<double> firsts;
  std::vector<std::vector<double>> samples(kKinds);
  const std::size_t per_runner = static_cast<std::size_t>(calls) * kKinds + 1;
  int failed = 0;
  for (auto [pid, fd] : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    std::vector<double> mine(per_runner);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        pread(fd, mine.data(), mine.size() * sizeof(double), 0) != static_cast<ssize_t>(mine.size() * sizeof(double))) {
      ++failed;
      continue;
    }
    close(fd);
    firsts.push_back(mine.front());
    for (std::size_t i = 1; i < mine.size(); ++i) samples[(i - 1) % kKinds].push_back(mine[i]);
  }
  const bool postgres = store.rfind("postgres", 0) == 0;
  std::printf("%-10s runners=%d calls=%d scope=%s; first use (connect, schema check) median %.1f us; "
              "failed runners %d\n",
              postgres ? "postgres" : "file", runners, calls, shared ? "shared" : "own", Percentile(firsts, 0.5), failed);
  for (int k = 0; k < kKinds; ++k) {
    std::printf("  %-34s median %8.1f us, p90 %8.1f us\n", kKindNames[k], Percentile(samples[k], 0.5),
                Percentile(samples[k], 0.9));
  }
  return failed == 0 ? 0 : 1;
}
