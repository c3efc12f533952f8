#!/usr/bin/env python3
"""The drift study's capture step (capture.py): which releases a run takes, where their
servers start, and that the committed captures hold no per-run path.
Run: python3 study/drift/capture_test.py (CTest: drift_study_capture)."""
import argparse
import glob
import os
import json
import re
import subprocess
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
                                retry_failed=flags.get("retry_failed", False),
                                release=flags.get("release"))
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

    def test_release_takes_only_the_named_releases(self):
        self.assertEqual(self.todo(recapture=True, server=["a"], release=["1.1.0"]), [("a", "1.1.0")])


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


class SandboxTest(unittest.TestCase):
    """Issue 38: what a captured package can read of the machine, and as whom."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_captures_see_the_study_etc_not_the_hosts(self):
        s = study("unused", [])
        s.udon, s.cache = "udon-mcp", self.tmp.name
        s.args.timeout = 5
        seen = []

        def run(cmd, **kwargs):
            seen.append(cmd)
            return subprocess.CompletedProcess(cmd, 0, "", "")
        real_run, capture.subprocess.run = capture.subprocess.run, run
        try:
            work = os.path.join(self.tmp.name, "work")
            server = {"name": "a", "args": [], "env": {}}
            self.assertIsNone(s.capture_once(server, "/x/bin/a", work, os.path.join(work, "a.json")))
        finally:
            capture.subprocess.run = real_run
        with open(os.path.join(work, "udon-mcp.json"), encoding="utf-8") as f:
            sandbox = json.load(f)["mcpServers"]["a"]["sandbox"]
        self.assertEqual(sandbox, {"network": False, "etc": os.path.join(work, "etc")})
        with open(os.path.join(sandbox["etc"], "passwd"), encoding="utf-8") as f:
            accounts = f.read().splitlines()
        self.assertEqual([a.split(":")[0] for a in accounts], [capture.STUDY_ACCOUNT])
        self.assertEqual(accounts[0].split(":")[2], str(os.getuid()))
        self.assertEqual(len(seen), 1)

    def test_the_study_etc_holds_one_account_and_none_of_the_hosts_secrets(self):
        host = os.path.join(self.tmp.name, "host-etc")
        os.makedirs(os.path.join(host, "alternatives"))
        os.makedirs(os.path.join(host, "ssh"))
        for name, text in {"passwd": "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n",
                           "shadow": "root:$6$secret:19000::::::\n", "hostname": "build-7\n",
                           "ld.so.cache": "cache", "ssh/ssh_host_ed25519_key": "KEY"}.items():
            with open(os.path.join(host, name), "w", encoding="utf-8") as f:
                f.write(text)
        os.symlink("/usr/bin/nodejs", os.path.join(host, "alternatives", "node"))
        etc = os.path.join(self.tmp.name, "etc")
        capture.minimal_etc(etc, 1000, 1000, host_etc=host)
        self.assertEqual(sorted(os.listdir(etc)),
                         ["alternatives", "group", "hosts", "ld.so.cache", "nsswitch.conf", "passwd"])
        self.assertEqual(os.readlink(os.path.join(etc, "alternatives", "node")), "/usr/bin/nodejs")
        with open(os.path.join(etc, "passwd"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "study:x:1000:1000::/nonexistent:/usr/sbin/nologin\n")

    def test_the_study_refuses_root_unless_asked(self):
        self.assertIn("refusing to run as root", capture.root_refusal(0, False))
        self.assertIsNone(capture.root_refusal(0, True))
        self.assertIsNone(capture.root_refusal(1000, False))

    @unittest.skipUnless(os.geteuid() == 0, "the refusal of root is seen as root")
    def test_run_sh_as_root_stops_before_anything(self):
        out = subprocess.run([sys.executable, os.path.join(HERE, "capture.py"), "--servers", "/nonexistent",
                              "--data", os.path.join(self.tmp.name, "data")],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("refusing to run as root", out.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "data")))


def diagnostics(*lines):
    """udon-mcp capture --diagnostics' stderr for a server that wrote these lines."""
    return "\n".join(["udon-mcp: diagnostics: server s: transport: mcp.disconnected; mcp.server_exited"] +
                     ["udon-mcp: diagnostics: server s: server stderr: " + ln for ln in lines])


