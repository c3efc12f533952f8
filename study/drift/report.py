#!/usr/bin/env python3
"""The drift study's report step (report.sh runs it; README.md says what it does).

Runs `udon-mcp evidence drift DIR --json` on each server's series (data/<package>/,
whose index.json lists its captured releases in release order), adds up the per-server
reports and writes the study's numbers (JSON), docs/drift-study.md and, by `udon-mcp evidence drift`
itself, one HTML page per server in docs/drift-study/.
The output depends only on the committed data and the udon-mcp build: no clock, no
registry. Python 3 standard library only.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_PROFILE = "udon-mcp.drift-study-results.0.1"
RULES = ["exact", "ignore_documentation", "ignore_annotations", "ignore_meta_icons",
         "ignore_order", "accept_widened_input", "all_relaxations"]
RULE_IGNORES = {
    "ignore_documentation": "input_schema.documentation, output_schema.documentation",
    "ignore_annotations": "tool.annotations*",
    "ignore_meta_icons": "tool._meta, tool.icons",
    "ignore_order": "catalog.order, catalog.pages",
    "accept_widened_input": "input_schema.widened",
    "all_relaxations": "the union of the above",
}
SCHEMA_PREFIXES = ("input_schema.", "output_schema.")
CATALOG_PREFIXES = ("tool.", "input_schema.", "output_schema.", "catalog.")
# Text the model reads and nothing else: a pair whose catalog kinds are all among these
# changed the prompt only (the counterfactual for prompt text).
PROMPT_TEXT_KINDS = {"tool.description", "tool.title", "input_schema.documentation",
                     "output_schema.documentation"}
# The kinds each relaxation ignores (a kind matches a name equal to it or below it).
RULE_KINDS = {
    "ignore_documentation": ["input_schema.documentation", "output_schema.documentation"],
    "ignore_annotations": ["tool.annotations"],
    "ignore_meta_icons": ["tool._meta", "tool.icons"],
    "ignore_order": ["catalog.order", "catalog.pages"],
    "accept_widened_input": ["input_schema.widened"],
}
RULE_KINDS["all_relaxations"] = [k for r in RULE_KINDS.values() for k in r]


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def drift_report(udon, directory):
    out = subprocess.run([udon, "evidence", "drift", directory, "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        sys.exit("report: udon-mcp evidence drift failed on %s (exit %d): %s"
                 % (os.path.basename(directory), out.returncode, out.stderr.strip()[:300]))
    return json.loads(out.stdout)


def ignored_by(rule, kind):
    return any(kind == k or kind.startswith(k + ".") for k in RULE_KINDS.get(rule, []))


def _value(obj, key):
    return json.dumps(obj[key]) if key in obj else "absent"


def what_changed(d):
    """What one difference that a relaxation ignores changed, in words a reviewer uses;
    no value but the annotation hints' booleans (public catalog claims)."""
    kind, ptr, change = d["kind"], d["pointer"], d.get("change")
    last = ptr.rsplit("/", 1)[-1]
    if kind.endswith(".documentation"):
        return "%s `%s` %s" % (d.get("area", kind.split(".")[0]), last, change)
    if kind == "tool.annotations":
        old, new = d.get("old"), d.get("new")
        old, new = (old if isinstance(old, dict) else {}), (new if isinstance(new, dict) else {})
        hints = sorted(h for h in set(old) | set(new)
                       if h.endswith("Hint") and old.get(h, None) != new.get(h, None))
        return ["%s %s -> %s" % (h, _value(old, h), _value(new, h)) for h in hints] or \
            ["annotations object %s" % change]
    if kind.startswith("tool.annotations."):
        return "%s %s -> %s" % (last, _value(d, "old"), _value(d, "new"))
    if kind == "input_schema.widened":
        return widened_words(ptr, change)
    return kind


DOC_KEYWORDS = {"description", "title", "examples", "$comment", "default", "deprecated",
                "readOnly", "writeOnly"}


