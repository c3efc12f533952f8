#!/usr/bin/env python3
"""Result mapping, measured with real calls (issue 42, section 4; README.md says what it does).

For each server in tools.json: install its newest captured release with the drift study's
installer (study/drift/capture.py, from the committed lock file), then, through udon-mcp
itself, capture its catalog under the sandbox without network, review each chosen tool,
pin the manifest and call each tool twice with `udon-mcp call`: as a plain call, and with
--expect-output, which is what a UWS step that declares outputs asks of the gate. The
record of each call is taken from udon-mcp's value-free evidence; records.json keeps
nothing else. Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "study", "drift"))
import capture  # noqa: E402  the drift study's installer, bin lookup and sandbox /etc

import figures  # noqa: E402

PROFILE = "udon-mcp.result-mapping-study.0.1"
SERIES = ("newest", "firstOutputSchema")
REVIEWER = "study@example.invalid"
# Evidence members a record keeps: the call's outcome and the result's shape, never a value.
CALL_FACTS = ("code", "exit", "dispatched", "contentTypes", "hasStructuredContent")


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def places():
    fixtures = os.path.join(HERE, "fixtures")
    return {"{files}": os.path.join(fixtures, "files"), "{memory}": os.path.join(fixtures, "memory")}


def substitute(value, where):
    """tools.json's placeholders replaced by this machine's fixture paths (never recorded)."""
    if isinstance(value, str):
        for key, path in where.items():
            value = value.replace(key, path)
        return value
    if isinstance(value, list):
        return [substitute(v, where) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, where) for k, v in value.items()}
    return value


def captured_releases(study, name):
    """A server's releases the drift study captured, in its release order (servers.json)."""
    server = next(s for s in study.servers if s["name"] == name)
    entries = [study.entries.get((name, v), {}) for v in server["releases"]]
    return server, [e for e in entries if e.get("outcome") in ("captured", "nondeterministic")]


def declares_output_schema(entry):
    doc = capture.read_json(os.path.join(REPO, "study", "drift", "data", entry["file"]))
    return any("outputSchema" in t for server in doc["servers"].values()
               for page in server["toolPages"] for t in page["tools"])


def pick_release(study, name, series):
    """SERIES 'newest': the newest captured release; 'firstOutputSchema': the first captured
    release whose catalog declares any outputSchema (None when none does)."""
    server, captured = captured_releases(study, name)
    if series == "newest":
        return server, captured[-1]["version"]
    first = next((e for e in captured if declares_output_schema(e)), None)
    return server, first["version"] if first else None


def in_release(wanted, listed):
    """The tools.json entry as this release names it: itself, its 'earlier' form (an older
    name, with arguments that release accepts), or None when the release lacks both."""
    if wanted["tool"] in listed:
        return wanted
    earlier = wanted.get("earlier")
    return earlier if earlier and earlier["tool"] in listed else None