class FailureReasonTest(unittest.TestCase):
    """Each failed release's reason says what really happened (issue 42's three wrong ones)."""

    def test_the_scrubber_keeps_the_module_name(self):
        # azure-devops 2.10.0: the relative path of keytar's binding was taken for a machine path.
        line = "Error: Cannot find module '../build/Release/keytar.node' in /home/u/w/node_modules/keytar/lib/k.js"
        self.assertEqual(capture.scrub(line, "/home/u/.cache"),
                         "Error: Cannot find module '../build/Release/keytar.node' in <path>/node_modules/keytar/lib/k.js")
        self.assertEqual(capture.scrub("open /home/u/secret/dir/file failed", "/c"), "open <path> failed")

    def test_the_hint_is_the_network_error_not_a_line_of_source(self):
        # supabase 0.4.4 to 0.5.8: Node echoes the source line above its caret, then the error.
        stderr = diagnostics("node:internal/deps/undici/undici:14976", "      Error.captureStackTrace(err);",
                             "            ^", "", "TypeError: fetch failed", "    at node:internal/deps/undici",
                             "  [cause]: Error: getaddrinfo EAI_AGAIN supabase.com", "Node.js v20.20.2")
        self.assertEqual(capture.pick_hint(stderr), "[cause]: Error: getaddrinfo EAI_AGAIN supabase.com")
        self.assertEqual(capture.explain(stderr, "v20.20.2", False),
                         "asks a remote service at start and the capture sandbox has no network")
        self.assertEqual(capture.pick_hint(diagnostics("      Error.captureStackTrace(err);")),
                         "mcp.disconnected; mcp.server_exited")

    def test_a_missing_native_binding_is_named(self):
        keytar = diagnostics("Error: Cannot find module '../build/Release/keytar.node'", "Require stack:",
                             "- /x/node_modules/keytar/lib/keytar.js", "    at Module._resolveFilename (node:internal)")
        self.assertEqual(capture.explain(keytar, "v20.20.2", False),
                         "the native binding of keytar is missing: the install ran no install scripts "
                         "(--ignore-scripts), and only an install script builds it")
        sqlite = diagnostics("Failed to connect to SQLite database: Error: Could not locate the bindings file. Tried:",
                             " → /x/node_modules/better-sqlite3/build/Release/better_sqlite3.node")
        self.assertIn("the native binding of better-sqlite3 is missing: its install script ran in the sandbox",
                      capture.explain(sqlite, "v22.23.5", True))
        npm = ("prebuild-install warn install getaddrinfo EAI_AGAIN github.com\n"
               "Package libsecret-1 was not found in the pkg-config search path.\n")
        self.assertEqual(capture.explain(keytar, "v20.20.2", {"ok": False, "why": capture.install_script_failure(npm)}),
                         "the native binding of keytar is missing: its install script ran in the sandbox without "
                         "network and did not build it: the prebuilt binary's download failed (getaddrinfo "
                         "EAI_AGAIN github.com); building it needs libsecret-1, which is not installed")

    def test_a_missing_builtin_names_the_node_that_ran_it(self):
        stderr = diagnostics("Failed to connect to SQLite database: Error [ERR_UNKNOWN_BUILTIN_MODULE]: "
                             "No such built-in module: node:sqlite")
        self.assertEqual(capture.explain(stderr, "v20.20.2", False),
                         "needs the built-in module node:sqlite, which Node.js v20.20.2 (the one that ran it) lacks")
        self.assertIsNone(capture.explain(diagnostics("listening"), "v20.20.2", False))


class MinimalEtcTest(unittest.TestCase):
    def test_the_second_capture_of_a_release_writes_its_etc_again(self):
        # Both captures of a release use one work directory; the copied alternatives'
        # symlinks made the second write fail, so no release could be captured.
        with tempfile.TemporaryDirectory() as tmp:
            host = os.path.join(tmp, "host")
            os.makedirs(os.path.join(host, "alternatives"))
            os.symlink("/usr/bin/true", os.path.join(host, "alternatives", "editor"))
            for _ in range(2):
                capture.minimal_etc(os.path.join(tmp, "etc"), 1000, 1000, host_etc=host)
            self.assertEqual(os.readlink(os.path.join(tmp, "etc", "alternatives", "editor")), "/usr/bin/true")


class ReleaseOrderTest(unittest.TestCase):
    """Release order comes from the versions alone; a departure is named in the data with why."""

    def test_the_committed_lists_follow_the_versions_or_say_why(self):
        with open(os.path.join(HERE, "servers.json"), encoding="utf-8") as f:
            servers = json.load(f)["servers"]
        self.assertEqual([p for s in servers for p in capture.order_problems(s)], [])

    def test_an_unexplained_departure_is_found(self):
        server = {"name": "x", "releases": ["0.1.0", "2025.1.1", "2.0.0"]}
        self.assertEqual(len(capture.order_problems(server)), 1)
        server["orderDeparture"] = {"releases": ["2.0.0"]}
        self.assertIn("x: orderDeparture has no 'why'", capture.order_problems(server))
        server["orderDeparture"]["why"] = "its lock file names the newer SDK"
        self.assertEqual(capture.order_problems(server), [])
        self.assertEqual(capture.order_problems({"name": "y", "releases": ["0.9.0", "0.10.0", "1.0.0"]}), [])


if __name__ == "__main__":
    unittest.main()
