#!/usr/bin/env python3
"""What the drift study's servers declare and announce (issue 42, section 4).

For the newest captured release of each server in study/drift/servers.json (or every
captured release with --all): install it from its committed lock file and start it in
udon-mcp's capture sandbox with no network, exactly as the drift study does (capture.py's
own install and sandbox functions), and let `udon-mcp capture --observe SECONDS` open it,
list its tools, stay idle, and list again. Records the capabilities the server declared
and the notifications it sent in each phase (docs/contract.md 7.2, `capture --observe`)
into study/race/sessions.json. Python 3 standard library only.
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

PROFILE = "udon-mcp.race-sessions.0.1"
WORK = os.path.join(drift.WORK_ROOT, "sessions")


def releases_to_observe(study, every):
    """(server entry, version) pairs: per server its newest captured release (or every one
    with `every`); a server with none captured keeps its newest listed release, which then
    fails as it did in the drift study."""
    todo = []
    for server in study.servers:
        captured = [v for v in server["releases"]
                    if study.entries.get((server["name"], v), {}).get("outcome") in ("captured", "nondeterministic")]
        chosen = captured if every else captured[-1:]
        todo += [(server, v) for v in (chosen or server["releases"][-1:])]
    return todo


def observe(study, server, version, idle):
    """One release's record: its session (capabilities, notifications by phase) or why not."""
    record = {"server": server["name"], "package": server["package"], "version": version}
    prefix, reason = study.install(server, version)
    command = None
    if prefix:
        command, reason = study.find_bin(prefix, server)
    if command:
        reason = run_session(study, server, version, command, idle, record)
    if reason:
        record.update({"outcome": "failed", "reason": reason})
    return record


def run_session(study, server, version, command, idle, record):
    work = os.path.join(WORK, drift.safe_name(server["name"]))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        config = study.sandbox_config(server, command, work)
        cmd = [study.udon, "capture", "--config", config, "--server", server["name"],
               "--state-dir", os.path.join(work, "state"), "--timeout", str(study.args.timeout),
               "--observe", str(idle), "--diagnostics", "--json", "--force",
               "-o", os.path.join(work, "tools.json")]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
        if out.returncode != 0:
            return study.failure_reason(server, version, out)
        result = json.loads(out.stdout)
        session = result["sessions"][server["name"]]
        record.update({"outcome": "observed", "protocolVersion": result["protocolVersion"],
                       "negotiation": result["negotiation"][server["name"]], "session": session})
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


LIST_CHANGED = "notifications/tools/list_changed"
# The modern era's answer to the client's own subscriptions/listen: not the server's news.
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def declares_list_changed(record):
    tools = record["session"]["capabilities"].get("tools")
    return isinstance(tools, dict) and tools.get("listChanged") is True


def sent(record, phases=None):
    """The notification methods the server sent in these phases (all by default)."""
    notifications = record["session"]["notifications"]
    return {m for p in (phases or list(notifications)) for m in notifications[p] if m != ACKNOWLEDGED}


def summary(records):
    """The figures docs/experiment.md quotes (race_test.py checks them): over each server's
    newest captured release, and over every release observed."""
    return {"newest": figures([r for r in records if r.get("newest")]), "everyRelease": figures(records)}


def figures(records):
    observed = [r for r in records if r["outcome"] == "observed"]

    def names(keep):
        return sorted(r["server"] + "@" + r["version"] for r in observed if keep(r))
    return {
        "releases": len(records),
        "observed": len(observed),
        "declareToolsListChanged": names(declares_list_changed),
        "sentToolsListChanged": names(lambda r: LIST_CHANGED in sent(r)),
        "sentToolsListChangedAfterListing": names(lambda r: LIST_CHANGED in sent(r, ["idle", "relisting"])),
        "sentAnyNotification": names(lambda r: bool(sent(r))),
        "catalogChangedIdle": names(lambda r: not r["session"]["relistIdentical"]),
        "notificationMethods": count_methods(observed),
        "capabilityKeys": count_keys(observed),
    }


def count_methods(observed):
    """Per notification method, the releases that sent it."""
    counts = {}
    for r in observed:
        for method in sent(r):
            counts[method] = counts.get(method, 0) + 1
    return dict(sorted(counts.items()))


def count_keys(observed):
    counts = {}
    for r in observed:
        for key in r["session"]["capabilities"]:
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def open_study(ap):
    """Parses the command line with the options study/race's scripts share and opens the
    drift study's installer on the committed data. Refuses root unless --allow-root."""
    ap.add_argument("--cache", default=os.environ.get("UDON_DRIFT_CACHE", os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "udon-mcp-drift")))
    ap.add_argument("--udon", default=os.environ.get("UDON_MCP", os.path.join(drift.REPO, "build/src/cli/udon-mcp")))
    ap.add_argument("--allow-root", action="store_true", help="run as root all the same (a disposable machine only)")
    args = ap.parse_args()
    refusal = drift.root_refusal(os.geteuid(), args.allow_root)
    if refusal:
        sys.exit(refusal.replace("run.sh", ap.prog))
    return args, drift.Study(argparse.Namespace(
        data=os.path.join(drift.HERE, "data"), cache=args.cache, udon=args.udon,
        timeout=getattr(args, "timeout", 60), servers=os.path.join(drift.HERE, "servers.json")))


def main():
    ap = argparse.ArgumentParser(prog="sessions.py", description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every captured release, not only the newest")
    ap.add_argument("--server", action="append", help="only this server (repeatable)")
    ap.add_argument("--idle", type=int, default=5, help="seconds to stay idle between the listings (default 5)")
    ap.add_argument("--install-only", action="store_true", help="only fill the install cache")
    ap.add_argument("--timeout", type=int, default=60, help="capture timeout, seconds")
    ap.add_argument("--out", default=os.path.join(HERE, "sessions.json"))
    args, study = open_study(ap)
    todo = [(s, v) for s, v in releases_to_observe(study, args.all) if not args.server or s["name"] in args.server]
    old = drift.read_json(args.out, {}) or {}
    records = {(r["server"], r["version"]): r for r in old.get("records", [])}
    newest = {(s["name"], v) for s, v in releases_to_observe(study, False)}
    for n, (server, version) in enumerate(todo, 1):
        if args.install_only:
            _, reason = study.install(server, version)
            drift.log("[%d/%d] install %s %s: %s" % (n, len(todo), server["name"], version,
                                                    reason["code"] if reason else "ok"))
            continue
        record = observe(study, server, version, args.idle)
        record["newest"] = (server["name"], version) in newest
        records[(server["name"], version)] = record
        drift.log("[%d/%d] %s %s: %s" % (n, len(todo), server["name"], version, record["outcome"]))
    if args.install_only:
        return
    write_records(study, records.values(), args.out, args.idle)


def write_records(study, records, out, idle):
    """Writes the records in servers.json's order, release order within a server."""
    order = {}
    for server in study.servers:
        for version in server["releases"]:
            order[(server["name"], version)] = len(order)
    rows = sorted(records, key=lambda r: order.get((r["server"], r["version"]), len(order)))
    drift.write_json(out, {"profile": PROFILE, "idleSeconds": idle,
                           "environment": study.environment, "summary": summary(rows), "records": rows})


if __name__ == "__main__":
    main()
