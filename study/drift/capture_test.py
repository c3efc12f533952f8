#!/usr/bin/env python3
"""The drift study's capture step (capture.py): which releases a run takes, where their
servers start, and that the committed captures hold no per-run path.
Run: python3 study/drift/capture_test.py (CTest: drift_study_capture)."""
import argparse
import glob
import os
import re
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def study(data, entries, **flags):
    """A Study without its constructor (which asks node and npm for their versions)."""
    s = capture.Study.__new__(capture.Study)
    s.args = argparse.Namespace(server=flags.get("server"),
                                recapture=flags.get("recapture", False),
                                retry_failed=flags.get("retry_failed", False))
    s.data = data
    s.lock = threading.Lock()
    s.server_locks = {}
    s.servers = [{"name": "a", "releases": ["1.0.0", "1.1.0", "2.0.0"]},
                 {"name": "b", "releases": ["0.1.0"]}]
    s.entries = {(e["server"], e["version"]): e for e in entries}
    return s


class PendingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        data = self.tmp.name
        os.makedirs(os.path.join(data, "a"))
        open(os.path.join(data, "a", "1.0.0.tools.json"), "w").close()
        self.entries = [
            {"server": "a", "version": "1.0.0", "outcome": "captured", "file": "a/1.0.0.tools.json"},
            {"server": "a", "version": "1.1.0", "outcome": "failed"},
            # Recorded as captured, but its file is gone: taken again.
            {"server": "a", "version": "2.0.0", "outcome": "captured", "file": "a/2.0.0.tools.json"},
        ]

    def tearDown(self):
        self.tmp.cleanup()

    def todo(self, **flags):
        s = study(self.tmp.name, self.entries, **flags)
        return [(srv["name"], v) for srv, v in s.pending()]

    def test_a_rerun_skips_what_is_recorded(self):
        self.assertEqual(self.todo(), [("a", "2.0.0"), ("b", "0.1.0")])

    def test_retry_failed_takes_the_failures_again(self):
        self.assertEqual(self.todo(retry_failed=True),
                         [("a", "1.1.0"), ("a", "2.0.0"), ("b", "0.1.0")])

    def test_recapture_takes_every_release_of_the_chosen_servers(self):
        self.assertEqual(self.todo(recapture=True, server=["a"]),
                         [("a", "1.0.0"), ("a", "1.1.0"), ("a", "2.0.0")])


class WorkDirectoryTest(unittest.TestCase):
    def test_every_release_of_a_server_starts_in_the_same_directory(self):
        s = study("unused", [])
        seen = []
        s.capture_pair_in = lambda server, version, command, entry, work: seen.append(work)
        for version in ("1.0.0", "2.0.0"):
            s.capture_pair({"name": "a"}, version, "bin", {})
        s.capture_pair({"name": "b"}, "0.1.0", "bin", {})
        self.assertEqual(seen[0], seen[1])
        self.assertNotEqual(seen[0], seen[2])
        self.assertTrue(seen[0].startswith(capture.WORK_ROOT + os.sep))

    def test_the_committed_captures_hold_no_per_run_directory(self):
        # A server that writes its start directory into its catalog (figma-developer-mcp)
        # made every release's catalog differ when the directory was a fresh temporary one.
        per_run = re.compile(r"udon-drift-(?!study/)[A-Za-z0-9_]+")
        found = []
        for path in sorted(glob.glob(os.path.join(HERE, "data", "*", "*.tools.json"))):
            with open(path, encoding="utf-8") as f:
                if per_run.search(f.read()):
                    found.append(os.path.relpath(path, HERE))
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main()
