#!/usr/bin/env python3
"""The drift study's report step (report.sh runs it; README.md says what it does).

Runs `udon-mcp evidence drift DIR --json` on each server's series (data/<package>/,
whose index.json lists its captured releases in release order), adds up the per-server
reports and writes the study's numbers (JSON), docs/drift-study.md and its HTML version.
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


def pct(part, whole):
    return round(100.0 * part / whole, 1) if whole else 0.0


def bump(table, key, by=1):
    table[key] = table.get(key, 0) + by


# --------------------------------------------------------------------- aggregation
def dataset_numbers(index, chosen):
    """Releases listed, captured, flagged and failed (with why), by server."""
    per_server, failures, flagged = {}, {}, []
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
        elif e["outcome"] == "nondeterministic":
            flagged.append("%s %s" % (e["server"], e["version"]))
    totals = {k: sum(s[k] for s in per_server.values())
              for k in ("listed", "captured", "nondeterministic", "failed")}
    totals["servers"] = len(per_server)
    totals["serversWithPairs"] = sum(1 for s in per_server.values()
                                     if s["captured"] + s["nondeterministic"] >= 2)
    return {"totals": totals, "byServer": per_server,
            "failuresByReason": dict(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))),
            "nondeterministic": flagged}


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
        if pair.get("catalogChanged") and not pair.get("serverVersionChanged"):
            acc["staleVersionPairs"].append("%s %s -> %s" % (
                server, labels[pair["from"]], labels[pair["to"]]))
        for rule in RULES[1:]:
            if refused.get("exact") and not refused.get(rule):
                hidden = acc["avoided"].setdefault(rule, {})
                for kind in kinds:
                    bump(hidden, kind)


def aggregate(reports, dataset):
    acc = {"pairs": 0, "catalogChanged": 0, "kinds": {}, "pairsDescriptionWithoutSchema": 0,
           "staleVersionPairs": [], "avoided": {},
           "tools": {"toolChanges": 0, "withDescription": 0, "descriptionWithoutSchema": 0,
                     "descriptionWithSchema": 0, "descriptionOnly": 0, "withSchema": 0}}
    rules = {r: {"refusedPairs": 0, "pairs": 0} for r in RULES}
    version = {"pairs": 0, "catalogChanged": 0, "catalogChangedVersionUnchanged": 0,
               "versionChangedCatalogUnchanged": 0}
    servers = []
    for name, report in reports:
        pair_numbers(name, report, acc)
        tool_change_numbers(report, acc["tools"])
        row = {"server": name, "releases": len(report.get("series", [])),
               "pairs": len(report.get("pairs", [])),
               "catalogChanged": sum(1 for p in report.get("pairs", []) if p.get("catalogChanged")),
               "toolsSeen": len(report.get("tools", [])),
               "toolCounts": [s.get("toolCount") for s in report.get("series", [])],
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
                                                    key=lambda kv: (-kv[1], kv[0])))}
                 for r in RULES]
    kinds = dict(sorted(acc["kinds"].items(), key=lambda kv: (-kv[1]["pairs"], kv[0])))
    return {"profile": RESULTS_PROFILE, "dataset": dataset,
            "pairs": acc["pairs"], "catalogChangedPairs": acc["catalogChanged"],
            "kinds": kinds, "toolChanges": acc["tools"],
            "pairsDescriptionWithoutSchema": acc["pairsDescriptionWithoutSchema"],
            "serverVersion": dict(version, stalePairs=acc["staleVersionPairs"]),
            "rules": rule_rows, "servers": servers}


# --------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(prog="report.sh", description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--udon", default=os.environ.get("UDON_MCP", "udon-mcp"))
    ap.add_argument("--server", action="append", help="only this server (repeatable)")
    ap.add_argument("--json", help="write the study's numbers here")
    ap.add_argument("--md", help="write the Markdown report here")
    ap.add_argument("--html", help="write the HTML report here")
    ap.add_argument("--check", help="compare the numbers with this committed file; exit 1 if they differ")
    ap.add_argument("--command", default="study/drift/report.sh",
                    help="the command line the report names as its source")
    args = ap.parse_args()
    index = read_json(os.path.join(args.data, "index.json"))
    chosen = set(args.server or [])
    dataset = dataset_numbers(index, chosen)
    reports = []
    for name, s in dataset["byServer"].items():
        directory = os.path.join(args.data, s["package"])
        if s["captured"] + s["nondeterministic"] >= 2:
            reports.append((name, drift_report(args.udon, directory)))
    results = aggregate(reports, dataset)
    results["command"] = args.command
    if args.json:
        write_text(args.json, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    if args.md or args.html:
        import render  # noqa: E402 (beside this file)
        if args.md:
            write_text(args.md, render.markdown(results))
        if args.html:
            write_text(args.html, render.html_page(results))
    if args.check:
        want = read_json(args.check)
        if want != results:
            diff_keys = sorted(k for k in set(want) | set(results) if want.get(k) != results.get(k))
            sys.exit("report: the numbers differ from %s in: %s"
                     % (os.path.basename(args.check), ", ".join(diff_keys)))
        print("report: the numbers match %s" % os.path.basename(args.check))
    if not (args.json or args.md or args.html or args.check):
        json.dump(results, sys.stdout, indent=2, ensure_ascii=False)
        print()


def write_text(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
