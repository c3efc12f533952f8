#!/usr/bin/env python3
"""Checks an installed udon-mcp the way a user meets it (contract section 7.22).

Installs into a throwaway root first: `--install-from BUILD` runs `cmake --install BUILD`
with DESTDIR, `--deb FILE` unpacks the package with `dpkg -x`. Then, from that root only:
a package's entries have fixed modes (directories and binaries 0755, other files 0644)
and belong to root; `--version` names the version and commit; every command `--help` lists
(nested ones too) and the demo server have their man pages, which name every option their
--help names; the bash completion offers every command and option; the docs, examples,
schemas, copyright file and Debian changelog are there; the binaries carry no
build-tree RPATH; `udon-mcp demo` runs against the installed demo server;
`udon-mcp serve` (stdio) answers initialize and lists exactly the reviewed tools of the
demo's manifest; and the installed README's "first server in five commands" runs as written.
Exit 0 when everything holds; each failure is one line on stderr.
"""
import argparse
import gzip
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

failures = []


def fail(message):
    failures.append(message)
    print(f"check_installed: FAIL: {message}", file=sys.stderr)


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)


def install(args, root):
    if args.deb:
        result = run(["dpkg", "-x", args.deb, str(root)])
    else:
        env = dict(os.environ, DESTDIR=str(root))
        result = run(["cmake", "--install", args.install_from, "--prefix", args.prefix], env=env)
    if result.returncode != 0:
        sys.exit(f"check_installed: install failed: {result.stderr}")


# --help's sections: {"Options": [first-column tokens], "Subcommands": [...], ...}.
def help_sections(binary, path):
    result = run([str(binary), *path, "--help"])
    if result.returncode != 0:
        fail(f"{' '.join(path) or 'udon-mcp'} --help exits {result.returncode}")
        return {}
    sections, current = {}, None
    for line in result.stdout.splitlines():
        if re.match(r"^[A-Z][A-Za-z]*:$", line):
            current = sections.setdefault(line[:-1], [])
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.split()[0])
        elif not line.strip():
            current = None
    return sections


def long_options(sections):
    names = []
    for token in sections.get("Options", []):
        names += [name for name in token.split(",") if name.startswith("--")]
    return names


# Every command path --help lists, nested ones included: [[], ["capture"], ["evidence", "summarize"], ...].
def command_paths(binary, path=()):
    paths = [list(path)]
    for name in help_sections(binary, list(path)).get("Subcommands", []):
        paths += command_paths(binary, (*path, name))
    return paths


def complete(completion, words):
    """The completion's candidates for words (the last is being completed), sorted."""
    script = ('source "$1"; spec="$(complete -p udon-mcp)"; function="${spec##*-F }"; function="${function%% *}"; '
              f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
              '"$function"; printf "%s\\n" "${COMPREPLY[@]}"')
    result = run(["bash", "-c", script, "bash", str(completion)])
    if result.returncode != 0:
        fail(f"completing {words}: bash exits {result.returncode}: {result.stderr.strip()}")
    return sorted(line for line in result.stdout.splitlines() if line)


def check_reference(prefix, binary):
    man1 = prefix / "share/man/man1"
    completion = prefix / "share/bash-completion/completions/udon-mcp"
    if not completion.is_file():
        fail(f"no bash completion at {completion}")
        return
    paths = command_paths(binary)
    if len(paths) < 2:
        fail("--help lists no commands")
    for path in paths:
        sections = help_sections(binary, path)
        page = man1 / ("-".join(["udon-mcp", *path]) + ".1.gz")
        options = long_options(sections)
        if not page.is_file():
            fail(f"no man page {page.name}")
        else:
            check_page(page, options)
        offered = complete(completion, ["udon-mcp", *path, "-"])
        for option in options:
            if option not in offered:
                fail(f"completion of 'udon-mcp {' '.join(path)} -' lacks {option}")
        commands = sections.get("Subcommands", [])
        if commands and complete(completion, ["udon-mcp", *path, ""]) != sorted(commands):
            fail(f"completion of 'udon-mcp {' '.join(path)} ' is not its commands {commands}")
    demo_page = man1 / "udon-mcp-demo-server.1.gz"
    if not demo_page.is_file():
        fail(f"no man page {demo_page.name}")
    else:
        check_page(demo_page, long_options(help_sections(binary.parent / "udon-mcp-demo-server", [])))
    print(f"check_installed: man pages and completion checked for {len(paths)} command paths and the demo server")


