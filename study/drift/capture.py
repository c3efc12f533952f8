#!/usr/bin/env python3
"""The drift study's capture step (run.sh runs it; README.md says what it does).

For every release listed in servers.json: install it from the npm registry into its own
prefix (cached), start it under udon-mcp's sandbox without network, capture its catalog
twice with `udon-mcp capture`, and record the outcome in data/index.json. Python 3
standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INDEX_PROFILE = "udon-mcp.drift-study-index.0.1"
DIGEST_RULE = ("studySha256 = SHA-256 of the RFC 8785 form of the manifest without its "
               "capturedAt and expiresAt members (udon-mcp digest of that document)")
STUDY_INSTANT = "1970-01-01T00:00:00Z"
# Where each server's captures run: the same path on every machine and for every release,
# because a server may write its start directory into its catalog (figma-developer-mcp puts
# it in a tool description); a random directory would make such a catalog differ from one
# run, and one release, to the next. One directory per server; its releases take turns.
WORK_ROOT = "/tmp/udon-drift-study"


# The /etc a captured server sees (the sandbox's "etc" member, docs/contract.md 7.10) in
# place of the host's: what a package reads there can end up in its catalog, and so in the
# committed data. One account, the same on every machine (the runner's uid and gid, a fixed
# name and no home), localhost, and files only for name lookups: the captures run offline.
STUDY_ACCOUNT = "study"
# Host files copied as they are: the dynamic linker's cache, and the alternatives symlinks
# a command such as /usr/bin/node may resolve through. Nothing in them names a user.
ETC_COPIED = ("ld.so.cache", "ld.so.conf", "alternatives")


def minimal_etc(path, uid, gid, host_etc="/etc"):
    """Writes the captures' /etc into `path` (created afresh: a copied symlink cannot be
    copied over itself, so the second capture of a release would fail)."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    files = {
        "passwd": "%s:x:%d:%d::/nonexistent:/usr/sbin/nologin\n" % (STUDY_ACCOUNT, uid, gid),
        "group": "%s:x:%d:\n" % (STUDY_ACCOUNT, gid),
        "hosts": "127.0.0.1 localhost\n::1 localhost\n",
        "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    }
    for name, text in files.items():
        with open(os.path.join(path, name), "w", encoding="utf-8") as f:
            f.write(text)
    for name in ETC_COPIED:
        source = os.path.join(host_etc, name)
        if os.path.isdir(source) and not os.path.islink(source):
            shutil.copytree(source, os.path.join(path, name), symlinks=True, dirs_exist_ok=True)
        elif os.path.isfile(source):
            shutil.copyfile(source, os.path.join(path, name))


def root_refusal(euid, allow_root):
    """Why the study will not run for this user, or None. As root, a captured package would
    read what root may (the sandbox maps root to root): refused unless the machine is a
    disposable one that asks for it (--allow-root)."""
    if euid != 0 or allow_root:
        return None
    return ("run.sh: refusing to run as root: the packages it captures would run as root in "
            "their sandbox; run it as an ordinary user (or pass --allow-root on a disposable "
            "machine)")


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def server_node(server):
    """The Node.js a server entry asks for ('node': a path inside the repository, the pinned
    Node.js 22 of tests/node_modules), or None for the one on PATH."""
    return os.path.join(REPO, server["node"]) if server.get("node") else None


def version_key(version):
    """Semantic-version order of a stable release (major, minor, patch; build metadata ignored)."""
    return tuple(int(part) for part in version.split("+")[0].split("."))


def order_problems(server):
    """Why a servers.json entry's release list is not in semantic-version order, or []: only
    the releases its 'orderDeparture' names, with a reason, may stand elsewhere."""
    departure = server.get("orderDeparture") or {}
    moved = set(departure.get("releases", []))
    problems = []
    if moved and not departure.get("why"):
        problems.append("%s: orderDeparture has no 'why'" % server["name"])
    if moved - set(server["releases"]):
        problems.append("%s: orderDeparture names releases it does not list" % server["name"])
    rest = [v for v in server["releases"] if v not in moved]
    if rest != sorted(rest, key=version_key):
        problems.append("%s: releases are not in semantic-version order and no orderDeparture says why"
                        % server["name"])
    return problems


