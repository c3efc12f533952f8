"""Renders the drift study's numbers (report.py) as docs/drift-study.md. Its HTML pages, one
per server, are `udon-mcp evidence drift`'s own (report.py writes them): one renderer.

Every number printed comes from the results document; the prose of the conclusions is
study/drift/conclusions.md, whose {placeholders} are filled from the same numbers.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def pct(part, whole):
    return "%.1f%%" % (100.0 * part / whole) if whole else "n/a"


def numbers(r):
    """The flat set of numbers conclusions.md may name."""
    d = r["dataset"]["totals"]
    t = r["toolChanges"]
    v = r["serverVersion"]
    rules = {x["rule"]: x for x in r["rules"]}
    n = {
        "servers": d["servers"], "listed": d["listed"], "captured": d["captured"],
        "nondeterministic": d["nondeterministic"], "failed": d["failed"],
        "pairs": r["pairs"], "changed": r["catalogChangedPairs"],
        "changed_pct": pct(r["catalogChangedPairs"], r["pairs"]),
        "tool_changes": t["toolChanges"], "desc_changes": t["withDescription"],
        "desc_no_schema": t["descriptionWithoutSchema"],
        "desc_no_schema_pct": pct(t["descriptionWithoutSchema"], t["withDescription"]),
        "desc_only": t["descriptionOnly"], "schema_changes": t["withSchema"],
        "pairs_desc_no_schema": r["pairsDescriptionWithoutSchema"],
        "version_stale": v["catalogChangedVersionUnchanged"],
        "version_stale_pct": pct(v["catalogChangedVersionUnchanged"], v["catalogChanged"]),
        "version_changed_catalog_same": v["versionChangedCatalogUnchanged"],
    }
    n.update(gate_numbers(r.get("gate")))
    n["legacy_2024"] = r["dataset"].get("protocolVersions", {}).get("2024-11-05", 0)
    exact = rules["exact"]["refusedPairs"]
    n["exact"] = exact
    for name, row in rules.items():
        n["refused_" + name] = row["refusedPairs"]
        n["avoided_" + name] = row["avoided"]
        n["avoided_pct_" + name] = pct(row["avoided"], exact)
    for kind, k in r["kinds"].items():
        n["kind_pairs_" + kind.replace(".", "_")] = k["pairs"]
    tool_level = [(k, v["pairs"]) for k, v in r["kinds"].items()
                  if k.startswith(("tool.", "input_schema.", "output_schema.", "catalog."))]
    if tool_level:
        n["top_tool_kind"], n["top_tool_kind_pairs"] = tool_level[0]
    changes = {x["rule"]: x["avoidedChanges"] for x in r["rules"]}
    hints = [(what, c) for what, c in changes.get("ignore_annotations", {}).items() if "Hint " in what]
    n["hint_changes"] = sum(c for _, c in hints)
    n["default_hints"] = sum(c for what, c in hints if restates_default(what))
    n["prompt_text_only"] = r.get("pairsPromptTextOnly", 0)
    n["prompt_text_only_pct"] = pct(n["prompt_text_only"], r["catalogChangedPairs"])
    n["less_safe_hints"] = sum(c for what, c in hints if hint_direction(what) < 0)
    n["more_safe_hints"] = sum(c for what, c in hints if hint_direction(what) > 0)
    n["new_optional_params"] = changes.get("accept_widened_input", {}).get(
        "input property added (optional)", 0)
    n["doc_descriptions"] = sum(c for what, c in changes.get("ignore_documentation", {}).items()
                                if "`description`" in what)
    n["doc_changes"] = sum(changes.get("ignore_documentation", {}).values())
    return n


def gate_numbers(g):
    """The gate's figures conclusions.md may name (report.py's gate summary)."""
    if not g or not g.get("pairs"):
        return {}
    at = g["refusedAt"]
    rules = {x["rule"]: x for x in g["rules"]}
    n = {"gate_refused": g["refusedPairs"], "gate_refused_pct": pct(g["refusedPairs"], g["pairs"]),
         "gate_at_protocol": at["protocol_version"], "gate_at_server_info": at["server_info"],
         "gate_at_catalog": at["catalog"], "gate_passed": at["none"],
         "gate_protocol_differ": g["capturedProtocolVersionsDiffer"],
         "gate_server_info_only": g["serverInfoOnly"], "gate_version_only": g["versionOnly"],
         "gate_tools": g["toolsReviewed"], "gate_tools_refused": g["toolsRefused"],
         "gate_tools_refused_pct": pct(g["toolsRefused"], g["toolsReviewed"]),
         "gate_catalog_changed_no_tool": g["catalogChangedNoToolRefused"],
         "gate_version_member": g["serverInfoMembers"].get("version", 0)}
    for name, row in rules.items():
        n["gate_refused_" + name] = row["refusedPairs"]
        n["gate_avoided_" + name] = row["avoided"]
    return n


# MCP's defaults for an absent hint, and the value that claims the safer behaviour.
HINT_DEFAULT = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                "openWorldHint": True}
HINT_SAFE = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
             "openWorldHint": False}


def hint_direction(what):
    """+1: the change claims safer behaviour than before (absent = MCP's default); -1: less
    safe; 0: neither (same effective value, or not a hint)."""
    try:
        hint, old, _, new = what.split(" ")
    except ValueError:
        return 0
    if hint not in HINT_DEFAULT:
        return 0
    before = HINT_DEFAULT[hint] if old == "absent" else old == "true"
    after = HINT_DEFAULT[hint] if new == "absent" else new == "true"
    if before == after:
        return 0
    return 1 if after == HINT_SAFE[hint] else -1


def restates_default(what):
    """A hint set, where it was absent, to the value MCP assumes when it is absent."""
    try:
        hint, old, _, new = what.split(" ")
    except ValueError:
        return False
    return hint in HINT_DEFAULT and old == "absent" and new == json_bool(HINT_DEFAULT[hint])


def json_bool(value):
    return "true" if value else "false"


class _Default(dict):
    def __missing__(self, key):
        return "0"


def conclusions(r):
    path = os.path.join(HERE, "conclusions.md")
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8") as f:
        return f.read().format_map(_Default(numbers(r)))


CHART_DIR = "drift-study"


def chart_specs(r):
    """The report's figures as `udon-mcp evidence chart` descriptions, by file name (without
    .svg): the SVGs beside docs/drift-study.md are drawn by udon-mcp's own chart code."""
    specs = {
        "change-rate": {
            "title": "Pairs whose catalog changed, per server (%s of %d pairs)"
                     % (pct(r["catalogChangedPairs"], r["pairs"]), r["pairs"]),
            "maximum": 100,
            "bars": [{"label": s["server"], "value": round(100.0 * s["catalogChanged"] / s["pairs"], 1),
                      "text": "%s (%d of %d)" % (pct(s["catalogChanged"], s["pairs"]), s["catalogChanged"], s["pairs"])}
                     for s in r["servers"] if s["pairs"]]},
        "kinds": {
            "title": "Pairs showing each kind of change (of %d pairs)" % r["pairs"],
            "maximum": r["pairs"],
            "bars": [{"label": k, "value": v["pairs"], "text": "%d (%s)" % (v["pairs"], pct(v["pairs"], r["pairs"])),
                      "alert": k.startswith("server.")} for k, v in r["kinds"].items()]},
    }
    g = r.get("gate")
    if g and g.get("pairs"):
        at = g["refusedAt"]
        steps = [("3 protocol version", at["protocol_version"], True), ("3 serverInfo", at["server_info"], True),
                 ("4-5 reviewed tool", at["catalog"], True), ("none (passes)", at["none"], False)]
        specs["gate-steps"] = {
            "title": "The gate's first refusing step (of %d pairs)" % g["pairs"], "maximum": g["pairs"],
            "bars": [{"label": label, "value": n, "text": "%d (%s)" % (n, pct(n, g["pairs"])), "alert": alert}
                     for label, n, alert in steps]}
        specs["gate-relaxations"] = {
            "title": "Pairs the gate still refuses, per serverInfo relaxation (of %d)" % g["pairs"],
            "maximum": g["pairs"],
            "bars": [{"label": x["rule"], "value": x["refusedPairs"],
                      "text": "%d (avoids %d)" % (x["refusedPairs"], x["avoided"])} for x in g["rules"]]}
    return specs


