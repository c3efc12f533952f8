"""Threats to the drift study's validity, measured from the committed data (report.py calls
these): SDK-driven versus server-driven tool changes from the lock files, confidence
intervals from a seeded bootstrap over servers, and catalogs that depend on where they run.
Python 3 standard library only; no clock, no registry: the same data give the same numbers.
"""
import json
import os
import random
import re

SDK = "node_modules/@modelcontextprotocol/sdk"
# Tool members the MCP TypeScript SDK writes itself: the JSON Schema dialect of the schemas it
# converts, and `execution` (task support). A change touching only these, between installs
# whose SDK versions differ, is the SDK's, not the server's.
SDK_SHAPED = ("$schema", "execution")
BOOTSTRAP_SEED = 20261207
BOOTSTRAP_ROUNDS = 2000
# Text a server writes into its catalog from where it runs (the study's fixed start directory,
# the operating system, the shell): a catalog that differs from machine to machine.
ENVIRONMENT_MARKERS = {
    "start directory": re.compile(r"/tmp/udon-drift-study/"),
    "operating system": re.compile(r"Running on (Linux|Darwin|Windows|macOS)"),
    "shell": re.compile(r"Default shell: \w+"),
}


def sdk_version(data, package, label):
    path = os.path.join(data, package, "%s.lock.json" % label)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("packages", {}).get(SDK, {}).get("version")
    except (OSError, ValueError):
        return None


def sdk_shaped(pointer):
    parts = pointer.split("/")
    return (len(parts) > 1 and parts[1] == "execution") or parts[-1] == "$schema"


def sdk_split(reports, data, packages):
    """Each tool change of each pair: sdkDriven (every pointer SDK-shaped, SDK versions differ),
    mixed (some), serverDriven (none, or the SDK did not change)."""
    out = {"toolChanges": 0, "sdkDriven": 0, "mixed": 0, "serverDriven": 0,
           "sdkShapedSameSdk": 0, "pairs": 0, "pairsSdkChanged": 0, "pairsSdkUnknown": 0}
    for name, report in reports:
        labels = [s["label"] for s in report.get("series", [])]
        sdks = [sdk_version(data, packages[name], label) for label in labels]
        for p in report.get("pairs", []):
            out["pairs"] += 1
            a, b = sdks[p["from"]], sdks[p["to"]]
            out["pairsSdkUnknown"] += a is None or b is None
            out["pairsSdkChanged"] += a is not None and b is not None and a != b
        for tool in report.get("tools", []):
            for ev in tool.get("history", []):
                if ev.get("event") != "changed":
                    continue
                out["toolChanges"] += 1
                shaped = [sdk_shaped(ptr) for ptr in ev.get("pointers", [])]
                i = ev["index"]
                changed = sdks[i - 1] is not None and sdks[i] is not None and sdks[i - 1] != sdks[i]
                if shaped and all(shaped):
                    out["sdkDriven" if changed else "sdkShapedSameSdk"] += 1
                    if not changed:
                        out["serverDriven"] += 1
                elif any(shaped) and changed:
                    out["mixed"] += 1
                else:
                    out["serverDriven"] += 1
    return out


def bootstrap(rows, numerator, denominator="pairs"):
    """A 95% interval for sum(numerator)/sum(denominator) from resampling servers."""
    rows = [r for r in rows if r[denominator]]
    rng = random.Random(BOOTSTRAP_SEED)
    rates = []
    for _ in range(BOOTSTRAP_ROUNDS):
        sample = [rows[rng.randrange(len(rows))] for _ in rows]
        whole = sum(r[denominator] for r in sample)
        rates.append(100.0 * sum(r[numerator] for r in sample) / whole if whole else 0.0)
    rates.sort()
    point = 100.0 * sum(r[numerator] for r in rows) / sum(r[denominator] for r in rows) if rows else 0.0
    return {"rate": round(point, 1), "low": round(rates[int(0.025 * len(rates))], 1),
            "high": round(rates[int(0.975 * len(rates)) - 1], 1), "servers": len(rows),
            "rounds": BOOTSTRAP_ROUNDS, "seed": BOOTSTRAP_SEED}


def environment_dependent(data, index, chosen):
    """Per marker: the servers and captured releases whose catalog holds it."""
    out = {m: {"servers": [], "releases": 0} for m in ENVIRONMENT_MARKERS}
    for e in index["releases"]:
        if e["outcome"] == "failed" or (chosen and e["server"] not in chosen):
            continue
        with open(os.path.join(data, e["file"]), encoding="utf-8") as f:
            text = json.dumps(json.load(f).get("servers", {}))
        for marker, pattern in ENVIRONMENT_MARKERS.items():
            if pattern.search(text):
                out[marker]["releases"] += 1
                if e["server"] not in out[marker]["servers"]:
                    out[marker]["servers"].append(e["server"])
    return out


def output_schemas(data, index, chosen):
    """Per server, its last captured release: tools, and tools that declare outputSchema."""
    last = {}
    for e in index["releases"]:
        if e["outcome"] != "failed" and (not chosen or e["server"] in chosen):
            last[e["server"]] = e
    out = {"servers": 0, "tools": 0, "withOutputSchema": 0, "serversWithAny": []}
    for server, e in last.items():
        with open(os.path.join(data, e["file"]), encoding="utf-8") as f:
            doc = json.load(f)
        out["servers"] += 1
        declared = 0
        for s in doc.get("servers", {}).values():
            for page in s.get("toolPages", []):
                for tool in page.get("tools", []):
                    out["tools"] += 1
                    declared += isinstance(tool, dict) and "outputSchema" in tool
        out["withOutputSchema"] += declared
        if declared:
            out["serversWithAny"].append(server)
    return out
