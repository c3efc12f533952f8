#!/usr/bin/env python3
"""The result-mapping study's figures (figures.py) on hand-made records with known answers,
recomputed from the committed records.json, and as docs/experiment.md quotes them.
Run: python3 study/results/figures_test.py (CTest: result_mapping_study)."""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import figures  # noqa: E402

CALL_FACTS = {"code", "exit", "dispatched", "contentTypes", "hasStructuredContent", "keywordLocations"}
SERIES = ("newest", "firstOutputSchema")
BLOCK_TYPES = {"text", "image", "audio", "resource_link", "resource", "other"}


def tool(name, schema, call_code, types, structured, step_code):
    return {"tool": name, "outputSchema": schema,
            "call": {"code": call_code, "contentTypes": types, "hasStructuredContent": structured},
            "step": {"code": step_code}}


# One of each case the mapping has to answer.
SERVERS = [{"server": "s", "version": "1.0.0", "tools": [
    tool("valid", True, "ok", {"text": 1}, True, "ok"),
    tool("valid_with_image", True, "ok", {"text": 1, "image": 1}, True, "ok"),
    tool("invalid", True, "call.output_schema_violation", {"text": 1}, True, "call.output_schema_violation"),
    tool("schema_no_structured", True, "ok", {"text": 1}, False, "call.structured_content_missing"),
    tool("text_only", False, "ok", {"text": 2}, False, "binding.output_schema_required"),
    tool("links", False, "ok", {"text": 1, "resource_link": 3}, False, "binding.output_schema_required"),
    tool("structured_no_schema", False, "ok", {"text": 1}, True, "binding.output_schema_required"),
    tool("error", True, "call.tool_error", {"text": 1}, False, "call.tool_error"),
]}]


class FiguresTest(unittest.TestCase):
    def test_known_answers(self):
        f = figures.figures(SERVERS)
        self.assertEqual(f["tools"], 8)
        self.assertEqual(f["outputSchemaDeclared"], 5)
        self.assertEqual(f["structuredContent"], {"absent": 3, "invalid": 1, "no_schema": 1, "tool_error": 1,
                                                  "valid": 2})
        self.assertEqual(f["step"], {"binding.output_schema_required": 3, "call.output_schema_violation": 1,
                                     "call.structured_content_missing": 1, "call.tool_error": 1, "outputs": 2})
        self.assertEqual(f["contentTypes"], {"image": 1, "resource_link": 1, "text": 8})
        self.assertEqual(f["outputsBesideMedia"], 1)
        self.assertEqual(f["nothingMapped"], {"tools": 6, "textOnly": 3, "media": 1,
                                              "structuredContentWithoutSchema": 1})

    def test_a_step_lacks_the_structured_content_it_does_not_get(self):
        by_name = {t["tool"]: t for t in SERVERS[0]["tools"]}
        self.assertEqual(figures.unmapped(by_name["valid"]), ["text"])
        self.assertEqual(figures.unmapped(by_name["invalid"]), ["text", "structuredContent"])
        self.assertEqual(figures.unmapped(by_name["structured_no_schema"]), ["text", "structuredContent"])


class CommittedRecordsTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(HERE, "records.json"), encoding="utf-8") as f:
            self.records = json.load(f)

    def test_figures_recompute_from_the_records(self):
        for series in SERIES:
            self.assertEqual(figures.figures(self.records[series]["servers"]), self.records[series]["figures"])

    def test_records_hold_shapes_and_codes_only(self):
        for series in SERIES:
            for server in self.records[series]["servers"]:
                for t in server["tools"]:
                    for call in (t["call"], t["step"]):
                        self.assertLessEqual(set(call), CALL_FACTS, t["tool"])
                        self.assertLessEqual(set(call.get("contentTypes", {})), BLOCK_TYPES, t["tool"])
                        for location in call.get("keywordLocations", []):
                            self.assertTrue(location.startswith("/"), location)

    def test_every_chosen_tool_was_called(self):
        with open(os.path.join(HERE, "tools.json"), encoding="utf-8") as f:
            chosen = json.load(f)["servers"]
        wanted = [(c["name"], t["tool"]) for c in chosen for t in c["tools"]]
        got = [(s["server"], t["tool"]) for s in self.records["newest"]["servers"] for t in s["tools"]]
        self.assertEqual(got, wanted)

    def test_experiment_quotes_the_committed_figures(self):
        with open(os.path.join(HERE, "..", "..", "docs", "experiment.md"), encoding="utf-8") as f:
            text = " ".join(f.read().split())
        for figure in quoted(self.records["newest"]["figures"], self.records["firstOutputSchema"]["figures"]):
            self.assertTrue(figure in text, f"docs/experiment.md does not say {figure!r} (records.json)")


def quoted(newest, first):
    """The figures as docs/experiment.md writes them: the newest releases, then the releases
    that first declared outputSchema."""
    nothing = newest["nothingMapped"]
    return [
        f"{newest['tools']} read-only tools of {newest['servers']} servers",
        f"{newest['outputSchemaDeclared']} declare `outputSchema`",
        f"all {newest['structuredContent'].get('valid', 0)} results carry `structuredContent` that udon-mcp's "
        f"validator accepts",
        f"The other {nothing['tools']} (everything's {newest['perServer']['everything']['tools'] - 1}, dbhub's 1)",
        f"{nothing['textOnly']} of them returned text only and {nothing['media']} images, resource links or",
        f"{first['tools']} tools of {first['servers']} servers",
        f"a step gets outputs for {first['step'].get('outputs', 0)} of the {first['outputSchemaDeclared']}",
        f"{first['structuredContent'].get('invalid', 0)} results fail udon-mcp's validation",
        f"{first['structuredContent'].get('tool_error', 0)} come back `isError`",
    ]


if __name__ == "__main__":
    unittest.main()
