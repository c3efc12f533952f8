#!/usr/bin/env python3
"""Keeps the repository standing on its own (issue 37):

--citations  every citation of a contract section names a heading of docs/contract.md:
             "contract 7.3", "contract.md 7.3", "contract's 1.4", "contract section(s) 1.4,
             7.7 and 7.8", "[docs/contract.md](docs/contract.md) section 7.16" in the tracked
             files of src/, tests/, docs/, scripts/, fuzz/, cmake/ and README.md, and inside
             docs/contract.md the bare cross-references "(7.5)", "(`recheck`, 7.5)",
             "(1.5, 7.3)" and "section 7.4". A heading is "## N." or "### N.M ...".
--no-adjacent-folder
             no tracked file names the reference folder that some machines keep beside the
             checkout (two dots, a slash, "shared"), except scripts/testdata.sh, the one
             place that looks for it (a copy of the external test suites for machines
             without internet access). Tests and docs use the repository's own paths.
--self-test  both readers on texts whose answers are known.

Prints one line per problem and exits 1 if there is any."""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CITED_TREES = ("src/", "tests/", "docs/", "scripts/", "fuzz/", "cmake/", "README.md")
ADJACENT = ".." + "/shared"  # spelled in two parts so this file does not name it
ADJACENT_ALLOWED = {"scripts/testdata.sh"}

NUMBER = r"\d+\.\d+(?![.\d])"
NUMBER_LIST = rf"{NUMBER}(?:(?:,\s*|\s+and\s+|\s+or\s+){NUMBER})*"
CITATION = re.compile(
    rf"contract(?:\.md(?:\]\([^)\s]*\))?|'s)?,?\s+(?:sections?\s+)?({NUMBER_LIST})")
# Inside the contract: "(7.5)", "(`recheck`, 7.5)", "(1.5, 7.3)", "section 7.4".
INNER_PAREN = re.compile(rf"(?:\(|,\s)((?:{NUMBER})(?:(?:,\s*|\s+and\s+){NUMBER})*)\)")
INNER_SECTION = re.compile(rf"\bsections?\s+({NUMBER_LIST})")
HEADING = re.compile(r"^#{2,3}\s+(\d+(?:\.\d+)?)[.\s]", re.M)


def headings(contract_text):
    return set(HEADING.findall(contract_text))


def numbers(group):
    return re.findall(NUMBER, group)


def cited(text, inside_contract):
    """(line number, section) of every citation in text."""
    found = []
    patterns = [CITATION] + ([INNER_PAREN, INNER_SECTION] if inside_contract else [])
    for pattern in patterns:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found += [(line, number) for number in numbers(match.group(1))]
    return sorted(set(found))


def tracked_files():
    """The tracked files (git ls-files), or every file of a checkout without .git."""
    try:
        listing = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True,
                                 capture_output=True).stdout.decode()
        return [name for name in listing.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        skip = {"node_modules", ".git"}
        return [str(path.relative_to(ROOT)) for path in ROOT.rglob("*")
                if path.is_file() and not skip & set(path.relative_to(ROOT).parts)
                and not path.relative_to(ROOT).parts[0].startswith("build")]


def read_text(name):
    path = ROOT / name
    if path.is_symlink() or not path.is_file():
        return None
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def check_citations(files, contract_text):
    known = headings(contract_text)
    problems = []
    for name in files:
        if not name.startswith(CITED_TREES):
            continue
        text = contract_text if name == "docs/contract.md" else read_text(name)
        if text is None:
            continue
        for line, number in cited(text, name == "docs/contract.md"):
            if number not in known:
                problems.append(f"{name}:{line}: cites contract section {number}, "
                                "which docs/contract.md has no heading for")
    return problems


def check_adjacent(files):
    problems = []
    for name in files:
        if name in ADJACENT_ALLOWED:
            continue
        text = read_text(name)
        if text is None or ADJACENT not in text:
            continue
        line = text[:text.index(ADJACENT)].count("\n") + 1
        problems.append(f"{name}:{line}: names the folder beside the checkout ({ADJACENT}); "
                        "use the repository's own paths (tests/data/, scripts/testdata.sh)")
    return problems


def self_test():
    contract = "## 1. Files\n### 1.4 Policy\n## 7. Additions\n### 7.5 When\n### 7.16 serve\n"
    assert headings(contract) == {"1", "1.4", "7", "7.5", "7.16"}, headings(contract)
    sample = ("see contract 7.5; contract.md 7.16 and the contract's 1.4\n"
              "contract sections 1.4, 7.5 and 7.9; [docs/contract.md](docs/contract.md) section 7.17\n"
              "uws 1.9.0 and 7.1 ms are no citations; contract 1.0.0 neither\n")
    assert sorted(n for _, n in cited(sample, False)) == ["1.4", "1.4", "7.16", "7.17", "7.5", "7.5", "7.9"], \
        cited(sample, False)
    inner = "stops (`recheck`, 7.5) and (1.5, 7.3); see section 7.4; (0.5 s) is no citation\n"
    assert sorted(n for _, n in cited(inner, True)) == ["1.5", "7.3", "7.4", "7.5"], cited(inner, True)
    known = headings(contract)
    assert sorted(n for _, n in cited(sample, False) if n not in known) == ["7.17", "7.9"]
    print("self-test passed")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--citations", action="store_true")
    parser.add_argument("--no-adjacent-folder", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    files = tracked_files()
    problems = []
    if args.citations:
        problems += check_citations(files, (ROOT / "docs" / "contract.md").read_text())
    if args.no_adjacent_folder:
        problems += check_adjacent(files)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
