"""Real examples for the drift study's report (report.py calls these): per drift kind, a few
pairs of real releases that show it. Descriptions come from `udon-mcp evidence drift --show`,
escaped there as `review --show` escapes them (json::ForDisplay); nothing here escapes text a
second way. Other kinds show the tool and the pointers only, never values.
Choice is deterministic: the same data give the same examples.
"""
import json
import subprocess

EXCERPT = 240  # characters of a description kept at each end
PER_KIND = 3
# Words that announce a warning added to a description.
WARNING_WORDS = ("IMPORTANT", "WARNING", "CRITICAL", "NEVER", "Do not", "do not", "must not")


def shown_report(udon, directory):
    out = subprocess.run([udon, "evidence", "drift", directory, "--show", "--json"],
                         capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else {}


def excerpt(text):
    if text is None:
        return None
    if len(text) <= 2 * EXCERPT:
        return text
    return "%s … [%d characters left out] … %s" % (text[:EXCERPT], len(text) - 2 * EXCERPT, text[-EXCERPT:])


def description_examples(udon, servers):
    """The description change that cut the most text, the one that added the most, and the
    first that added a warning."""
    changes = []
    for name, directory in servers:
        rep = shown_report(udon, directory)
        labels = [s["label"] for s in rep.get("series", [])]
        for p in rep.get("pairs", []):
            for d in p.get("descriptions", []):
                before, after = d.get("before") or "", d.get("after") or ""
                changes.append({"server": name, "from": labels[p["from"]], "to": labels[p["to"]],
                                "tool": d["tool"], "beforeChars": len(before), "afterChars": len(after),
                                "before": before, "after": after})
    picks = []
    if changes:
        picks.append(("cut", min(changes, key=lambda c: c["afterChars"] - c["beforeChars"])))
        picks.append(("grew", max(changes, key=lambda c: c["afterChars"] - c["beforeChars"])))
        warned = [c for c in changes if any(w in c["after"] and w not in c["before"] for w in WARNING_WORDS)]
        if warned:
            picks.append(("warning added", warned[0]))
    return [dict(c, why=why, before=excerpt(c["before"]), after=excerpt(c["after"])) for why, c in picks]


def kind_examples(reports, kinds):
    """For each kind, the first PER_KIND tool changes showing it: tool and pointers."""
    out = {}
    for kind in kinds:
        found = []
        for name, report in reports:
            labels = [s["label"] for s in report.get("series", [])]
            for tool in report.get("tools", []):
                for ev in tool.get("history", []):
                    if ev.get("event") == "changed" and kind in ev.get("kinds", []) and len(found) < PER_KIND:
                        found.append({"server": name, "from": labels[ev["index"] - 1], "to": labels[ev["index"]],
                                      "tool": tool["name"], "pointers": ev.get("pointers", [])[:4]})
        if found:
            out[kind] = found
    return out
