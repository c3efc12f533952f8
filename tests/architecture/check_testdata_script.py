#!/usr/bin/env python3
"""Tests scripts/testdata.sh, the one provider of the external test suites.

--offline       no configured copy, no folder beside the checkout, an unreachable download
                URL: exit status 1 and exactly one line on stderr naming the script and the
                archive URL it tried; nothing is left in the output folder.
--good DIR      DIR holds verified suites (the build tree's testdata/, after the fixture):
                a copy is taken and kept; a tampered configured copy (a changed vector, an
                added test file) is refused with one line and not used; a tampered copy in
                the output folder is replaced; the download path unpacks archives laid out
                as upstream's (served through file://) and checks them the same way.

Prints what failed and exits 1 if anything did."""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "testdata.sh"
SUITES = ("json-schema-test-suite", "jcs")
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)


def run(out, work, **env_overrides):
    """Runs the script with --out OUT, never near a real copy or the network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UDON_TESTDATA")}
    env["UDON_TESTDATA_ADJACENT"] = str(work / "nothing-beside")
    env["UDON_TESTDATA_URL"] = "http://127.0.0.1:9"
    env.update(env_overrides)
    args = [str(SCRIPT), "--out", str(out)]
    if "FROM" in env:
        args += ["--from", env.pop("FROM")]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)


def pins():
    text = SCRIPT.read_text()
    return {name: re.search(rf"^{name}=(\S+)$", text, re.M).group(1)
            for name in ("JSTS_REPO", "JSTS_COMMIT", "JCS_REPO", "JCS_COMMIT")}


def one_line(result):
    return result.stderr.count("\n") == 1 and result.stderr.startswith("scripts/testdata.sh: ")


def check_offline(work):
    pin = pins()
    out = work / "offline-out"
    result = run(out, work)
    url = f"http://127.0.0.1:9/{pin['JSTS_REPO']}/archive/{pin['JSTS_COMMIT']}.tar.gz"
    expect(result.returncode == 1, f"offline: exit status {result.returncode}, expected 1")
    expect(one_line(result), f"offline: expected one line on stderr, got {result.stderr!r}")
    expect(url in result.stderr, f"offline: the line does not name {url}: {result.stderr!r}")
    expect(not any(out.iterdir()), f"offline: left {sorted(p.name for p in out.iterdir())} behind")


def tampered(good, work, name, change):
    copy = work / name
    shutil.copytree(good, copy)
    change(copy)
    return copy


def check_copies(good, work):
    out = work / "out"
    result = run(out, work, FROM=str(good))
    expect(result.returncode == 0, f"good copy: exit status {result.returncode}: {result.stderr}")
    for suite in SUITES:
        expect((out / suite / ".verified").is_file(), f"good copy: {suite} not provided")
    again = run(out, work, FROM=str(work / "absent"))
    expect(again.returncode == 0, f"verified output: not kept ({again.stderr!r})")

    vector = out / "jcs" / "output" / "weird.json"
    vector.write_bytes(vector.read_bytes() + b" ")
    repaired = run(out, work, FROM=str(good))
    expect(repaired.returncode == 0 and vector.read_bytes() == (good / "jcs/output/weird.json").read_bytes(),
           "a tampered copy in the output folder was not replaced")

    cases = {
        "changed vector": ("jcs", lambda d: (d / "jcs/output/values.json").write_bytes(b'{"numbers":[1]}')),
        "added test file": ("json-schema-test-suite",
                            lambda d: (d / "json-schema-test-suite/tests/draft7/extra.json").write_text("[]")),
    }
    for label, (suite, change) in cases.items():
        copy = tampered(good, work, label.replace(" ", "-"), change)
        target = work / ("out-" + label.replace(" ", "-"))
        result = run(target, work, FROM=str(copy))
        expect(result.returncode == 1, f"{label}: exit status {result.returncode}, expected 1")
        expect(one_line(result) and "does not match the pinned SHA-256" in result.stderr,
               f"{label}: expected one refusal line, got {result.stderr!r}")
        expect(not (target / suite).exists(), f"{label}: the refused copy was used")


def archive(work, repo, commit, members):
    """A .tar.gz at work/server/REPO/archive/COMMIT.tar.gz with a top folder, as GitHub's."""
    top = f"{repo.split('/')[1]}-{commit}"
    path = work / "server" / repo / "archive" / f"{commit}.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for source, name in members:
            tar.add(source, arcname=f"{top}/{name}")


def check_download(good, work):
    pin = pins()
    suite, jcs = good / "json-schema-test-suite", good / "jcs"
    readme = work / "README.md"
    readme.write_text("upstream's other files are not used\n")
    archive(work, pin["JSTS_REPO"], pin["JSTS_COMMIT"],
            [(suite / "LICENSE", "LICENSE"), (suite / "remotes", "remotes"), (readme, "README.md"),
             (suite / "tests/draft2020-12", "tests/draft2020-12"), (suite / "tests/draft7", "tests/draft7")])
    archive(work, pin["JCS_REPO"], pin["JCS_COMMIT"],
            [(jcs / "LICENSE", "LICENSE"), (readme, "testdata/README.md")] +
            [(jcs / folder, f"testdata/{folder}") for folder in ("input", "output", "outhex")])
    out = work / "downloaded"
    result = run(out, work, UDON_TESTDATA_URL=f"file://{work / 'server'}")
    expect(result.returncode == 0, f"download: exit status {result.returncode}: {result.stderr}")
    for name in SUITES:
        expect((out / name / ".verified").is_file(), f"download: {name} not provided")
    expect(not (out / "json-schema-test-suite" / "README.md").exists(), "download: kept a file outside the subset")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offline", action="store_true")
    parser.add_argument("--good", type=pathlib.Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        work = pathlib.Path(temp)
        if args.offline:
            check_offline(work)
        if args.good:
            check_copies(args.good.resolve(), work)
            check_download(args.good.resolve(), work)
    for failure in failures:
        print(failure)
    if not failures:
        print("passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
