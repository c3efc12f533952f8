// workbench: the review workbench in a browser on this machine (docs/contract.md 7.15).
// The command resolves what the terminal commands resolve (the manifest, the policy, with
// --live the configured servers' fresh capture) and hands them to the workbench component;
// the HTTP rules live in workbench/server.h.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "capture/capture.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "manifest/manifest.h"
#include "workbench/server.h"
#include "workbench/workbench.h"

namespace udon::cli {
namespace {

struct WorkbenchCommandOptions {
  std::string manifest;
  std::string against;
  bool live = false;
  std::string listen = "127.0.0.1:0";
  CommonOptions common;
};

// A fresh capture of the manifest's servers, as `capture --update` takes it.
Result<manifest::Manifest> CaptureLive(const WorkbenchCommandOptions& o, const manifest::Policy& policy) {
  UDON_ASSIGN_OR_RETURN(manifest::Manifest current, manifest::Manifest::Load(o.manifest));
  UDON_ASSIGN_OR_RETURN(mcp::RuntimeConfig config, LoadConfig(o.common));
  capture::CaptureOptions request;
  request.servers = current.server_keys();
  if (ProgressWanted(o.common.json)) {
    request.on_progress = [](const std::string& line) { PrintProgress("capture: " + line); };
  }
  return capture::Capture(config, policy, request, manifest::NowSeconds());
}

}  // namespace

// Serves until SIGINT or SIGTERM. The signals are blocked in every thread (the servers'
// threads inherit the mask) and taken by one thread that stops every server.
int ServeWorkbenchesUntilSignalled(const std::vector<workbench::WorkbenchServer*>& servers) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread stopper([&servers, signals] {
    int received = 0;
    sigwait(&signals, &received);
    for (workbench::WorkbenchServer* server : servers) server->Stop();
  });
  std::vector<std::thread> serving;
  for (std::size_t i = 1; i < servers.size(); ++i) serving.emplace_back([server = servers[i]] { server->Serve(); });
  if (!servers.empty()) servers[0]->Serve();
  for (std::thread& thread : serving) thread.join();
  stopper.join();
  return kExitOk;
}

namespace {

int RunWorkbench(const WorkbenchCommandOptions& o) {
  const bool json = o.common.json;
  if (!o.against.empty() && o.live) {
    return ReportError(MakeError("usage.invalid", "--against and --live exclude each other"), json, kExitInvalidInput);
  }
  auto address = workbench::ParseListenAddress(o.listen);
  if (!address.ok()) return ReportError(address.error(), json, kExitInvalidInput);
  auto policy = LoadPolicy(o.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  // Refuse an unreadable manifest (or baseline) now rather than on the first page.
  if (auto loaded = manifest::Manifest::Load(o.manifest); !loaded.ok()) {
    return ReportError(loaded.error(), json, kExitInvalidInput, o.manifest);
  }
  workbench::WorkbenchOptions options{o.manifest, o.against, std::nullopt, o.against, *policy};
  if (!o.against.empty()) {
    if (auto loaded = manifest::Manifest::Load(o.against); !loaded.ok()) {
      return ReportError(loaded.error(), json, kExitInvalidInput, o.against);
    }
  }
  if (o.live) {
    auto live = CaptureLive(o, *policy);
    if (!live.ok()) return ReportError(live.error(), json, ExitCodeFor(live.error()));
    options.live = std::move(live).value();
    options.against_label = "a live capture";
  }
  workbench::Workbench bench(std::move(options));
  auto server = workbench::WorkbenchServer::Create(bench, *address);
  if (!server.ok()) return ReportError(server.error(), json, kExitInternal);
  auto port = (*server)->Bind();
  if (!port.ok()) return ReportError(port.error(), json, kExitInternal);
  // The URL carries the token: printed for the person who started the command only.
  if (json) {
    PrintJsonResult({{"url", (*server)->Url()}, {"port", *port}});
  } else {
    std::printf("udon-mcp workbench: open %s (Ctrl-C stops it)\n", (*server)->Url().c_str());
  }
  std::fflush(stdout);
  return ServeWorkbenchesUntilSignalled({server->get()});
}

}  // namespace

void RegisterWorkbenchCommand(CLI::App& app) {
  auto o = std::make_shared<WorkbenchCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "workbench", "Review tools in a browser on this machine: overview, tool pages, review form, drift");
  command->add_option("MANIFEST", o->manifest, "The manifest to review (written in place on save)")->required();
  command->add_option("--against", o->against, "A previous manifest: show drift from it, carry its reviews over");
  command->add_flag("--live", o->live, "Capture the manifest's servers now: show drift to it, carry reviews onto it");
  command->add_option("--config", o->common.config, "Runtime configuration (mcp.json) for --live");
  command->add_option("--policy", o->common.policy, "Local policy file (JSON or YAML)");
  command->add_option("--listen", o->listen, "127.0.0.1:PORT (loopback only; default any free port)");
  command->add_flag("--json", o->common.json, "Print {\"url\",\"port\"} as JSON on stdout");
  SetAction(command, &o->common.json, [o] { return RunWorkbench(*o); });
}

}  // namespace udon::cli