def widened_words(ptr, change):
    """A difference inside an input schema proved widened, by the keyword it touches."""
    parts = ptr.split("/")[2:]  # below /inputSchema
    words = [p for p in parts if not p.isdigit()]
    last = words[-1] if words else ""
    if change == "added" and len(parts) >= 2 and parts[-2] == "properties":
        return "input property added (optional)"
    if "required" in parts:
        return "input `required` name dropped"
    if last in DOC_KEYWORDS:
        return "input `%s` %s (beside the widening)" % (last, change)
    if last in ("enum", "const"):
        return "input `%s` values added" % last
    return "input `%s` %s" % (last, {"removed": "dropped"}.get(change, "relaxed"))


def pct(part, whole):
    return round(100.0 * part / whole, 1) if whole else 0.0


def bump(table, key, by=1):
    table[key] = table.get(key, 0) + by


# --------------------------------------------------------------------- aggregation
def dataset_numbers(index, chosen):
    """Releases listed, captured, flagged and failed (with why), by server."""
    per_server, failures, flagged, protocols, failed = {}, {}, [], {}, []
    for e in index["releases"]:
        if chosen and e["server"] not in chosen:
            continue
        s = per_server.setdefault(e["server"], {"package": e["package"], "listed": 0,
                                                "captured": 0, "nondeterministic": 0,
                                                "failed": 0})
        s["listed"] += 1
        s[e["outcome"]] += 1
        if e["outcome"] == "failed":
            r = e["reason"]
            bump(failures, "%s: %s" % (r["stage"], r["code"]))
            failed.append({"server": e["server"], "version": e["version"],
                           "reason": "%s: %s" % (r["stage"], r["code"]),
                           "what": r.get("cause") or r.get("hint") or r.get("message", "")})
        else:
            bump(protocols, e.get("protocolVersion") or "unknown")
            if e["outcome"] == "nondeterministic":
                flagged.append("%s %s" % (e["server"], e["version"]))
    totals = {k: sum(s[k] for s in per_server.values())
              for k in ("listed", "captured", "nondeterministic", "failed")}
    totals["servers"] = len(per_server)
    totals["serversWithPairs"] = sum(1 for s in per_server.values()
                                     if s["captured"] + s["nondeterministic"] >= 2)
    return {"totals": totals, "byServer": per_server,
            "failuresByReason": dict(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))),
            "failures": failure_groups(failed),
            "nondeterministic": flagged, "protocolVersions": dict(sorted(protocols.items()))}


def failure_groups(failed):
    """The failed releases, a server's releases with the same reason and explanation together
    (in release order)."""
    groups = []
    for f in failed:
        last = groups[-1] if groups else None
        if last and (last["server"], last["reason"], last["what"]) == (f["server"], f["reason"], f["what"]):
            last["releases"].append(f["version"])
        else:
            groups.append({"server": f["server"], "releases": [f["version"]], "reason": f["reason"], "what": f["what"]})
    return groups


def tool_change_numbers(report, acc):
    """Per tool and pair: which kinds came together (descriptions without schema change)."""
    for tool in report.get("tools", []):
        for ev in tool.get("history", []):
            if ev.get("event") != "changed":
                continue
            kinds = set(ev.get("kinds", []))
            acc["toolChanges"] += 1
            schema = any(k.startswith(SCHEMA_PREFIXES) for k in kinds)
            if "tool.description" in kinds:
                acc["withDescription"] += 1
                acc["descriptionWithoutSchema" if not schema else "descriptionWithSchema"] += 1
                if kinds == {"tool.description"}:
                    acc["descriptionOnly"] += 1
            if schema:
                acc["withSchema"] += 1


