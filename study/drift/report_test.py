#!/usr/bin/env python3
"""The drift study's aggregation (report.py) on hand-made per-server reports whose answers
are known. Run: python3 study/drift/report_test.py (CTest: drift_study_report)."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import render  # noqa: E402

RULES = report.RULES


def refused(kinds_ignored_by):
    """refusedBy for a pair: every rule refuses but those listed."""
    return {r: r not in kinds_ignored_by for r in RULES}


def pair(i, kinds, tool_kinds, version_changed, lets_through=()):
    changed = bool(kinds)
    return {"from": i, "to": i + 1, "catalogChanged": changed,
            "serverVersionChanged": version_changed, "kinds": kinds, "toolKinds": tool_kinds,
            "refusedBy": refused(lets_through) if changed else {r: False for r in RULES}}


# Four releases, three pairs:
#  0->1: one tool's description reworded (and nothing else); version unchanged: stale.
#  1->2: a tool's description and its input schema widened; version changed.
#  2->3: nothing changed; version changed.
SERIES = [{"label": v, "toolCount": 2} for v in ("1.0.0", "1.0.1", "1.1.0", "1.2.0")]
PAIRS = [
    pair(0, {"tool.description": 1}, {"tool.description": 1}, False),
    pair(1, {"tool.description": 1, "input_schema.widened": 2},
         {"tool.description": 1, "input_schema.widened": 1}, True),
    pair(2, {}, {}, True),
]
TOOLS = [
    {"name": "a", "history": [{"index": 0, "event": "added"},
                              {"index": 1, "event": "changed", "kinds": ["tool.description"]}]},
    {"name": "b", "history": [{"index": 0, "event": "added"},
                              {"index": 2, "event": "changed",
                               "kinds": ["input_schema.widened", "tool.description"]}]},
]


def rules_of(pairs):
    return [{"rule": r, "refusedPairs": sum(1 for p in pairs if p["refusedBy"][r]),
             "pairs": len(pairs)} for r in RULES]


REPORT = {"profile": "udon-mcp.drift-report.0.1", "series": SERIES, "pairs": PAIRS,
          "tools": TOOLS, "rules": rules_of(PAIRS),
          "versionIdentifiesCatalog": {"pairs": 3, "catalogChanged": 2,
                                       "catalogChangedVersionUnchanged": 1,
                                       "versionChangedCatalogUnchanged": 1}}

INDEX = {"releases": [
    {"server": "s", "package": "p", "version": v, "outcome": "captured"}
    for v in ("1.0.0", "1.0.1", "1.1.0", "1.2.0")] + [
    {"server": "s", "package": "p", "version": "0.9.0", "outcome": "failed",
     "reason": {"stage": "install", "code": "ETARGET"}},
    {"server": "t", "package": "q", "version": "2.0.0", "outcome": "nondeterministic"}]}


class AggregateTest(unittest.TestCase):
    def setUp(self):
        self.dataset = report.dataset_numbers(INDEX, set())
        self.r = report.aggregate([("s", REPORT)], self.dataset)

    def test_dataset_counts_outcomes_and_reasons(self):
        t = self.dataset["totals"]
        self.assertEqual((t["servers"], t["listed"], t["captured"], t["nondeterministic"],
                          t["failed"], t["serversWithPairs"]), (2, 6, 4, 1, 1, 1))
        self.assertEqual(self.dataset["failuresByReason"], {"install: ETARGET": 1})
        self.assertEqual(self.dataset["nondeterministic"], ["t 2.0.0"])

    def test_chosen_servers_only(self):
        t = report.dataset_numbers(INDEX, {"t"})["totals"]
        self.assertEqual((t["servers"], t["listed"]), (1, 1))

    def test_pairs_and_kinds(self):
        self.assertEqual((self.r["pairs"], self.r["catalogChangedPairs"]), (3, 2))
        self.assertEqual(self.r["kinds"]["tool.description"],
                         {"pairs": 2, "differences": 2, "tools": 2})
        self.assertEqual(self.r["kinds"]["input_schema.widened"],
                         {"pairs": 1, "differences": 2, "tools": 1})
        self.assertEqual(list(self.r["kinds"]), ["tool.description", "input_schema.widened"])

    def test_descriptions_without_schema_change(self):
        tc = self.r["toolChanges"]
        self.assertEqual((tc["toolChanges"], tc["withDescription"], tc["descriptionWithoutSchema"],
                          tc["descriptionOnly"], tc["descriptionWithSchema"], tc["withSchema"]),
                         (2, 2, 1, 1, 1, 1))
        self.assertEqual(self.r["pairsDescriptionWithoutSchema"], 1)

    def test_stale_version(self):
        v = self.r["serverVersion"]
        self.assertEqual(v["catalogChangedVersionUnchanged"], 1)
        self.assertEqual(v["stalePairs"], ["s 1.0.0 -> 1.0.1"])

    def test_relaxation_avoids_nothing_when_every_rule_refuses(self):
        rows = {x["rule"]: x for x in self.r["rules"]}
        self.assertEqual(rows["exact"]["refusedPairs"], 2)
        self.assertEqual(rows["accept_widened_input"]["avoided"], 0)

    def test_avoided_pairs_list_what_they_showed(self):
        pairs = [pair(0, {"tool.annotations.readOnlyHint": 1}, {"tool.annotations.readOnlyHint": 1},
                      True, ("ignore_annotations", "all_relaxations"))]
        rep = dict(REPORT, pairs=pairs, rules=rules_of(pairs), tools=[],
                   series=SERIES[:2])
        rows = {x["rule"]: x for x in report.aggregate([("s", rep)], self.dataset)["rules"]}
        self.assertEqual(rows["ignore_annotations"]["avoided"], 1)
        self.assertEqual(rows["ignore_annotations"]["avoidedPairsShowed"],
                         {"tool.annotations.readOnlyHint": 1})
        self.assertEqual(rows["ignore_documentation"]["avoided"], 0)

    def test_what_changed_words(self):
        w = report.what_changed
        self.assertEqual(w({"kind": "input_schema.documentation", "area": "inputSchema",
                            "pointer": "/inputSchema/properties/path/description",
                            "change": "changed"}), "inputSchema `description` changed")
        self.assertEqual(w({"kind": "tool.annotations.readOnlyHint", "change": "changed",
                            "pointer": "/annotations/readOnlyHint", "old": True, "new": False}),
                         "readOnlyHint true -> false")
        self.assertEqual(w({"kind": "tool.annotations.destructiveHint", "change": "added",
                            "pointer": "/annotations/destructiveHint", "new": True}),
                         "destructiveHint absent -> true")
        self.assertEqual(w({"kind": "tool.annotations", "change": "added", "pointer": "/annotations",
                            "new": {"readOnlyHint": True, "title": "T"}}),
                         ["readOnlyHint absent -> true"])
        self.assertEqual(render.hint_direction("readOnlyHint absent -> true"), 1)
        self.assertEqual(render.hint_direction("destructiveHint false -> true"), -1)
        self.assertEqual(render.hint_direction("destructiveHint absent -> true"), 0)
        self.assertEqual(render.hint_direction("openWorldHint absent -> false"), 1)
        self.assertEqual(w({"kind": "input_schema.widened", "change": "added",
                            "pointer": "/inputSchema/properties/force"}),
                         "input property added (optional)")
        self.assertEqual(w({"kind": "input_schema.widened", "change": "removed",
                            "pointer": "/inputSchema/required/1"}), "input `required` name dropped")
        self.assertEqual(w({"kind": "input_schema.widened", "change": "changed",
                            "pointer": "/inputSchema/properties/a/description"}),
                         "input `description` changed (beside the widening)")
        self.assertEqual(w({"kind": "input_schema.widened", "change": "added",
                            "pointer": "/inputSchema/properties/mode/enum/3"}),
                         "input `enum` values added")
        self.assertTrue(report.ignored_by("ignore_annotations", "tool.annotations.readOnlyHint"))
        self.assertFalse(report.ignored_by("ignore_documentation", "tool.description"))
        self.assertTrue(report.ignored_by("all_relaxations", "catalog.order"))

    def test_rendering_names_the_numbers_and_the_command(self):
        self.r["command"] = "study/drift/report.sh"
        md = render.markdown(self.r)
        self.assertIn("`study/drift/report.sh`", md)
        self.assertIn("| tool.description | 2 | 66.7% |", md)
        self.assertIn("[s](drift-study/s.html)", md)

    def test_selection_names_the_widening_rule_and_what_it_dropped(self):
        lines = render._selection({"rule": "r", "widening": "w",
                                   "dropped": [{"name": "n", "package": "p", "why": "y"}],
                                   "passedOver": "o"})
        self.assertIn("Widening: w.", lines)
        self.assertIn("Tried and dropped: n (`p`): y.", lines)
        self.assertIn("Passed over: o.", lines)


class GateNumbersTest(unittest.TestCase):
    """The gate's per-pair verdicts (computed by udon-mcp) added up as the report says."""

    def verdict(self, at, members=(), refused=0, rules=None):
        rules = rules or {}
        return {"refusedAt": at, "capturedProtocolVersionsDiffer": False,
                "serverInfoMembers": list(members), "toolsReviewed": 2, "toolsRefused": refused,
                "toolRefusals": {"catalog.tool_drift": refused} if refused else {},
                "serverInfoRules": {r: rules.get(r, at) for r in report.SERVER_INFO_RULE_ORDER}}

    def test_steps_and_relaxations(self):
        pairs = [dict(PAIRS[0], gate=self.verdict("catalog", refused=1)),
                 dict(PAIRS[1], gate=self.verdict("server_info", ["version"], 1,
                                                  {"ignore_version": "catalog", "name_only": "catalog",
                                                   "ignore_server_info": "catalog"})),
                 dict(PAIRS[2], gate=self.verdict("server_info", ["version"], 0,
                                                  {"ignore_version": None, "name_only": None,
                                                   "ignore_server_info": None}))]
        acc = report.new_gate_acc()
        report.gate_numbers("s", dict(REPORT, pairs=pairs), acc)
        g = report.gate_summary(acc)
        self.assertEqual(g["refusedAt"], {"protocol_version": 0, "server_info": 2, "catalog": 1, "none": 0})
        self.assertEqual(g["refusedPairs"], 3)
        self.assertEqual((g["serverInfoOnly"], g["versionOnly"]), (1, 1))
        rules = {x["rule"]: x for x in g["rules"]}
        self.assertEqual([x["rule"] for x in g["rules"]], report.SERVER_INFO_RULE_ORDER)
        self.assertEqual(rules["ignore_version"]["avoided"], 1)
        self.assertEqual(rules["ignore_version"]["letThrough"], {"serverInfo.version": 1})
        self.assertEqual(rules["ignore_display"]["avoided"], 0)