def write_json(path, value):
    """Atomic write (temp file + rename), sorted keys off: the order given is kept."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def read_json(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def safe_name(package):
    return package.replace("/", "+")


def scrub(text, cache):
    """One short line of a server's or npm's complaint, without machine paths. An absolute
    path keeps what names the module (from its last node_modules/ on); a relative one, which
    says nothing about the machine ('../build/Release/keytar.node'), is kept whole."""
    text = text.replace(cache, "<prefix>").replace(REPO, "<repo>")

    def shorten(match):
        at = match.group(0).rfind("/node_modules/")
        return "<path>" + (match.group(0)[at:] if at >= 0 else "")
    text = re.sub(r"(?<![\w.@+>-])(/[A-Za-z0-9._@+-]+){2,}", shorten, text)
    return text.strip()[:200]


def pick_hint(stderr):
    """The line of the server's stderr tail that says most about why it stopped: an error's
    cause first (Node prints the network error under [cause]), never a line of source code
    Node echoes above its caret."""
    lines = [ln.split("server stderr:", 1)[1].strip() for ln in stderr.splitlines()
             if "diagnostics:" in ln and "server stderr:" in ln]
    for pattern in (r"^\[cause\]: \w*Error", r"^\w*Error( \[\w+\])?: ", r"^\w*Error\b(?!\.)",
                    r"Error\b.*:|ERR_|[Rr]equire[sd]? |[Uu]nsupported|[Nn]ot supported|[Mm]issing",
                    r"[Ee]rror|[Ff]ail"):
        for ln in lines:
            if re.search(pattern, ln) and not ln.startswith("at ") and not SOURCE_LINE.search(ln):
                return ln
    for ln in stderr.splitlines():
        if "diagnostics:" in ln and "transport:" in ln:
            return ln.split("transport:", 1)[1].strip()
    return ""


# A line of JavaScript Node echoes above the caret of an uncaught error ("Error.captureStackTrace(err);").
SOURCE_LINE = re.compile(r"^[\w.$]+\(.*\);?$|^(const|let|var|throw|return) |;$")
NATIVE_BINDING = re.compile(r"node_modules/((?:@[\w.-]+/)?[\w.-]+)/(?:[\w./-]*/)?[\w.-]+\.node\b")
REQUIRED_FROM = re.compile(r"^- .*node_modules/((?:@[\w.-]+/)?[\w.-]+)/", re.M)
NETWORK = re.compile(r"EAI_AGAIN|ENOTFOUND|ECONNREFUSED|ENETUNREACH|fetch failed")


def install_script_failure(output):
    """Why a sandboxed install script built nothing, in a few words ('' when nothing known):
    the prebuilt binary's download and the local build, as npm's output says."""
    why = []
    download = re.search(r"prebuild-install warn install (.+)", output)
    if download:
        why.append("the prebuilt binary's download failed (%s)" % download.group(1).strip())
    missing = re.search(r"Package (\S+) was not found in the pkg-config search path", output)
    if missing:
        why.append("building it needs %s, which is not installed" % missing.group(1))
    return "; ".join(why)


def explain(stderr, node, scripts):
    """What really happened, in one sentence, from the server's whole stderr tail (None when
    nothing known is recognised). `node`: the Node.js version that ran it; `scripts`: False
    when the install ran no install scripts, else True or their recorded outcome."""
    text = "\n".join(ln.split("server stderr:", 1)[1].strip() for ln in stderr.splitlines() if "server stderr:" in ln)
    binding = NATIVE_BINDING.search(text)
    if not binding and re.search(r"Cannot find module '[^']*\.node'", text):
        binding = REQUIRED_FROM.search(text)
    if binding:
        how = ("its install script ran in the sandbox without network and did not build it" if scripts
               else "the install ran no install scripts (--ignore-scripts), and only an install script builds it")
        if scripts and scripts is not True and scripts.get("why"):
            how += ": " + scripts["why"]
        return "the native binding of %s is missing: %s" % (binding.group(1), how)
    builtin = re.search(r"ERR_UNKNOWN_BUILTIN_MODULE\]?:? No such built-in module: (node:\w+)", text)
    if builtin:
        return "needs the built-in module %s, which Node.js %s (the one that ran it) lacks" % (builtin.group(1), node)
    if NETWORK.search(text):
        return "asks a remote service at start and the capture sandbox has no network"
    return None


class Study:
    def __init__(self, args):
        self.args = args
        self.data = os.path.abspath(args.data)
        self.cache = os.path.abspath(args.cache)
        self.udon = args.udon
        self.lock = threading.Lock()
        self.server_locks = {}
        self.servers = read_json(args.servers)["servers"]
        problems = [p for server in self.servers for p in order_problems(server)]
        if problems:
            sys.exit("run.sh: " + "; ".join(problems))
        old = read_json(os.path.join(self.data, "index.json"), {}) or {}
        self.entries = {(e["server"], e["version"]): e for e in old.get("releases", [])}
        self.done = 0
        self.total = 0
        self.environment = {
            "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
            "npm": subprocess.run(["npm", "--version"], capture_output=True, text=True).stdout.strip(),
        }

    # ---------------------------------------------------------------- registry
    def publish_times(self, server):
        path = os.path.join(self.cache, safe_name(server["package"]), "time.json")
        with self.lock:
            times = read_json(path)
            if times is None:
                out = subprocess.run(["npm", "view", server["package"], "time", "--json"],
                                     capture_output=True, text=True)
                times = json.loads(out.stdout) if out.returncode == 0 else {}
                write_json(path, times)
        return times

    def install(self, server, version):
        """Returns (prefix, None) or (None, reason). A committed lock file, when there is
        one, pins every dependency (npm ci); otherwise npm resolves and its lock is kept."""
        prefix = os.path.join(self.cache, safe_name(server["package"]), version)
        if os.path.exists(os.path.join(prefix, ".installed")):
            return prefix, None
        tmp = prefix + ".partial"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp, exist_ok=True)
        lock_path = self.lock_path(server, version)
        env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PUPPETEER_SKIP_DOWNLOAD="1")
        flags = ["--no-audit", "--no-fund", "--omit=dev", "--loglevel=error", "--prefer-offline",
                 "--ignore-scripts"]
        if os.path.exists(lock_path):
            write_json(os.path.join(tmp, "package.json"),
                       {"private": True, "dependencies": {server["package"]: version}})
            shutil.copyfile(lock_path, os.path.join(tmp, "package-lock.json"))
            cmd = ["npm", "ci"] + flags
        else:
            cmd = ["npm", "install", "--prefix", tmp, "--save-exact",
                   f"{server['package']}@{version}"] + flags
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, env=env)
        if out.returncode != 0:
            code = re.search(r"npm error code (\S+)", out.stderr)
            first = next((ln for ln in out.stderr.splitlines()
                          if "error" in ln and "error code" not in ln), "")
            shutil.rmtree(tmp, ignore_errors=True)
            return None, {"stage": "install", "code": code.group(1) if code else "npm_failed",
                          "message": scrub(first, self.cache)}
        if not os.path.exists(lock_path):
            shutil.copyfile(os.path.join(tmp, "package-lock.json"), lock_path + ".new")
            os.replace(lock_path + ".new", lock_path)
        self.run_install_scripts(server, tmp)
        open(os.path.join(tmp, ".installed"), "w").close()
        shutil.rmtree(prefix, ignore_errors=True)
        os.replace(tmp, prefix)
        return prefix, None

    def run_install_scripts(self, server, prefix):
        """`installScripts`: the packages whose install scripts the release needs (a native
        binding) are rebuilt by npm inside bubblewrap with no network, the install tree the
        only writable place; a script that needs the network fails there, and the capture's
        reason then says the binding is missing."""
        packages = server.get("installScripts", [])
        if not packages:
            return
        etc = os.path.join(prefix, ".study-etc")
        minimal_etc(etc, os.getuid(), os.getgid())
        # /tmp first: the install tree may lie under it, and a later mount would hide it.
        jail = ["bwrap", "--unshare-all", "--die-with-parent", "--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr",
                "--ro-bind", etc, "/etc", "--bind", prefix, prefix,
                "--dev", "/dev", "--proc", "/proc", "--setenv", "HOME", "/tmp", "--chdir", prefix]
        for link in ("/bin", "/lib", "/lib64", "/sbin"):
            if os.path.islink(link):
                jail += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                jail += ["--ro-bind", link, link]
        # The headers of the Node.js that will run the release, so node-gyp needs no download
        # and the binding matches its ABI: the pinned one's own, else the system's.
        node = server_node(server)
        home = os.path.dirname(os.path.dirname(os.path.realpath(node))) if node else "/usr"
        if node:
            jail += ["--ro-bind", home, home, "--setenv", "PATH", home + "/bin:/usr/bin:/bin"]
        nodedir = ["--nodedir=" + home] if os.path.exists(home + "/include/node/common.gypi") else []
        out = subprocess.run(jail + ["npm", "rebuild", "--offline", "--foreground-scripts"] + nodedir + packages,
                             capture_output=True, text=True)
        shutil.rmtree(etc, ignore_errors=True)
        write_json(os.path.join(prefix, ".install-scripts.json"),
                   {"ok": out.returncode == 0, "why": install_script_failure(out.stdout + out.stderr)})

    def install_scripts_outcome(self, server, version):
        """What the sandboxed install scripts of this release's install did (None: none ran)."""
        prefix = os.path.join(self.cache, safe_name(server["package"]), version)
        return read_json(os.path.join(prefix, ".install-scripts.json"))

    def lock_path(self, server, version):
        d = os.path.join(self.data, server["package"])
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, f"{version}.lock.json")

    # ---------------------------------------------------------------- capture
    def find_bin(self, prefix, server):
        bindir = os.path.join(prefix, "node_modules", ".bin")
        wanted = server["bin"] if isinstance(server["bin"], list) else [server["bin"]]
        for name in wanted:
            if os.path.exists(os.path.join(bindir, name)):
                return os.path.join(bindir, name), None
        pj = read_json(os.path.join(prefix, "node_modules", server["package"], "package.json"), {})
        b = pj.get("bin")
        if isinstance(b, str):
            b = {server["package"].split("/")[-1]: b}
        names = sorted((b or {}).keys())
        if len(names) == 1 and os.path.exists(os.path.join(bindir, names[0])):
            return os.path.join(bindir, names[0]), None
        return None, {"stage": "start", "code": "bin_missing",
                      "message": "the release has no bin named " + " or ".join(wanted)}

    def capture_once(self, server, command, workdir, out_path, version=None):
        config = self.sandbox_config(server, command, workdir)
        cmd = [self.udon, "capture", "--config", config, "--server", server["name"],
               "--state-dir", os.path.join(workdir, "state"), "--timeout", str(self.args.timeout),
               "--diagnostics", "--json", "--force", "-o", out_path]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
        if out.returncode == 0:
            return None
        return self.failure_reason(server, version, out)

    def sandbox_config(self, server, command, workdir):
        """Writes workdir/udon-mcp.json: the release's bin started in udon-mcp's sandbox, no
        network, the study's /etc, the fixed start directory. Returns its path."""
        etc = os.path.join(workdir, "etc")
        minimal_etc(etc, os.getuid(), os.getgid())
        node = server_node(server)
        if node:
            command, args = node, [command] + server["args"]
        else:
            args = server["args"]
        entry = {"command": command, "args": args, "env": server["env"],
                 "cwd": os.path.join(workdir, "start"),
                 "sandbox": {"network": False, "etc": etc}}
        os.makedirs(entry["cwd"], exist_ok=True)
        config = os.path.join(workdir, "udon-mcp.json")
        write_json(config, {"mcpServers": {server["name"]: entry}})
        return config

    def failure_reason(self, server, version, out):
        """The recorded reason of a failed `udon-mcp capture` run (its --json error, the
        hint and cause from its --diagnostics stderr), without machine paths."""
        try:
            err = json.loads(out.stdout)
        except ValueError:
            err = {"code": "udon_mcp_failed", "message": "exit %d" % out.returncode}
        hint = pick_hint(out.stderr)
        reason = {"stage": "capture", "code": err.get("code", "udon_mcp_failed"),
                  "message": scrub(err.get("message", ""), self.cache)}
        if hint:
            reason["hint"] = scrub(hint, self.cache)
        scripts = (self.install_scripts_outcome(server, version) or True) if server.get("installScripts") else False
        cause = explain(out.stderr, self.node_version(server), scripts)
        if cause:
            reason["cause"] = cause
        return reason

    def node_version(self, server):
        node = server_node(server)
        if not node:
            return self.environment["node"]
        return subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()

    def study_digest(self, manifest_path):
        doc = read_json(manifest_path)
        doc.pop("capturedAt", None)
        doc.pop("expiresAt", None)
        out = subprocess.run([self.udon, "digest", "-"], input=json.dumps(doc),
                             capture_output=True, text=True, check=True)
        return out.stdout.split()[0], doc

    def run_release(self, server, version):
        try:
            self.run_release_steps(server, version)
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            self.record({"server": server["name"], "package": server["package"],
                         "version": version, "outcome": "failed",
                         "reason": {"stage": "run", "code": "internal_error",
                                    "message": type(e).__name__}}, 0)

    def run_release_steps(self, server, version):
        started = time.time()
        times = self.publish_times(server)
        entry = {"server": server["name"], "package": server["package"], "version": version,
                 "published": times.get(version)}
        if server_node(server):
            entry["node"] = self.node_version(server)
        prefix, reason = self.install(server, version)
        if self.args.install_only:
            log("install %s %s: %s" % (server["name"], version, reason["code"] if reason else "ok"))
            return
        command = None
        if prefix:
            command, reason = self.find_bin(prefix, server)
        if command:
            reason = self.capture_pair(server, version, command, entry)
        if reason:
            entry.update({"outcome": "failed", "reason": reason})
        self.record(entry, time.time() - started)

    def capture_pair(self, server, version, command, entry):
        """Captures twice; the study digest of both must agree (else: nondeterministic)."""
        with self.lock:
            server_lock = self.server_locks.setdefault(server["name"], threading.Lock())
        with server_lock:
            return self.capture_pair_in(server, version, command, entry,
                                        os.path.join(WORK_ROOT, safe_name(server["name"])))

    def capture_pair_in(self, server, version, command, entry, work):
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        try:
            first, second = os.path.join(work, "a.json"), os.path.join(work, "b.json")
            for path in (first, second):
                reason = self.capture_once(server, command, work, path, version)
                if reason:
                    return reason
            digest, doc = self.study_digest(first)
            digest2, _ = self.study_digest(second)
            dest = os.path.join(self.data, server["package"], f"{version}.tools.json")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(first, dest + ".new")
            os.replace(dest + ".new", dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        srv = doc["servers"][server["name"]]
        entry.update({
            "outcome": "captured" if digest == digest2 else "nondeterministic",
            "file": f"{server['package']}/{version}.tools.json",
            "studySha256": digest,
            "protocolVersion": doc.get("protocolVersion"),
            "serverName": srv.get("serverInfo", {}).get("name"),
            "serverVersion": srv.get("serverInfo", {}).get("version"),
            "toolCount": sum(len(p.get("tools", [])) for p in srv.get("toolPages", [])),
        })
        if digest != digest2:
            entry["secondStudySha256"] = digest2
        return None

    # ---------------------------------------------------------------- index
    def record(self, entry, seconds):
        with self.lock:
            self.entries[(entry["server"], entry["version"])] = entry
            self.done += 1
            what = entry["outcome"]
            if what == "failed":
                what += " (%s: %s)" % (entry["reason"]["stage"], entry["reason"]["code"])
            else:
                what += " (%d tools)" % entry["toolCount"]
            log("[%d/%d] %s %s: %s, %.0fs" % (self.done, self.total, entry["server"],
                                             entry["version"], what, seconds))
            self.write_indexes()

    def write_indexes(self):
        releases = []
        for server in self.servers:
            series = []
            for version in server["releases"]:
                e = self.entries.get((server["name"], version))
                if e is None:
                    continue
                releases.append(e)
                if e["outcome"] != "failed":
                    series.append({"file": f"{version}.tools.json", "label": version})
            if series:
                write_json(os.path.join(self.data, server["package"], "index.json"),
                           {"server": server["name"], "package": server["package"],
                            "series": series})
        write_json(os.path.join(self.data, "index.json"),
                   {"profile": INDEX_PROFILE, "digestRule": DIGEST_RULE,
                    "publishedNote": "publish instants as the npm registry reports them (npm view PACKAGE time)",
                    "environment": self.environment,
                    "releases": releases})

    def pending(self):
        chosen = set(self.args.server or [])
        unknown = chosen - {s["name"] for s in self.servers}
        if unknown:
            sys.exit("run.sh: no server named " + ", ".join(sorted(unknown)) + " in servers.json")
        todo = []
        for server in self.servers:
            if chosen and server["name"] not in chosen:
                continue
            for version in server["releases"]:
                if self.args.release and version not in self.args.release:
                    continue
                e = self.entries.get((server["name"], version))
                have = e and e["outcome"] != "failed" and os.path.exists(
                    os.path.join(self.data, e["file"]))
                failed = e and e["outcome"] == "failed"
                if self.args.recapture or (failed and self.args.retry_failed):
                    have = failed = False
                if have or failed:
                    continue
                todo.append((server, version))
        return todo


def add_installer_options(ap):
    """The options of every user of this installer (run.sh here, study/results/run.sh)."""
    ap.add_argument("--cache", default=os.environ.get("UDON_DRIFT_CACHE", os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "udon-mcp-drift")))
    ap.add_argument("--udon", default=os.environ.get("UDON_MCP", "udon-mcp"))
    ap.add_argument("--allow-root", action="store_true",
                    help="run as root all the same (a disposable machine only)")