# The section each figure is shown in.
CHART_SECTIONS = {"How often the catalog changes between releases": "change-rate", "Which kinds": "kinds",
                  "What the gate refuses, step by step": "gate-steps",
                  "Relaxing the serverInfo comparison": "gate-relaxations"}


def _figure(heading, r):
    name = CHART_SECTIONS.get(heading)
    spec = chart_specs(r).get(name) if name else None
    if not spec:
        return ""
    return "![%s](%s/%s.svg)\n\n" % (spec["title"], CHART_DIR, name)


def _selection(selection):
    lines = []
    if selection.get("rule"):
        lines += ["", "Selection: " + selection["rule"] + "."]
    if selection.get("weeklyDownloads"):
        lines += ["", "Weekly downloads at selection: " + selection["weeklyDownloads"] + "."]
    if selection.get("widening"):
        lines += ["", "Widening: " + selection["widening"] + "."]
    # Servers tried under the widening rule and left out, so the rule can be checked.
    dropped = selection.get("dropped", [])
    if dropped:
        lines += ["", "Tried and dropped: " + "; ".join(
            "%s (`%s`): %s" % (d["name"], d["package"], d["why"]) for d in dropped) + "."]
    if selection.get("passedOver"):
        lines += ["", "Passed over: " + selection["passedOver"] + "."]
    return lines