class ThreatsTest(unittest.TestCase):
    def test_sdk_shaped_pointers(self):
        import threats
        self.assertTrue(threats.sdk_shaped("/inputSchema/$schema"))
        self.assertTrue(threats.sdk_shaped("/execution/taskSupport"))
        self.assertFalse(threats.sdk_shaped("/inputSchema/properties/execution/type"))
        self.assertFalse(threats.sdk_shaped("/description"))

    def test_bootstrap_is_seeded_and_brackets_the_rate(self):
        import threats
        rows = [{"pairs": 10, "x": 9}, {"pairs": 2, "x": 0}, {"pairs": 5, "x": 3}, {"pairs": 0, "x": 0}]
        first, again = threats.bootstrap(rows, "x"), threats.bootstrap(rows, "x")
        self.assertEqual(first, again)
        self.assertEqual(first["rate"], 70.6)
        self.assertEqual(first["servers"], 3)
        self.assertLessEqual(first["low"], first["rate"])
        self.assertGreaterEqual(first["high"], first["rate"])


class CommittedFiguresTest(unittest.TestCase):
    """docs/experiment.md quotes the study's figures by hand: each quoted figure must be the
    one study/drift/report.sh committed in results.json, so the two cannot drift apart."""

    def test_experiment_quotes_the_committed_results(self):
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "results.json"), encoding="utf-8") as f:
            results = json.load(f)
        with open(os.path.join(here, "..", "..", "docs", "experiment.md"), encoding="utf-8") as f:
            text = " ".join(f.read().split())
        totals, gate = results["dataset"]["totals"], results["gate"]
        refused_rate = results["threats"]["bootstrap"]["gateRefused"]
        outputs = results["threats"]["outputSchemas"]
        pairs = gate["pairs"]
        quoted = [
            f"({totals['servers']} servers, {totals['serversWithPairs']} of them with pairs, {pairs} pairs",
            f"in {gate['refusedPairs']} of {pairs} pairs ({refused_rate['rate']}%; "
            f"{refused_rate['low']}% to {refused_rate['high']}% over servers)",
            f"the first refusal in {gate['refusedAt']['server_info']}.",
            f"In {gate['versionOnly']} pairs `serverInfo.version` alone refuses",
            f"would avoid {gate['serverInfoOnly']} refusals",
            f"survives the next release in {gate['refusedAt']['none']} of {pairs} pairs",
            f"{outputs['withOutputSchema']} of {outputs['tools']} tools (on "
            f"{len(outputs['serversWithAny'])} of {outputs['servers']} servers",
            f"differs in {gate['capturedProtocolVersionsDiffer']} pairs",
            f"only {gate['refusedAt']['protocol_version']} of them refuse",
        ]
        for figure in quoted:
            self.assertTrue(figure in text, f"docs/experiment.md does not say {figure!r} (results.json)")


if __name__ == "__main__":
    unittest.main()