def check_page(page, options):
    text = gzip.decompress(page.read_bytes()).decode()
    for option in options:
        if option.replace("-", "\\-") not in text:
            fail(f"{page.name} does not name {option}")
    if shutil.which("groff"):
        rendered = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=text, capture_output=True,
                                  text=True, timeout=60)
        if rendered.returncode != 0 or rendered.stderr.strip():
            fail(f"groff warns about {page.name}: {rendered.stderr.strip()}")


def check_files(prefix):
    for relative in ["bin/udon-mcp", "bin/udon-mcp-demo-server", "share/doc/udon-mcp/README.md",
                     "share/doc/udon-mcp/copyright",
                     "share/doc/udon-mcp/changelog.Debian.gz",
                     "share/doc/udon-mcp/docs/contract.md", "share/doc/udon-mcp/docs/images/workbench-tool.png",
                     "share/doc/udon-mcp/examples/demo/reviews.yaml",
                     "share/udon-mcp/schemas/openudon.mcp-tool-manifest.0.1.schema.json"]:
        if not (prefix / relative).is_file():
            fail(f"not installed: {relative}")
    for binary in ["udon-mcp", "udon-mcp-demo-server"]:
        dynamic = run(["readelf", "-d", str(prefix / "bin" / binary)])
        if re.search(r"\((RPATH|RUNPATH)\)", dynamic.stdout):
            fail(f"{binary} carries an RPATH (the build tree)")


def check_modes(deb):
    """Every directory of the package 0755, the binaries 0755, every other file 0644, all
    root's: whatever the packager's umask was (contract 7.22)."""
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True, timeout=600)
    if data.returncode != 0:
        fail(f"dpkg-deb --fsys-tarfile exits {data.returncode}")
        return
    entries = 0
    with tarfile.open(fileobj=io.BytesIO(data.stdout)) as archive:
        for entry in archive:
            entries += 1
            name = entry.name.removeprefix("./")
            mode = entry.mode & 0o7777
            wanted = 0o755 if entry.isdir() or name.startswith("usr/bin/") else 0o644
            if mode != wanted and not entry.issym():
                fail(f"{entry.name} has mode {mode:04o}, not {wanted:04o}")
            if (entry.uid, entry.gid) != (0, 0):
                fail(f"{entry.name} belongs to {entry.uid}:{entry.gid}, not root")
    print(f"check_installed: the modes and owners of the package's {entries} entries checked")


def check_version(binary):
    for program in [binary, binary.parent / "udon-mcp-demo-server"]:
        result = run([str(program), "--version"])
        line = result.stdout.strip()
        pattern = rf"{program.name} [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{{12}}|unknown)\)"
        if result.returncode != 0 or not re.fullmatch(pattern, line):
            fail(f"{program.name} --version: exit {result.returncode}, {line!r}")
        else:
            print(f"check_installed: {line}")


def user_env(work):
    """A user's environment inside the throwaway root: its own HOME and state."""
    return dict(os.environ, HOME=str(work / "home"), XDG_STATE_HOME=str(work / "home/.local/state"),
                UDON_MCP_STATE_DIR=str(work / "state"))


def check_demo(binary, work):
    result = run([str(binary), "demo", "--dir", str(work / "demo")], cwd=work, env=user_env(work))
    installed_server = str(binary.parent / "udon-mcp-demo-server")
    if result.returncode != 0:
        fail(f"demo exits {result.returncode}: {result.stderr[-2000:]}")
    elif f"against {installed_server}" not in result.stdout:
        fail(f"demo did not run the installed demo server: {result.stdout.splitlines()[:1]}")
    else:
        print("check_installed: demo ran against the installed demo server")