def _releases(versions):
    return versions[0] if len(versions) == 1 else "%s to %s (%d)" % (versions[0], versions[-1], len(versions))


def sections(r):
    """The report as a list of (heading, intro lines, table header, table rows)."""
    d = r["dataset"]
    t = d["totals"]
    out = []
    rows = [[name, s["package"], s["listed"], s["captured"], s["nondeterministic"], s["failed"]]
            for name, s in d["byServer"].items()]
    out.append(("The dataset", [
        "%d servers, %d releases listed, %d captured, %d of them flagged nondeterministic "
        "(two captures of the same install differed), %d could not be captured."
        % (t["servers"], t["listed"], t["captured"] + t["nondeterministic"],
           t["nondeterministic"], t["failed"])] + _selection(d.get("selection", {})),
        ["server", "package", "releases", "captured", "nondeterministic", "failed"], rows))
    out.append(("Why releases could not be captured", [
        "Stage and stable code of each failure (data/index.json holds each release's reason)."],
        ["reason", "releases"], [[k, v] for k, v in d["failuresByReason"].items()]))
    out.append(("What happened to each release that could not be captured", [
        "From each release's recorded reason (data/index.json): the explanation capture.py "
        "recognised in the server's stderr (`cause`), else the line of it that says most "
        "(`hint`), paths replaced by `<path>`."],
        ["server", "releases", "reason", "what happened"],
        [[f["server"], _releases(f["releases"]), f["reason"], f["what"]] for f in d.get("failures", [])]))
    srows = [["[%s](drift-study/%s.html)" % (s["server"], s["server"]), s["releases"], s["pairs"], s["catalogChanged"],
              pct(s["catalogChanged"], s["pairs"]), s["catalogChangedVersionUnchanged"], s.get("gateRefused", 0)] for s in r["servers"]]
    out.append(("How often the catalog changes between releases", [
        "A pair is two consecutive captured releases of one server: consecutive among the "
        "stable releases the registry serves and servers.json lists (at most the last 25; a "
        "release that could not be captured is skipped, so its neighbours form the pair), in "
        "semantic-version order, derived from the versions only; where a list departs from it "
        "(filesystem's 2.0.1 and 2.3.0 close its series), servers.json's `orderDeparture` says "
        "why. %d pairs, %d with a "
        "catalog change (%s)." % (r["pairs"], r["catalogChangedPairs"],
                                  pct(r["catalogChangedPairs"], r["pairs"]))],
        ["server", "releases", "pairs", "catalog changed", "share", "version unchanged",
         "gate refuses"], srows))
    krows = [[k, v["pairs"], pct(v["pairs"], r["pairs"]), v["tools"], v["differences"]] for k, v in r["kinds"].items()]
    out.append(("Which kinds", [
        "Kinds as `udon-mcp diff` names them (docs/contract.md 7.19). pairs: pairs showing "
        "the kind; tools: tool changes showing it; differences: pointers."],
        ["kind", "pairs", "of all pairs", "tools", "differences"], krows))
    tc = r["toolChanges"]
    out.append(("Descriptions without schema changes", [
        "A tool change is one tool changed between the two releases of a pair."],
        ["measure", "count"],
        [["tool changes", tc["toolChanges"]],
         ["with a description change", tc["withDescription"]],
         ["  of which without any inputSchema/outputSchema change", tc["descriptionWithoutSchema"]],
         ["  of which the description is the only change", tc["descriptionOnly"]],
         ["  of which with a schema change too", tc["descriptionWithSchema"]],
         ["with a schema change", tc["withSchema"]],
         ["pairs whose tools changed descriptions but no schema", r["pairsDescriptionWithoutSchema"]],
         ["pairs whose catalog changed only in text the model reads (tool description or "
          "title, schema documentation keywords)", r.get("pairsPromptTextOnly", 0)]]))
    v = r["serverVersion"]
    out.append(("Does serverInfo.version identify the catalog?", [
        "Stale: the catalog changed and serverInfo.version did not."],
        ["measure", "pairs"],
        [["pairs", v["pairs"]], ["catalog changed", v["catalogChanged"]],
         ["catalog changed, version unchanged (stale)", v["catalogChangedVersionUnchanged"]],
         ["version changed, catalog unchanged", v["versionChangedCatalogUnchanged"]]]
        + [["stale in " + name, ", ".join(pairs)] for name, pairs in _by_server(v["stalePairs"])]))
    out += gate_sections(r)
    out += threat_sections(r)
    rrows = [[x["rule"], x["ignores"], x["refusedPairs"], x["avoided"],
              pct(x["avoided"], r["rules"][0]["refusedPairs"]),
              ", ".join("%s %d" % kv for kv in x["avoidedPairsShowed"].items())]
             for x in r["rules"]]
    out.append(("The rule table: refusals each relaxation would have avoided", [
        "The whole-catalog rules, which compare Tool objects only (not serverInfo or the "
        "protocol version, and the whole catalog rather than the called tool: the gate's own "
        "verdicts are the tables above). refused: pairs the rule refuses; avoided: refusals "
        "of the exact rule the relaxation "
        "lifts; the last column lists the kinds present in the pairs it would have let "
        "through (pairs showing each), which a reviewer would then not see."],
        ["rule", "ignores", "refused", "avoided", "of exact", "kinds in the avoided pairs"],
        rrows))
    crow = [[x["rule"], "; ".join("%s: %d" % kv for kv in x["avoidedChanges"].items()) or "-"]
            for x in r["rules"][1:]]
    out.append(("What the avoided refusals changed", [
        "For each relaxation, the differences of the kinds it ignores in the pairs it would "
        "have let through, from `udon-mcp diff --json` of each such pair (count of "
        "differences): what a reviewer would no longer be shown."],
        ["rule", "changes let through"], crow))
    return out