def main():
    ap = argparse.ArgumentParser(prog="run.sh", description=__doc__.splitlines()[0])
    ap.add_argument("--server", action="append", help="only this server (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="releases handled at once (default 1)")
    ap.add_argument("--retry-failed", action="store_true", help="try recorded failures again")
    ap.add_argument("--recapture", action="store_true",
                    help="capture the chosen servers' recorded releases again")
    ap.add_argument("--release", action="append",
                    help="only this release of the chosen servers (repeatable; with --retry-failed or --recapture)")
    ap.add_argument("--install-only", action="store_true",
                    help="only fill the install cache (records nothing)")
    ap.add_argument("--timeout", type=int, default=60, help="capture timeout, seconds")
    ap.add_argument("--servers", default=os.path.join(HERE, "servers.json"))
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    add_installer_options(ap)
    args = ap.parse_args()
    refusal = root_refusal(os.geteuid(), args.allow_root)
    if refusal:
        log(refusal)
        sys.exit(2)
    study = Study(args)
    todo = study.pending()
    study.total = len(todo)
    log("run.sh: %d release(s) to capture (%d recorded)" % (len(todo), len(study.entries)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for f in [pool.submit(study.run_release, s, v) for s, v in todo]:
            f.result()
    with study.lock:
        study.write_indexes()
    counts = {}
    for e in study.entries.values():
        counts[e["outcome"]] = counts.get(e["outcome"], 0) + 1
    log("run.sh: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))


if __name__ == "__main__":
    main()
