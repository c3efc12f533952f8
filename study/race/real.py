#!/usr/bin/env python3
"""The notification race on real servers (issue 42, section 4): `udon-mcp probe` on
read-only tools of the drift study's reference servers that answer offline, each release
installed from its committed lock file and started in udon-mcp's capture sandbox with no
network (capture.py's own install and sandbox functions).

Per target: capture, review (read-only, independent calls), then per round and setting
(connections reused or fresh, 1 or 4 calls at a time) one probe of N calls with
--evidence, and `udon-mcp evidence summarize --json` of that evidence: the calls' final
codes and what the gate saw of list_changed (absorbed before binding, disturbed listings,
invalidations before dispatch, during a call, between calls). Writes
study/race/real.json. Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "drift"))
import capture as drift  # noqa: E402  (the drift study's installer and sandbox)
import sessions  # noqa: E402

PROFILE = "udon-mcp.race-real.0.1"
WORK = os.path.join(drift.WORK_ROOT, "race-real")
# Read-only tools that answer offline in the sandbox, with fixed arguments. Left out:
# sequential-thinking's only tool keeps a thought history per process (calls are not
# independent, so a read-only review of it would be false), and every other study server's
# tools need the network, a credential or a browser.
TARGETS = [
    {"server": "memory", "tool": "read_graph", "args": {}},
    {"server": "everything", "tool": "echo", "args": {"message": "One fixed sentence."}},
    {"server": "everything", "tool": "get-sum", "args": {"a": 1, "b": 2}},
    {"server": "filesystem", "tool": "list_allowed_directories", "args": {}},
]
SETTINGS = [("reused", 1), ("reused", 4), ("fresh", 1), ("fresh", 4)]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def newest_captured(study, name):
    return next((s, v) for s, v in sessions.releases_to_observe(study, False) if s["name"] == name)


def reviewed_manifest(study, server, command, target, work):
    """Captures and reviews the target tool; returns (config, manifest, sha256)."""
    config = study.sandbox_config(server, command, work)
    manifest = os.path.join(work, "tools.json")
    out = run([study.udon, "capture", "--config", config, "--server", server["name"], "--json", "--force",
               "--state-dir", os.path.join(work, "state"), "-o", manifest], cwd=work)
    if out.returncode != 0:
        raise RuntimeError("capture failed: " + out.stdout.strip()[:300])
    out = run([study.udon, "review", manifest, "--server", server["name"], "--tool", target["tool"],
               "--reviewer", "study@example.invalid", "--headless", "--independent-calls",
               "--reference-based-io", "--model-backed", "false", "--no-side-effects", "--concurrency", "safe"])
    if out.returncode != 0:
        raise RuntimeError("review failed: " + out.stderr.strip()[:300])
    sha = run([study.udon, "digest", manifest], check=True).stdout.split()[0]
    return config, manifest, sha


def probe_once(study, server, target, reviewed, work, mode, k, repeat, label):
    config, manifest, sha = reviewed
    evidence = os.path.join(work, "evidence-%s.jsonl" % label)
    cmd = [study.udon, "probe", "--config", config, "--manifest", manifest, "--sha256", sha,
           "--server", server["name"], "--tool", target["tool"], "--args", json.dumps(target["args"]),
           "--repeat", str(repeat), "--concurrency", str(k), "--state-dir", os.path.join(work, "state-" + label),
           "--evidence", evidence, "--json"] + (["--fresh-connections"] if mode == "fresh" else [])
    out = run(cmd, cwd=work)
    try:
        result = json.loads(out.stdout)
    except ValueError:
        result = {"code": "probe_output_unreadable"}
    summary = json.loads(run([study.udon, "evidence", "summarize", evidence, "--json"], check=True).stdout)["summary"]
    return {"connections": mode, "concurrency": k, "repeat": repeat,
            "outcomes": result.get("outcomes", {}), "notRun": result.get("stopped", {}).get("notRun", 0),
            "verdict": result.get("verdict", result.get("code")), "listChanged": summary["listChanged"]}


def run_target(study, target, repeat, rounds):
    server, version = newest_captured(study, target["server"])
    prefix, reason = study.install(server, version)
    command = None
    if prefix:
        command, reason = study.find_bin(prefix, server)
    if reason:
        raise RuntimeError("%s %s: %s" % (server["name"], version, reason))
    work = os.path.join(WORK, drift.safe_name(server["name"]))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        reviewed = reviewed_manifest(study, server, command, target, work)
        runs = []
        for round_ in range(1, rounds + 1):
            for mode, k in SETTINGS:
                row = probe_once(study, server, target, reviewed, work, mode, k, repeat,
                                 "%d-%s-%d" % (round_, mode, k))
                row["round"] = round_
                runs.append(row)
                drift.log("%s %s round %d %s x%d: %s" % (server["name"], target["tool"], round_, mode, k,
                                                       json.dumps(row["outcomes"], sort_keys=True)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"server": server["name"], "version": version, "tool": target["tool"], "runs": runs}


def totals(results):
    """The figures docs/experiment.md quotes (sessions_test.py checks them)."""
    t = {"probes": 0, "calls": 0, "ok": 0, "absorbedBeforeBinding": 0, "disturbedListings": 0, "invalidations": {}}
    for target in results:
        for r in target["runs"]:
            t["probes"] += 1
            t["calls"] += sum(r["outcomes"].values())
            t["ok"] += r["outcomes"].get("ok", 0)
            t["absorbedBeforeBinding"] += r["listChanged"]["absorbedBeforeBinding"]
            t["disturbedListings"] += r["listChanged"]["disturbedListings"]
            for reason, count in r["listChanged"]["invalidations"].items():
                t["invalidations"][reason] = t["invalidations"].get(reason, 0) + count
    return t


def main():
    ap = argparse.ArgumentParser(prog="real.py", description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "real.json"))
    args, study = sessions.open_study(ap)
    results = [run_target(study, target, args.repeat, args.rounds) for target in TARGETS]
    drift.write_json(args.out, {"profile": PROFILE, "repeat": args.repeat, "rounds": args.rounds,
                                "totals": totals(results), "targets": results})


if __name__ == "__main__":
    main()
