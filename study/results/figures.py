"""The result-mapping study's figures, from the per-tool records alone (measure.py writes
both; figures_test.py recomputes them from the committed records.json).

Under the current mapping (docs/contract.md, "UWS facts used" and 7.2) a UWS step's outputs
select from `$response.body`, which is the result's structuredContent once it validates
against the reviewed outputSchema; content blocks stay diagnostics. A step that declares
outputs is refused before the call when the Tool has no outputSchema, and fails when the
result has no structuredContent or it does not validate.
"""

STEP_OK = "ok"
MEDIA = ("image", "audio", "resource_link", "resource")


def validation(tool):
    """What udon-mcp's validator made of the plain call's structuredContent."""
    call = tool["call"]
    if call["code"] == "call.tool_error":
        return "tool_error"
    if not call.get("hasStructuredContent"):
        return "absent"
    if not tool["outputSchema"]:
        return "no_schema"
    return "valid" if call["code"] == "ok" else "invalid"


def step_outcome(tool):
    """What a UWS step that declares outputs gets: 'outputs' (the validated structuredContent)
    or the code that ends it."""
    code = tool["step"]["code"]
    return "outputs" if code == STEP_OK else code


def unmapped(tool):
    """What the result carried that the mapping does not put in the step's outputs: every
    content block (by type; a block may also stand, copied, inside structuredContent, as
    filesystem's read_media_file declares), and the structuredContent itself when the step
    does not get it."""
    what = sorted(tool["call"].get("contentTypes", {}))
    if tool["call"].get("hasStructuredContent") and step_outcome(tool) != "outputs":
        what.append("structuredContent")
    return what


def count(values):
    out = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def figures(servers):
    tools = [t for s in servers for t in s["tools"]]
    with_outputs = [t for t in tools if step_outcome(t) == "outputs"]
    without = [t for t in tools if step_outcome(t) != "outputs"]
    return {
        "servers": len(servers),
        "tools": len(tools),
        "outputSchemaDeclared": sum(1 for t in tools if t["outputSchema"]),
        "callCodes": count(t["call"]["code"] for t in tools),
        "structuredContent": count(validation(t) for t in tools),
        "step": count(step_outcome(t) for t in tools),
        # Tools whose result carried a block of this type (each tool once per type).
        "contentTypes": count(k for t in tools for k in t["call"].get("contentTypes", {})),
        # Steps that get outputs from a result whose content also carried media or links.
        "outputsBesideMedia": sum(1 for t in with_outputs if set(unmapped(t)) & set(MEDIA)),
        # Steps that get nothing: what their results carried, by kind of loss.
        "nothingMapped": {
            "tools": len(without),
            "textOnly": sum(1 for t in without if unmapped(t) == ["text"]),
            "media": sum(1 for t in without if set(unmapped(t)) & set(MEDIA)),
            "structuredContentWithoutSchema": sum(1 for t in without if validation(t) == "no_schema"),
        },
        "perServer": {s["server"]: {"version": s["version"], "tools": len(s["tools"]),
                                    "outputSchemaDeclared": sum(1 for t in s["tools"] if t["outputSchema"]),
                                    "stepOutputs": sum(1 for t in s["tools"] if step_outcome(t) == "outputs")}
                      for s in servers},
    }