def pair_numbers(server, report, acc):
    labels = [s.get("label") for s in report.get("series", [])]
    for pair in report.get("pairs", []):
        acc["pairs"] += 1
        kinds = pair.get("kinds", {})
        refused = pair.get("refusedBy", {})
        if pair.get("catalogChanged"):
            acc["catalogChanged"] += 1
        for kind, n in kinds.items():
            k = acc["kinds"].setdefault(kind, {"pairs": 0, "differences": 0, "tools": 0})
            k["pairs"] += 1
            k["differences"] += n
            k["tools"] += pair.get("toolKinds", {}).get(kind, 0)
        tool_kinds = set(pair.get("toolKinds", {}))
        if "tool.description" in tool_kinds and not any(
                k.startswith(SCHEMA_PREFIXES) for k in tool_kinds):
            acc["pairsDescriptionWithoutSchema"] += 1
        catalog_kinds = {k for k in kinds if k.startswith(CATALOG_PREFIXES)}
        if catalog_kinds and catalog_kinds <= PROMPT_TEXT_KINDS:
            acc["pairsPromptTextOnly"] += 1
        if pair.get("catalogChanged") and not pair.get("serverVersionChanged"):
            acc["staleVersionPairs"].append("%s %s -> %s" % (
                server, labels[pair["from"]], labels[pair["to"]]))
        for rule in RULES[1:]:
            if refused.get("exact") and not refused.get(rule):
                hidden = acc["avoided"].setdefault(rule, {})
                for kind in kinds:
                    bump(hidden, kind)


SERVER_INFO_RULE_WORDS = {
    "exact": "nothing (the gate's rule)",
    "ignore_version": "serverInfo.version",
    "ignore_display": "serverInfo.title, description, websiteUrl, icons",
    "name_only": "every serverInfo member but name",
    "ignore_server_info": "serverInfo entirely",
}


SERVER_INFO_RULE_ORDER = list(SERVER_INFO_RULE_WORDS)


def gate_numbers(server, report, acc):
    """The gate's verdicts (each pair's `gate`, computed by the gate's own comparison in
    `udon-mcp evidence drift`): the step that refuses first, per pair, and what each
    serverInfo relaxation would have let through."""
    labels = [s.get("label") for s in report.get("series", [])]
    for pair in report.get("pairs", []):
        g = pair.get("gate")
        if g is None:
            continue
        acc["pairs"] += 1
        step = g["refusedAt"] or "none"
        bump(acc["refusedAt"], step)
        acc["capturedProtocolVersionsDiffer"] += g["capturedProtocolVersionsDiffer"]
        acc["toolsReviewed"] += g["toolsReviewed"]
        acc["toolsRefused"] += g["toolsRefused"]
        for code, n in g["toolRefusals"].items():
            bump(acc["toolRefusals"], code, n)
        for member in g["serverInfoMembers"]:
            bump(acc["serverInfoMembers"], member)
        if step == "server_info" and not g["toolsRefused"]:
            acc["serverInfoOnly"] += 1
            if g["serverInfoMembers"] == ["version"]:
                acc["versionOnly"] += 1
        if pair.get("catalogChanged") and not g["toolsRefused"]:
            acc["catalogChangedNoToolRefused"] += 1
        if step == "none" and pair.get("catalogChanged"):
            acc["passedWithCatalogChange"].append("%s %s -> %s" % (server, labels[pair["from"]], labels[pair["to"]]))
        for rule, verdict in g["serverInfoRules"].items():
            r = acc["rules"].setdefault(rule, {"refusedPairs": 0, "letThrough": {}})
            r["refusedPairs"] += verdict is not None
            if g["refusedAt"] is not None and verdict is None:
                for member in g["serverInfoMembers"] or ["(protocol version)"]:
                    bump(r["letThrough"], "serverInfo." + member)