def gate_sections(r):
    """What the gate itself refuses: the first step that refuses, per pair, and what each
    serverInfo relaxation would have let through."""
    g = r.get("gate")
    if not g or not g.get("pairs"):
        return []
    at = g["refusedAt"]
    steps = [["3 protocol version", at["protocol_version"], pct(at["protocol_version"], g["pairs"])],
             ["3 serverInfo", at["server_info"], pct(at["server_info"], g["pairs"])],
             ["4-5 a reviewed tool missing or changed", at["catalog"], pct(at["catalog"], g["pairs"])],
             ["none: every reviewed tool's call goes through", at["none"], pct(at["none"], g["pairs"])]]
    members = [["serverInfo." + m, c] for m, c in g["serverInfoMembers"].items()]
    tools = [["reviewed tools (all pairs)", g["toolsReviewed"]],
             ["refused by steps 4-5 (were step 3 to pass)", g["toolsRefused"]]] + \
            [["  " + code, c] for code, c in g["toolRefusals"].items()] + \
            [["pairs whose catalog changed but no reviewed tool did (order, additions)",
              g["catalogChangedNoToolRefused"]],
             ["pairs refused by serverInfo alone (no reviewed tool changed)", g["serverInfoOnly"]],
             ["  of which serverInfo.version is the only difference", g["versionOnly"]],
             ["pairs whose captured protocol versions differ", g["capturedProtocolVersionsDiffer"]]]
    rows = [[x["rule"], x["ignores"], x["refusedPairs"], x["avoided"], pct(x["avoided"], g["refusedPairs"]),
             "; ".join("%s %d" % kv for kv in x["letThrough"].items()) or "-"] for x in g["rules"]]
    return [
        ("What the gate refuses, step by step", [
            "A manifest reviewed (captured) for one release, with the next release as the live "
            "server: the step of the gate (src/gate/gate.h) that refuses first. The comparisons "
            "are the gate's own functions (src/gate/comparison.h), called by `udon-mcp evidence "
            "drift` on the later capture. Step 3 refuses every call on a different negotiated "
            "protocol version or serverInfo; steps 4-5 refuse the calls of reviewed tools that "
            "are missing, duplicated or changed, and nothing else (an added tool or a new order "
            "refuses no reviewed call). The gate asks for the reviewed protocol revision; a "
            "release is taken to answer it when its own newest revision is the same or newer "
            "(as the MCP SDKs do), so captured revisions that differ refuse only when the later "
            "release's is older."],
            ["first refusing step", "pairs", "of all pairs"], steps),
        ("Which serverInfo members differ", [
            "Pairs in which each member of serverInfo differs (several per pair possible)."],
            ["member", "pairs"], members),
        ("Tools and the gate's catalog steps", [
            "Per reviewed tool of the older release: what steps 4 and 5 decide with the newer "
            "release live."], ["measure", "count"], tools),
        ("Relaxing the serverInfo comparison", [
            "Each row drops serverInfo members from both sides before the gate's own step-3 "
            "comparison; refused: pairs the gate still refuses at any step; let through: the "
            "serverInfo members that differed in the pairs the relaxation lets through "
            "(pairs showing each), which nobody would then see."],
            ["rule", "ignores", "refused", "avoided", "of the gate's", "let through"], rows)]


