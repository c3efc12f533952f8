#!/usr/bin/env python3
"""Generates the seed corpus of each fuzz target from the project's test data.

Seeds are written to OUT/<target>/, one file per seed named by its SHA-1, and never
committed: they come from the project's own test data (tests/data/: RFC 8785 examples,
UWS fixtures, the ES6 edge cases), the external suites that scripts/testdata.sh provides
in the build tree (RFC 8785 vectors, the JSON-Schema-Test-Suite), the bundled
meta-schemas, src/*/testdata, examples/ and schemas/. Hand-written seeds live in
fuzz/seeds/<target>/ and are used beside these.

Usage: make_seeds.py --testdata-dir DIR [--out DIR] [target...]   (no target: all)
"""

import argparse
import decimal
import hashlib
import json
import pathlib
import re
import shutil
import struct
import sys

SOURCE_DIR = pathlib.Path(__file__).resolve().parent.parent
MAX_SEED_BYTES = 64 * 1024  # larger documents slow every mutation down


def read_json(path):
    try:
        return json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError):
        return None


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


class Corpus:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    def add(self, data):
        if isinstance(data, str):
            data = data.encode()
        if len(data) > MAX_SEED_BYTES:
            return
        (self.directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
        self.count += 1


def es6_text(value):
    """The ECMAScript rendering of a finite double (Number::toString, RFC 8785 3.2.2.3),
    built from Python's shortest round-trip digits."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digits_tuple.digits)).rstrip("0") or "0"
    point = len(digits_tuple.digits) + digits_tuple.exponent  # digits before the point
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    exponent = point - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


class Sources:
    def __init__(self, testdata):
        self.testdata = testdata  # the external suites (scripts/testdata.sh --out)
        self.own = SOURCE_DIR / "tests" / "data"

    def json_files(self):
        """Every JSON document of the test data, small ones only, in a stable order."""
        roots = [
            self.testdata / "jcs" / "input",
            self.testdata / "jcs" / "output",
            self.own / "jcs" / "rfc8785",
            self.testdata / "json-schema-test-suite" / "tests",
            SOURCE_DIR / "src" / "schema" / "metaschemas",
            self.own / "uws",
            SOURCE_DIR / "examples",
            SOURCE_DIR / "schemas",
        ]
        roots += sorted((SOURCE_DIR / "src").glob("*/testdata"))
        for root in roots:
            for path in sorted(root.rglob("*.json")):
                if path.stat().st_size <= MAX_SEED_BYTES:
                    yield path

    def yaml_files(self):
        for root in [SOURCE_DIR / "examples", self.own / "uws"]:
            for pattern in ("*.yaml", "*.yml"):
                yield from sorted(root.rglob(pattern))

    def es6_numbers(self, limit):
        """Expected ES6 renderings: RFC 8785's Appendix B, then the edge cases that open
        upstream's ES6 number sequence."""
        numbers = []
        with (self.own / "jcs" / "rfc8785" / "appendix-b-numbers.txt").open() as lines:
            for line in lines:
                parts = line.strip().split(",")
                if len(parts) == 2 and parts[1]:
                    numbers.append(parts[1])
        with (self.own / "jcs" / "es6-edge-cases.txt").open() as lines:
            for line in lines:
                bits = int(line.strip(), 16)
                numbers.append(es6_text(struct.unpack("<d", bits.to_bytes(8, "little"))[0]))
        return numbers[:limit]

    def schema_tests(self):
        """(flags, schema, instance) from the JSON-Schema-Test-Suite: bit 0 asserts
        formats (optional/format), bit 1 defaults to draft-07, bit 2 checks the schema
        against its meta-schema (first test of every group)."""
        suite = self.testdata / "json-schema-test-suite" / "tests"
        for dialect, dialect_flag in (("draft2020-12", 0), ("draft7", 2)):
            for path in sorted((suite / dialect).rglob("*.json")):
                groups = read_json(path)
                if not isinstance(groups, list):
                    continue
                format_flag = 1 if "format" in path.parts else 0
                for group in groups:
                    # Two tests per group (usually one valid, one invalid instance) keep the
                    # corpus small enough to load in seconds; the fuzzer finds the rest.
                    for index, test in enumerate(group.get("tests", [])[:2]):
                        meta_flag = 4 if index == 0 else 0
                        yield (dialect_flag | format_flag | meta_flag, group["schema"],
                               test["data"])


def walk_paths(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for name, member in value.items():
            yield from walk_paths(member, path + (name,))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield from walk_paths(member, path + (str(index),))


def pointer(tokens):
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def strings_in(value):
    for _, member in walk_paths(value):
        if isinstance(member, str):
            yield member


def tool_schemas(value):
    """inputSchema/outputSchema objects anywhere in a document (tool lists, manifests)."""
    for tokens, member in walk_paths(value):
        if tokens and tokens[-1] in ("inputSchema", "outputSchema") and isinstance(member, dict):
            yield member


def gen_json_parse(sources, corpus):
    for path in sources.json_files():
        corpus.add(path.read_bytes())
    corpus.add("[" + ",".join(sources.es6_numbers(500)) + "]")


def gen_json_canonical(sources, corpus):
    gen_json_parse(sources, corpus)
    for number in sources.es6_numbers(200):
        corpus.add(number)


def gen_json_pointer(sources, corpus):
    for path in sources.json_files():
        document = read_json(path)
        if document is None:
            continue
        text = compact(document)
        paths = [tokens for tokens, _ in walk_paths(document)]
        # The root, a few early paths and the deepest one.
        chosen = paths[:3] + [max(paths, key=len)]
        for tokens in chosen:
            corpus.add(pointer(tokens).encode() + b"\n" + text)
        # Fragment pointers of $ref values, against their own document.
        for string in strings_in(document):
            if string.startswith("#/"):
                corpus.add(string[1:].encode() + b"\n" + text)


def gen_json_yaml(sources, corpus):
    for path in sources.yaml_files():
        corpus.add(path.read_bytes())
    for index, path in enumerate(sources.json_files()):
        if index % 8 == 0:  # JSON is YAML; a sample is enough
            corpus.add(path.read_bytes())


def gen_schema(sources, corpus):
    for flags, schema, instance in sources.schema_tests():
        corpus.add(bytes([flags]) + compact(schema) + b"\n" + compact(instance))
    for path in sources.json_files():
        document = read_json(path)
        if document is None:
            continue
        for schema in tool_schemas(document):
            corpus.add(b"\x00" + compact(schema) + b"\n{}")


def gen_mcp_jsonrpc(sources, corpus):
    for path in sources.json_files():
        if "testdata" in path.parts and "src" in path.parts:
            document = read_json(path)
            if document is not None:
                corpus.add(compact({"jsonrpc": "2.0", "id": 1, "result": document}))


def gen_mcp_connection(sources, corpus):
    for path in sorted((SOURCE_DIR / "fuzz" / "seeds" / "mcp_jsonrpc").glob("*")):
        corpus.add(path.read_bytes().replace(b"\n", b""))


def gen_mcp_sse(sources, corpus):
    for path in sorted((SOURCE_DIR / "fuzz" / "seeds" / "mcp_jsonrpc").glob("*")):
        frame = path.read_bytes().replace(b"\n", b"")
        stream = b"id: 1\nevent: message\ndata: " + frame + b"\n\n"
        corpus.add(b"\x00" + stream)
        corpus.add(b"\x03\x01\x07\x0d" + stream.replace(b"\n", b"\r\n"))


EXPRESSION = re.compile(r"^\$[A-Za-z]")


def gen_uws_expression(sources, corpus):
    documents = [read_json(path) for path in sources.json_files() if "uws" in str(path)]
    for document in documents:
        if document is None:
            continue
        for string in strings_in(document):
            if EXPRESSION.match(string):
                corpus.add(string)
    for path in sources.yaml_files():
        for match in re.finditer(rb"['\"]?(\$[A-Za-z][^'\"\n]*)", path.read_bytes()):
            corpus.add(match.group(1).strip())


def gen_manifest(sources, corpus):
    for path in sources.json_files():
        document = read_json(path)
        if isinstance(document, dict) and document.get("profile") == "openudon.mcp-tool-manifest.0.1":
            corpus.add(path.read_bytes())
            corpus.add(compact(document))


GENERATORS = {
    "json_parse": gen_json_parse,
    "json_canonical": gen_json_canonical,
    "json_pointer": gen_json_pointer,
    "json_yaml": gen_json_yaml,
    "schema": gen_schema,
    "mcp_jsonrpc": gen_mcp_jsonrpc,
    "mcp_connection": gen_mcp_connection,
    "mcp_sse": gen_mcp_sse,
    "uws_expression": gen_uws_expression,
    "manifest": gen_manifest,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testdata-dir", type=pathlib.Path, required=True,
                        help="the external suites, as scripts/testdata.sh --out writes them")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("build-fuzz/fuzz/seeds"))
    parser.add_argument("targets", nargs="*")
    args = parser.parse_args()
    unknown = [t for t in args.targets if t not in GENERATORS]
    if unknown:
        sys.exit("unknown fuzz target: " + " ".join(unknown))
    missing = [name for name in ("jcs", "json-schema-test-suite")
               if not (args.testdata_dir / name / ".verified").is_file()]
    if missing:
        sys.exit(f"make_seeds.py: {', '.join(missing)} not in {args.testdata_dir}: run scripts/testdata.sh --out {args.testdata_dir}")
    sources = Sources(args.testdata_dir)
    for target in args.targets or sorted(GENERATORS):
        directory = args.out / target
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        corpus = Corpus(directory)
        GENERATORS[target](sources, corpus)
        print(f"{target}: {len(list(directory.iterdir()))} seeds in {directory}")


if __name__ == "__main__":
    main()
