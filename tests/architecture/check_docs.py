#!/usr/bin/env python3
"""Keeps docs/architecture.md true to the code:

--graph FILE  the "components" Mermaid picture draws exactly the build's DEPS edges (FILE:
              one "component dependency" line per edge, written by udon_write_graph at
              configure time), except the edges to json (and to base, from any component
              but json), which every component has and the picture states once instead
              of drawing;
--rules       every `file: Function` named in the table "Where each rule of the proposal
              lives" exists: the file under src/, and a definition of that function in it.

Prints one line per discrepancy and exits 1 if there is any."""
import argparse
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_sizes  # noqa: E402  (the same reader of function definitions)

EDGE = re.compile(r"^\s*([\w-]+)\s*-->\s*([\w-]+)\s*$")
REFERENCE = re.compile(r"`([\w./-]+\.(?:cc|h)): ([~\w:]+(?:, [~\w:]+)*)`")
FRONT_ENDS = {"udon_mcp", "demo_server"}


def mermaid_block(text, marker):
    """The lines of the ```mermaid block whose first line is `%% marker`."""
    for block in re.findall(r"```mermaid\n(.*?)```", text, re.S):
        lines = block.split("\n")
        if lines and lines[0].strip() == "%% " + marker:
            return lines
    return None


def check_graph(doc, graph_file):
    problems = []
    lines = mermaid_block(doc, "components")
    if lines is None:
        return ["docs/architecture.md: no ```mermaid block starting with `%% components`"]
    drawn = set()
    for line in lines:
        m = EDGE.match(line.split("%%")[0])
        if m:
            if m.group(1) not in FRONT_ENDS and (m.group(1), m.group(2)) in drawn:
                problems.append(f"picture: {m.group(1)} --> {m.group(2)} is drawn twice")
            drawn.add((m.group(1), m.group(2)))
    built = set()
    for line in pathlib.Path(graph_file).read_text().split("\n"):
        if line.strip():
            name, dep = line.split()
            if dep != "json" and not (dep == "base" and name != "json"):
                built.add((name, dep))
    drawn_components = {(a, b) for a, b in drawn if a not in FRONT_ENDS}
    for a, b in sorted(built - drawn_components):
        problems.append(f"picture: the build has {a} --> {b}, the picture does not draw it")
    for a, b in sorted(drawn_components - built):
        problems.append(f"picture: draws {a} --> {b}, which is no DEPS edge of the build")
    return problems


def rules_section(doc):
    start = doc.find("## Where each rule of the proposal lives")
    if start < 0:
        return None
    end = doc.find("\n## ", start + 1)
    return doc[start:end if end > 0 else len(doc)]


def check_rules(doc, src):
    section = rules_section(doc)
    if section is None:
        return ["docs/architecture.md: no section 'Where each rule of the proposal lives'"]
    problems, named = [], 0
    cache = {}
    for path, names in REFERENCE.findall(section):
        file = src / path
        if not file.is_file():
            problems.append(f"rules: {path} does not exist under src/")
            continue
        if path not in cache:
            cache[path] = {name for name, _, _ in check_sizes.functions(file)}
        defined = cache[path]
        for name in names.split(", "):
            named += 1
            if name not in defined and not any(d.endswith("::" + name) for d in defined):
                problems.append(f"rules: {path} defines no {name}")
    if named == 0:
        problems.append("rules: the table names no `file: Function`")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--doc", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--graph")
    parser.add_argument("--rules", action="store_true")
    args = parser.parse_args()
    doc = pathlib.Path(args.doc).read_text(encoding="utf-8")
    problems = []
    if args.graph:
        problems += check_graph(doc, args.graph)
    if args.rules:
        problems += check_rules(doc, pathlib.Path(args.src))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