def gate_summary(acc):
    exact = acc["rules"].get("exact", {}).get("refusedPairs", 0)
    rules = [{"rule": rule, "ignores": SERVER_INFO_RULE_WORDS.get(rule, rule),
              "refusedPairs": r["refusedPairs"], "avoided": exact - r["refusedPairs"],
              "letThrough": dict(sorted(r["letThrough"].items(), key=lambda kv: (-kv[1], kv[0])))}
             for rule, r in sorted(acc["rules"].items(), key=lambda kv: SERVER_INFO_RULE_ORDER.index(kv[0]))]
    out = dict(acc, rules=rules, refusedPairs=exact)
    out["refusedAt"] = {k: acc["refusedAt"].get(k, 0)
                        for k in ("protocol_version", "server_info", "catalog", "none")}
    out["serverInfoMembers"] = dict(sorted(acc["serverInfoMembers"].items(), key=lambda kv: (-kv[1], kv[0])))
    out["toolRefusals"] = dict(sorted(acc["toolRefusals"].items()))
    return out


def new_gate_acc():
    return {"pairs": 0, "refusedAt": {}, "capturedProtocolVersionsDiffer": 0, "toolsReviewed": 0,
            "toolsRefused": 0, "toolRefusals": {}, "serverInfoMembers": {}, "serverInfoOnly": 0,
            "versionOnly": 0, "catalogChangedNoToolRefused": 0, "passedWithCatalogChange": [],
            "rules": {}}