def check_serve(binary, work):
    manifest = work / "demo/demo.tools.json"
    if not manifest.is_file():
        fail("no demo manifest to serve")
        return
    config = work / "mcp.json"
    server = {"command": str(binary.parent / "udon-mcp-demo-server")}
    config.write_text(json.dumps({"mcpServers": {"demo": server}}))
    digest = run([str(binary), "digest", str(manifest)])
    pin = work / "demo.pin"
    pin.write_text(digest.stdout.strip() + "\n")
    argv = [str(binary), "serve", "--manifest", str(manifest), "--pin-file", str(pin), "--config", str(config)]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=user_env(work)) as serve:
        answers = stdio_dialog(serve)
        serve.stdin.close()
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()
            fail("serve did not exit when its stdin closed")
        stderr = serve.stderr.read()
    if len(answers) != 2 or "result" not in answers[0] or "result" not in answers[1]:
        fail(f"serve did not answer initialize and tools/list: {answers} {stderr[-2000:]}")
        return
    offered = sorted(tool["name"] for tool in answers[1]["result"]["tools"])
    reviewed = sorted(json.loads(manifest.read_text())["servers"]["demo"]["reviews"])
    if offered != reviewed:
        fail(f"serve offers {offered}, the manifest's reviewed tools are {reviewed}")
    else:
        print(f"check_installed: serve (stdio) offers the {len(offered)} reviewed tools")


def check_readme(prefix, work):
    """Runs the README's first-server block (the package section) with the installed bin/ on PATH."""
    readme = (prefix / "share/doc/udon-mcp/README.md").read_text()
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "# 1. capture" in b]
    if len(blocks) != 1:
        fail("the README has no single first-server block ('# 1. capture')")
        return
    folder = work / "readme"
    folder.mkdir()
    env = dict(user_env(work), PATH=f"{prefix / 'bin'}:{os.environ['PATH']}")
    result = run(["bash", "-e", "-o", "pipefail", "-c", blocks[0]], cwd=folder, env=env, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        fail(f"the README's first-server block exits {result.returncode}: {result.stderr[-2000:]}")
    elif '"value": 2000' not in result.stdout or "offering 1 reviewed tool" not in result.stderr:
        fail(f"the README's first-server block did not call and serve: {result.stdout} {result.stderr}")
    else:
        print("check_installed: the README's first server ran as written")


def stdio_dialog(serve):
    """initialize, initialized, tools/list; the two answers (or fewer if serve stops)."""
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "check_installed", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    answers = []
    for request in requests:
        serve.stdin.write(json.dumps(request) + "\n")
        serve.stdin.flush()
        while "id" in request:
            line = serve.stdout.readline()
            if not line:
                return answers
            message = json.loads(line)
            if message.get("id") == request["id"]:
                answers.append(message)
                break
    return answers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--install-from", help="a configured build directory to `cmake --install`")
    source.add_argument("--deb", help="a udon-mcp .deb to unpack with dpkg -x")
    parser.add_argument("--prefix", default="/usr/local", help="install prefix (a .deb's is /usr)")
    parser.add_argument("--work", help="the throwaway root's parent (default: a new temporary folder)")
    parser.add_argument("--modes-only", action="store_true",
                        help="with --deb: the modes and owners only (the files are those of a package checked in full)")
    args = parser.parse_args()
    if args.modes_only:
        if not args.deb:
            parser.error("--modes-only goes with --deb")
        check_modes(args.deb)
        print("check_installed: ok (modes only)" if not failures else f"check_installed: {len(failures)} failures")
        return 1 if failures else 0
    if args.deb:
        args.prefix = "/usr"
    work = Path(tempfile.mkdtemp(prefix="udon-installed-", dir=args.work)).resolve()
    root = work / "root"
    install(args, root)
    prefix = root / args.prefix.lstrip("/")
    binary = prefix / "bin/udon-mcp"
    if args.deb:
        check_modes(args.deb)
    check_files(prefix)
    check_version(binary)
    check_reference(prefix, binary)
    check_demo(binary, work)
    check_serve(binary, work)
    check_readme(prefix, work)
    if failures:
        print(f"check_installed: {len(failures)} failures; the tree stays in {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work)
    print("check_installed: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