class Measurement:
    def __init__(self, args):
        self.args = args
        self.udon = args.udon
        self.study = capture.Study(argparse.Namespace(
            servers=os.path.join(REPO, "study", "drift", "servers.json"),
            data=os.path.join(REPO, "study", "drift", "data"), cache=args.cache, udon=args.udon,
            timeout=args.timeout))
        self.where = places()

    def run(self, *argv):
        """udon-mcp ARGV --json: (exit status, the parsed answer or None)."""
        out = subprocess.run([self.udon] + list(argv) + ["--json"], capture_output=True, text=True)
        try:
            return out.returncode, json.loads(out.stdout)
        except ValueError:
            return out.returncode, None

    def config(self, server, chosen, command, work):
        etc = os.path.join(work, "etc")
        capture.minimal_etc(etc, os.getuid(), os.getgid())
        node = capture.server_node(server)
        args = substitute(chosen["args"], self.where)
        if node:
            command, args = node, [command] + args
        entry = {"command": command, "args": args, "env": substitute(chosen["env"], self.where),
                 "cwd": os.path.join(work, "start"),
                 "sandbox": {"network": False, "etc": etc, "readable": substitute(chosen["readable"], self.where)}}
        os.makedirs(entry["cwd"], exist_ok=True)
        path = os.path.join(work, "udon-mcp.json")
        capture.write_json(path, {"mcpServers": {server["name"]: entry}})
        return path

    def review(self, manifest, name, tool):
        channels = []
        for prop in sorted(tool["inputSchema"].get("properties", {})):
            channels += ["--channel", "/%s=data" % prop]
        status, answer = self.run("review", manifest, "--server", name, "--tool", tool["name"],
                                  "--reviewer", REVIEWER, "--headless", "--independent-calls",
                                  "--reference-based-io", "--model-backed", "false", "--no-side-effects",
                                  "--concurrency", "safe", *channels)
        if status != 0:
            raise RuntimeError("review of %s/%s failed: %s" % (name, tool["name"], (answer or {}).get("code")))

    def call(self, base, tool, arguments, work, expect_output):
        evidence = os.path.join(work, "evidence-%s-%d.jsonl" % (tool, expect_output))
        args_file = os.path.join(work, "args.json")
        capture.write_json(args_file, arguments)
        extra = ["--expect-output"] if expect_output else []
        _, answer = self.run("call", *base, "--tool", tool, "--args-file", args_file, "--evidence", evidence,
                             "--timeout", str(self.args.timeout), *extra)
        with open(evidence, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
        if len(records) != 1:
            raise RuntimeError("expected one evidence record for %s, found %d" % (tool, len(records)))
        facts = {k: records[0][k] for k in CALL_FACTS if k in records[0]}
        if facts.get("code") == "call.output_schema_violation":
            # Schema locations only (docs/contract.md 7.1): never the result's keys or values.
            errors = ((answer or {}).get("details") or {}).get("errors") or []
            facts["keywordLocations"] = sorted({e.get("keywordLocation", "") for e in errors})
        return facts

    def measure(self, chosen, series):
        server, version = pick_release(self.study, chosen["name"], series)
        if version is None:
            return None
        prefix, reason = self.study.install(server, version)
        command = None
        if prefix:
            command, reason = self.study.find_bin(prefix, server)
        if reason:
            raise RuntimeError("%s %s: %s" % (server["name"], version, reason["code"]))
        # A fresh directory: catalogAsCommitted in the record says whether the catalog (which
        # a server could make depend on its start directory) is still the committed one.
        work = tempfile.mkdtemp(prefix="udon-results-")
        try:
            return self.measure_in(server, version, chosen, command, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def measure_in(self, server, version, chosen, command, work):
        name = server["name"]
        config, state = self.config(server, chosen, command, work), os.path.join(work, "state")
        manifest = os.path.join(work, "tools.json")
        status, answer = self.run("capture", "--config", config, "--server", name, "--state-dir", state,
                                  "--timeout", str(self.args.timeout), "--force", "-o", manifest)
        if status != 0:
            raise RuntimeError("capture of %s failed: %s" % (name, (answer or {}).get("code")))
        study_sha256, doc = self.study.study_digest(manifest)
        listed = {t["name"]: t for p in doc["servers"][name]["toolPages"] for t in p["tools"]}
        present = [in_release(w, listed) for w in chosen["tools"]]
        present = [w for w in present if w]
        for wanted in present:
            self.review(manifest, name, listed[wanted["tool"]])
        pin = subprocess.run([self.udon, "digest", manifest], capture_output=True, text=True, check=True).stdout.split()[0]
        base = ["--config", config, "--manifest", manifest, "--sha256", pin, "--server", name, "--state-dir", state]
        tools = []
        for wanted in present:
            tool = listed[wanted["tool"]]
            arguments = substitute(wanted["arguments"], self.where)
            annotations = tool.get("annotations") or {}
            record = {"tool": tool["name"],
                      "readOnlyHint": annotations.get("readOnlyHint"),
                      "openWorldHint": annotations.get("openWorldHint"),
                      "outputSchema": "outputSchema" in tool,
                      "call": self.call(base, tool["name"], arguments, work, False),
                      "step": self.call(base, tool["name"], arguments, work, True)}
            log("  %s: call %s, step %s" % (tool["name"], record["call"]["code"], record["step"]["code"]))
            tools.append(record)
        entry = self.study.entries.get((name, version), {})
        record = {"server": name, "package": server["package"], "version": version,
                  "protocolVersion": doc.get("protocolVersion"),
                  "catalogAsCommitted": study_sha256 == entry.get("studySha256"),
                  "tools": tools,
                  "notInRelease": [w["tool"] for w in chosen["tools"] if not in_release(w, listed)]}
        if capture.server_node(server):
            record["node"] = self.study.node_version(server)
        return record


def main():
    ap = argparse.ArgumentParser(prog="run.sh", description=__doc__.splitlines()[0])
    ap.add_argument("--server", action="append", help="only this server of tools.json (repeatable)")
    ap.add_argument("--series", action="append", choices=SERIES,
                    help="newest: each server's newest captured release; firstOutputSchema: its first "
                         "release that declares outputSchema (repeatable; default both)")
    ap.add_argument("--timeout", type=int, default=60, help="capture and call timeout, seconds")
    ap.add_argument("--tools", default=os.path.join(HERE, "tools.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "records.json"))
    capture.add_installer_options(ap)
    args = ap.parse_args()
    refusal = capture.root_refusal(os.geteuid(), args.allow_root)
    if refusal:
        log(refusal)
        sys.exit(2)
    order = [c["name"] for c in capture.read_json(args.tools)["servers"]]
    chosen = [c for c in capture.read_json(args.tools)["servers"] if not args.server or c["name"] in args.server]
    measurement = Measurement(args)
    old = capture.read_json(args.out, {}) or {}
    doc = {"profile": PROFILE, "environment": measurement.study.environment}
    for series in args.series or SERIES:
        done = {s["server"]: s for s in old.get(series, {}).get("servers", [])}
        for c in chosen:  # one server at a time
            log("%s (%s):" % (c["name"], series))
            done[c["name"]] = measurement.measure(c, series)
        servers = [done[n] for n in order if done.get(n)]
        old[series] = {"servers": servers, "figures": figures.figures(servers)}
    doc.update({series: old[series] for series in SERIES if series in old})
    capture.write_json(args.out, doc)
    log(json.dumps({series: doc[series]["figures"] for series in SERIES if series in doc}, indent=1))


if __name__ == "__main__":
    main()
