#!/usr/bin/env python3
"""Keeps the source tree readable (docs/architecture.md, "Sizes"): no source file over
--max-file-lines lines and no function body over --max-function-lines lines, outside the
exemptions named in --allow (FILE:FUNCTION, the schema compiler's and validator's
keyword-dispatch functions).

A function is found the way a reader finds one: a brace at namespace or class scope whose
head (the text since the previous `;`, `{` or `}`) ends in a parameter list, possibly
followed by qualifiers, a trailing return type or a constructor's initializer list.
Comments, string and character literals (raw strings too) and preprocessor lines are
blanked first, so braces inside them do not count. Lambdas and local classes count as part
of the function that holds them.

Prints one line per breach and exits 1 if there is any; with --report, prints the longest
functions too."""
import argparse
import pathlib
import re
import sys

CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*(\(|$)")
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b")
# `X::X(args) : a_(b), c_` right before a `{`: a member initialized with braces.
INIT_BRACE = re.compile(r"\)\s*(noexcept\s*)?(?<!:):(?!:)[^;{}]*[\w>]\s*$")


def blank(text):
    """Replaces comments, literals and preprocessor lines with spaces, keeping newlines."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    out.append(" \n")
                    j += 2
                    continue
                out.append(" ")
                j += 1
            i = j
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.compile(r'R"([^(\s]{0,16})\(').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"')
            i = j
            continue
        if c in "\"'":
            # A digit separator (1'000) is no character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + c)
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def function_name(head):
    """The qualified name before the parameter list of a function head, or None."""
    head = " ".join(head.split())
    if not head or "=" in head.split("(")[0] or SCOPE.search(head.split("(")[0]):
        return None
    if CONTROL.search(head):
        return None
    # Strip a constructor's initializer list: `X::X(args) : a_(b), c_{d}`.
    depth, cut = 0, len(head)
    for k, ch in enumerate(head):
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        elif ch == ":" and depth == 0 and head[k - 1:k + 1] != "::" and head[k:k + 2] != "::":
            if ")" in head[:k]:
                cut = k
                break
    head = head[:cut].rstrip()
    head = re.sub(r"(\s*(const|noexcept(\([^)]*\))?|override|final|mutable|&&|&|->\s*[\w:<>,\s*&]+))+$", "", head)
    if not head.endswith(")"):
        return None
    depth = 0
    for k in range(len(head) - 1, -1, -1):
        if head[k] == ")":
            depth += 1
        elif head[k] == "(":
            depth -= 1
            if depth == 0:
                m = re.search(r"((?:[\w~]+(?:<[^()]*>)?::)*(?:operator\s*\S+?|[\w~]+))\s*$", head[:k])
                return m.group(1) if m else None
    return None


def functions(path):
    """(name, first line, line count) of every function body in one file."""
    text = blank(path.read_text(encoding="utf-8", errors="replace"))
    found = []
    stack = []  # per open brace: "scope", "function" or "block"
    head_start = 0
    line = 1
    starts = {}
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            in_function = any(kind == "function" for kind in stack)
            kind = "block"
            if not in_function and INIT_BRACE.search(" ".join(text[head_start:i].split())):
                # A member's brace initializer in a constructor's initializer list, `b_{a}`:
                # the head goes on to the constructor's body.
                stack.append("init")
                continue
            if not in_function:
                name = function_name(text[head_start:i])
                if name:
                    kind = "function"
                    starts[len(stack)] = (name, line)
                elif SCOPE.search(text[head_start:i]) or text[head_start:i].strip().startswith("extern"):
                    kind = "scope"
            stack.append(kind)
            head_start = i + 1
        elif ch == "}":
            kind = stack.pop() if stack else "block"
            if kind == "init":
                continue
            if kind == "function":
                name, first = starts.pop(len(stack))
                found.append((name, first, line - first + 1))
            head_start = i + 1
        elif ch == ";":
            head_start = i + 1
    return found


def self_test():
    """The reader on made-up sources whose answers are known; returns the failures."""
    import tempfile
    long_body = "\n".join(f"  int v{i} = {i};" for i in range(99))
    sources = {
        "long.cc": "namespace x {\nint Long() {\n" + long_body + "\n}\n}  // namespace x\n",
        "ok.cc": "int Fine() {\n" + "\n".join(f"  f({i});" for i in range(97)) + "\n}\n",
        "tricky.cc": ('struct S {\n  void M() const {\n    auto f = [] { return "}}}"; };\n'
                      "    // }\n    char c = '}';\n  }\n};\n"
                      'int T() { const char* r = R"x(})x"; return 1\'000; }\n'
                      "Klass::Klass(int a) : a_(a), b_{a} {\n  Run();\n}\n"),
        "big.h": "\n" * 1001,
    }
    expected = {"long.cc": [("Long", 2, 101)], "ok.cc": [("Fine", 1, 99)],
                "tricky.cc": [("M", 2, 5), ("T", 8, 1), ("Klass::Klass", 9, 3)], "big.h": []}
    failures = []
    with tempfile.TemporaryDirectory() as directory:
        for name, text in sources.items():
            path = pathlib.Path(directory) / name
            path.write_text(text)
            got = functions(path)
            if got != expected[name]:
                failures.append(f"self-test: {name}: read {got}, expected {expected[name]}")
    return failures


def main():
    if sys.argv[1:] == ["--self-test"]:
        failures = self_test()
        for failure in failures:
            print(failure)
        return 1 if failures else 0
    parser = argparse.ArgumentParser()
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--max-file-lines", type=int, default=1000)
    parser.add_argument("--max-function-lines", type=int, default=100)
    parser.add_argument("--allow", action="append", default=[], help="FILE:FUNCTION exempt")
    parser.add_argument("--report", type=int, default=0, help="also print the N longest")
    args = parser.parse_args()
    breaches, everything = [], []
    for root in args.roots:
        root_path = pathlib.Path(root)
        for path in sorted(root_path.rglob("*")):
            if path.suffix not in (".cc", ".h") or not path.is_file():
                continue
            rel = path.relative_to(root_path.parent).as_posix()
            lines = path.read_text(encoding="utf-8", errors="replace").count("\n")
            if lines > args.max_file_lines:
                breaches.append(f"{rel}: {lines} lines (at most {args.max_file_lines})")
            for name, first, count in functions(path):
                everything.append((count, f"{rel}:{first}: {name}"))
                allowed = any(rel.endswith(a.split(":")[0]) and name.split("::")[-1] == a.split(":")[1]
                              for a in args.allow)
                if count > args.max_function_lines and not allowed:
                    breaches.append(f"{rel}:{first}: {name} is {count} lines (at most {args.max_function_lines})")
    if args.report:
        for count, where in sorted(everything, reverse=True)[:args.report]:
            print(f"{count:5d} {where}")
    for breach in breaches:
        print(breach)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