def threat_sections(r):
    t = r.get("threats")
    if not t:
        return []
    sdk = t["sdk"]
    b = t["bootstrap"]
    ci = [[what, x["rate"], "%s%% to %s%%" % (x["low"], x["high"]), x["servers"]]
          for what, x in (("catalog changed (whole catalog)", b["catalogChanged"]),
                          ("the gate refuses", b["gateRefused"]))]
    env = [[marker, ", ".join(x["servers"]) or "-", x["releases"]] for marker, x in t["environment"].items()]
    return [
        ("Threats to validity: headline rates over servers", [
            "Pairs are not independent: a few servers give most of them. A 95%% interval from a "
            "bootstrap over servers (servers resampled with replacement, %d rounds, seed %d; "
            "the rate is pairs over pairs of the resampled servers): the same data give the "
            "same interval." % (b["gateRefused"]["rounds"], b["gateRefused"]["seed"])],
            ["rate (% of pairs)", "point", "95% interval", "servers"], ci),
        ("Threats to validity: SDK-driven and server-driven changes", [
            "A release installed today resolves its dependency ranges today, so releases with "
            "a ranged SDK dependency are captured with the same, newest SDK, and releases that "
            "pin it with their own. From each install's committed lock file: a tool change "
            "whose every pointer is a member the TypeScript SDK writes (`$schema`, "
            "`execution`) between installs whose SDK versions differ is the SDK's; one with "
            "some such pointers is mixed; the rest are the server's. Releases that bundle the "
            "SDK (no SDK in the lock file) count as unknown SDK, so as server-driven."],
            ["measure", "count"],
            [["tool changes", sdk["toolChanges"]], ["SDK-driven", sdk["sdkDriven"]],
             ["mixed", sdk["mixed"]], ["server-driven", sdk["serverDriven"]],
             ["  of which SDK-shaped with the same SDK", sdk["sdkShapedSameSdk"]],
             ["pairs", sdk["pairs"]], ["pairs whose installs' SDK versions differ", sdk["pairsSdkChanged"]],
             ["pairs with an SDK version unknown (bundled, or no lock file)", sdk["pairsSdkUnknown"]]]),
        ("Threats to validity: catalogs that depend on where they run", [
            "Captured releases whose catalog holds the study's start directory, the operating "
            "system or the shell (study/drift/threats.py names the patterns). Such a catalog "
            "differs from machine to machine, so its manifest is only valid where it was "
            "captured: a fact Stage 2's identity rules must face."],
            ["what the catalog holds", "servers", "captured releases"], env),
        ("Result mapping: declared output schemas", [
            "Each server's last captured release: how many tools declare `outputSchema` (what a "
            "UWS step can map a structured result by). Whether results validate needs calls, "
            "which the study does not make."],
            ["measure", "count"],
            [["servers", t["outputSchemas"]["servers"]], ["tools", t["outputSchemas"]["tools"]],
             ["tools declaring outputSchema", t["outputSchemas"]["withOutputSchema"]],
             ["servers with any", ", ".join(t["outputSchemas"]["serversWithAny"]) or "-"]])]