def diff_pair(udon, directory, labels, pair):
    files = [os.path.join(directory, "%s.tools.json" % labels[pair[i]]) for i in ("from", "to")]
    out = subprocess.run([udon, "diff", files[0], files[1], "--json"],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit("report: udon-mcp diff failed (exit %d)" % out.returncode)
    return json.loads(out.stdout)


def avoided_changes(udon, directory, report, acc):
    """For each relaxation, what the refusals it would have avoided changed (udon-mcp diff
    of each such pair, differences of the ignored kinds only)."""
    labels = [s.get("label") for s in report.get("series", [])]
    for pair in report.get("pairs", []):
        refused = pair.get("refusedBy", {})
        rules = [r for r in RULES[1:] if refused.get("exact") and not refused.get(r)]
        if not rules:
            continue
        doc = diff_pair(udon, directory, labels, pair)
        for rule in rules:
            tally = acc.setdefault(rule, {})
            for server in doc.get("servers", []):
                for tool in server.get("tools", []):
                    for d in tool.get("differences", []):
                        if ignored_by(rule, d["kind"]):
                            words = what_changed(d)
                            for w in words if isinstance(words, list) else [words]:
                                bump(tally, w)
            if pair.get("kinds", {}).get("catalog.order") and ignored_by(rule, "catalog.order"):
                bump(tally, "catalog.order")


def aggregate(reports, dataset, changes=None):
    acc = {"pairs": 0, "catalogChanged": 0, "kinds": {}, "pairsDescriptionWithoutSchema": 0,
           "pairsPromptTextOnly": 0,
           "staleVersionPairs": [], "avoided": {},
           "tools": {"toolChanges": 0, "withDescription": 0, "descriptionWithoutSchema": 0,
                     "descriptionWithSchema": 0, "descriptionOnly": 0, "withSchema": 0}}
    rules = {r: {"refusedPairs": 0, "pairs": 0} for r in RULES}
    version = {"pairs": 0, "catalogChanged": 0, "catalogChangedVersionUnchanged": 0,
               "versionChangedCatalogUnchanged": 0}
    servers = []
    gate = new_gate_acc()
    for name, report in reports:
        pair_numbers(name, report, acc)
        gate_numbers(name, report, gate)
        tool_change_numbers(report, acc["tools"])
        row = {"server": name, "releases": len(report.get("series", [])),
               "pairs": len(report.get("pairs", [])),
               "catalogChanged": sum(1 for p in report.get("pairs", []) if p.get("catalogChanged")),
               "toolsSeen": len(report.get("tools", [])),
               "toolCounts": [s.get("toolCount") for s in report.get("series", [])],
               "gateRefused": sum(1 for p in report.get("pairs", [])
                                  if p.get("gate", {}).get("refusedAt") is not None),
               "rules": {}}
        for r in report.get("rules", []):
            if r["rule"] in rules:
                rules[r["rule"]]["refusedPairs"] += r["refusedPairs"]
                rules[r["rule"]]["pairs"] += r["pairs"]
                row["rules"][r["rule"]] = r["refusedPairs"]
        v = report.get("versionIdentifiesCatalog", {})
        for k in version:
            version[k] += v.get(k, 0)
        row["catalogChangedVersionUnchanged"] = v.get("catalogChangedVersionUnchanged", 0)
        servers.append(row)
    exact = rules["exact"]["refusedPairs"]
    rule_rows = [{"rule": r, "ignores": RULE_IGNORES.get(r, "nothing"),
                  "refusedPairs": rules[r]["refusedPairs"], "pairs": rules[r]["pairs"],
                  "avoided": exact - rules[r]["refusedPairs"],
                  "avoidedPairsShowed": dict(sorted(acc["avoided"].get(r, {}).items(),
                                                    key=lambda kv: (-kv[1], kv[0]))),
                  "avoidedChanges": dict(sorted((changes or {}).get(r, {}).items(),
                                                key=lambda kv: (-kv[1], kv[0])))}
                 for r in RULES]
    kinds = dict(sorted(acc["kinds"].items(), key=lambda kv: (-kv[1]["pairs"], kv[0])))
    return {"profile": RESULTS_PROFILE, "dataset": dataset,
            "pairs": acc["pairs"], "catalogChangedPairs": acc["catalogChanged"],
            "kinds": kinds, "toolChanges": acc["tools"],
            "pairsDescriptionWithoutSchema": acc["pairsDescriptionWithoutSchema"],
            "pairsPromptTextOnly": acc["pairsPromptTextOnly"],
            "serverVersion": dict(version, stalePairs=acc["staleVersionPairs"]),
            "rules": rule_rows, "gate": gate_summary(gate), "servers": servers}


def threat_numbers(reports, results, dataset, index, data, chosen):
    import threats  # noqa: E402 (beside this file)
    packages = {name: s["package"] for name, s in dataset["byServer"].items()}
    return {"sdk": threats.sdk_split(reports, data, packages),
            "bootstrap": {"catalogChanged": threats.bootstrap(results["servers"], "catalogChanged"),
                          "gateRefused": threats.bootstrap(results["servers"], "gateRefused")},
            "environment": threats.environment_dependent(data, index, chosen),
            "outputSchemas": threats.output_schemas(data, index, chosen)}


def example_texts(udon, reports, results, dataset, data):
    import examples  # noqa: E402 (beside this file)
    servers = [(name, os.path.join(data, dataset["byServer"][name]["package"])) for name, _ in reports]
    kinds = [k for k in results["kinds"] if k.startswith(("tool.", "input_schema.", "output_schema."))
             and k != "tool.description"]
    return {"descriptions": examples.description_examples(udon, servers),
            "kinds": examples.kind_examples(reports, kinds)}


# --------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(prog="report.sh", description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--udon", default=os.environ.get("UDON_MCP", "udon-mcp"))
    ap.add_argument("--server", action="append", help="only this server (repeatable)")
    ap.add_argument("--json", help="write the study's numbers here")
    ap.add_argument("--md", help="write the Markdown report here")
    ap.add_argument("--html-dir", help="write each server's HTML page here (udon-mcp evidence drift -o)")
    ap.add_argument("--chart-dir", help="write the report's figures here as SVG (udon-mcp evidence chart)")
    ap.add_argument("--charts-check", nargs=2, metavar=("RESULTS", "DIR"),
                    help="only check that DIR's SVGs are what udon-mcp draws from RESULTS now; exit 1 if not")
    ap.add_argument("--check", help="compare the numbers with this committed file; exit 1 if they differ")
    ap.add_argument("--command", default="study/drift/report.sh",
                    help="the command line the report names as its source")
    args = ap.parse_args()
    if args.charts_check:
        sys.exit(check_charts(args.udon, *args.charts_check))
    index = read_json(os.path.join(args.data, "index.json"))
    chosen = set(args.server or [])
    dataset = dataset_numbers(index, chosen)
    dataset["selection"] = read_json(os.path.join(HERE, "servers.json")).get("selection", {})
    reports, changes = [], {}
    for name, s in dataset["byServer"].items():
        directory = os.path.join(args.data, s["package"])
        if s["captured"] + s["nondeterministic"] >= 2:
            rep = drift_report(args.udon, directory)
            reports.append((name, rep))
            avoided_changes(args.udon, directory, rep, changes)
    results = aggregate(reports, dataset, changes)
    results["threats"] = threat_numbers(reports, results, dataset, index, args.data, chosen)
    results["examples"] = example_texts(args.udon, reports, results, dataset, args.data)
    results["command"] = args.command
    if args.json:
        write_text(args.json, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    if args.md:
        import render  # noqa: E402 (beside this file)
        write_text(args.md, render.markdown(results))
    if args.chart_dir:
        write_charts(args.udon, results, args.chart_dir)
    if args.html_dir:
        write_pages(args.udon, args.data, dataset, [name for name, _ in reports], args.html_dir)
    if args.check:
        want = read_json(args.check)
        if want != results:
            diff_keys = sorted(k for k in set(want) | set(results) if want.get(k) != results.get(k))
            sys.exit("report: the numbers differ from %s in: %s"
                     % (os.path.basename(args.check), ", ".join(diff_keys)))
        print("report: the numbers match %s" % os.path.basename(args.check))
    if not (args.json or args.md or args.html_dir or args.chart_dir or args.check):
        json.dump(results, sys.stdout, indent=2, ensure_ascii=False)
        print()


def write_pages(udon, data, dataset, names, directory):
    """Each server's page, written by `udon-mcp evidence drift` itself (the one renderer)."""
    os.makedirs(directory, exist_ok=True)
    for name in names:
        series = os.path.join(data, dataset["byServer"][name]["package"])
        out = subprocess.run([udon, "evidence", "drift", series, "-o", os.path.join(directory, name + ".html")],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("report: udon-mcp evidence drift -o failed on %s (exit %d)" % (name, out.returncode))


def write_charts(udon, results, directory):
    """The report's figures, drawn by `udon-mcp evidence chart` (the evidence reports' chart
    code; render.chart_specs says what each shows)."""
    import render  # noqa: E402 (beside this file)
    os.makedirs(directory, exist_ok=True)
    for name, spec in render.chart_specs(results).items():
        out = subprocess.run([udon, "evidence", "chart", "-", "-o", os.path.join(directory, name + ".svg")],
                             input=json.dumps(spec), capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("report: udon-mcp evidence chart failed on %s (exit %d): %s"
                     % (name, out.returncode, out.stderr.strip()))


def check_charts(udon, results_path, directory):
    """0 when DIR's SVGs are exactly the figures udon-mcp draws from RESULTS now, else a message."""
    import render  # noqa: E402 (beside this file)
    import tempfile
    results = read_json(results_path)
    with tempfile.TemporaryDirectory() as fresh:
        write_charts(udon, results, fresh)
        want = sorted(name + ".svg" for name in render.chart_specs(results))
        have = sorted(f for f in os.listdir(directory) if f.endswith(".svg"))
        if have != want:
            return "report: %s holds %s, the report draws %s" % (directory, ", ".join(have), ", ".join(want))
        stale = [f for f in want if read_bytes(os.path.join(fresh, f)) != read_bytes(os.path.join(directory, f))]
    if stale:
        return "report: not what study/drift/report.sh draws now: %s" % ", ".join(stale)
    print("report: the %d figures match" % len(want))
    return 0


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_text(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