def _by_server(pairs):
    """"server a -> b" strings grouped by server, in their order."""
    groups = {}
    for p in pairs:
        name, rest = p.split(" ", 1)
        groups.setdefault(name, []).append(rest.replace(" -> ", " → "))
    return list(groups.items())


def _md_table(header, rows):
    esc = lambda c: str(c).replace("|", "\\|")
    lines = ["| " + " | ".join(esc(h) for h in header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


HEAD = ("# What drifts in real MCP servers, release by release\n\n"
        "Generated by `{command}` from the committed captures in study/drift/data "
        "(study/drift/README.md says how they were made and how to rebuild them). "
        "Do not edit: run the command again. The figures are SVG files in drift-study/, drawn by "
        "`udon-mcp evidence chart`; each server's page, drift-study/SERVER.html, is written by "
        "`udon-mcp evidence drift` (linked from the table of servers).\n")


EXAMPLES_INTRO = ("Real changes from the committed captures. Descriptions as `udon-mcp evidence drift "
                  "--show` gives them, escaped as `review --show` escapes them, long ones cut in the "
                  "middle; other kinds by tool and pointer (up to four).")


def _indented(text):
    """An indented Markdown code block: nothing inside is read as Markdown."""
    return "\n".join("    " + line for line in (text or "(none)").split("\n"))


def markdown_examples(r):
    e = r.get("examples")
    if not e:
        return ""
    out = ["## Examples\n\n" + EXAMPLES_INTRO + "\n"]
    for d in e["descriptions"]:
        out.append("**`tool.description`, %s** (%s %s → %s, `%s`, %d → %d characters). Before:\n\n%s\n\nAfter:\n\n%s\n"
                   % (d["why"], d["server"], d["from"], d["to"], d["tool"].replace("`", "'"),
                      d["beforeChars"], d["afterChars"], _indented(d["before"]), _indented(d["after"])))
    rows = [[kind, "%s %s → %s" % (x["server"], x["from"], x["to"]), x["tool"], ", ".join(x["pointers"])]
            for kind, xs in e["kinds"].items() for x in xs]
    out.append(_md_table(["kind", "release pair", "tool", "pointers"], rows) + "\n")
    return "\n".join(out)


def markdown(r):
    parts = [HEAD.format(command=r["command"])]
    text = conclusions(r)
    if text:
        parts.append(text.rstrip() + "\n")
    for heading, intro, header, rows in sections(r):
        parts.append("## %s\n\n%s\n\n%s%s\n" % (heading, "\n".join(intro), _figure(heading, r), _md_table(header, rows)))
    examples = markdown_examples(r)
    if examples:
        parts.append(examples)
    return "\n".join(parts)
