#!/usr/bin/env python3
"""Compares how our loader and Python's plistlib read the property lists of Tests/PlistCorpus.

Every file listed in Tests/PlistCorpus/sources.json is read by plistlib here, and by our loader
(PropertyListDocument, the parsed tree with literal keys) in the Swift test PlistCorpusTests,
which writes what it read to the file named by $PLIST_CORPUS_OUTPUT. Both sides are put in the
same canonical form (each value tagged with its type: integers in decimal, reals and dates
exactly, data in base64) and compared value by value. A file read differently, or refused by one
side only, must be listed in Tests/PlistCorpus/exceptions.json with the reason; a listed
exception that no longer happens is an error too, so the list stays true.

Usage:
  scripts/plist-corpus-compare.py [--scratch-path DIR]   runs the Swift test, then compares
  scripts/plist-corpus-compare.py --swift-output FILE    compares with a file written before

Standard library only. Exit status 0 when everything agrees or is a listed exception.
"""

import argparse
import base64
import datetime
import json
import os
import plistlib
import struct
import subprocess
import sys
import tempfile

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPOSITORY, "Tests", "PlistCorpus")
EPOCH = datetime.datetime(1970, 1, 1)


def canonical(value):
    """The canonical form of a plistlib value; the Swift test makes the same of ours."""
    # bool before int: a Python bool is an int.
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, float):
        return {"real": struct.pack(">d", value).hex()}
    if isinstance(value, datetime.datetime):
        # Microseconds since 1970 (plistlib reads dates as naive UTC with microseconds).
        return {"date": (value - EPOCH) // datetime.timedelta(microseconds=1)}
    if isinstance(value, (bytes, bytearray)):
        return {"data": base64.b64encode(value).decode("ascii")}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, list):
        return {"array": [canonical(element) for element in value]}
    if isinstance(value, dict):
        return {"dict": {key: canonical(element) for key, element in value.items()}}
    if isinstance(value, plistlib.UID):
        return {"uid": value.data}
    if value is None:  # plistlib's answer for a <plist> that holds no value
        return {"none": None}
    raise TypeError(f"unexpected {type(value).__name__}")


def compare(ours, theirs, path, differences):
    """Counts the values compared; appends where they differ."""
    if set(ours) != set(theirs):
        differences.append(f"{path}: ours {json.dumps(ours)[:200]}, plistlib {json.dumps(theirs)[:200]}")
        return 1
    (kind,) = ours
    if kind == "array":
        if len(ours[kind]) != len(theirs[kind]):
            differences.append(f"{path}: {len(ours[kind])} elements, plistlib {len(theirs[kind])}")
            return 1
        return 1 + sum(
            compare(a, b, f"{path}[{index}]", differences) for index, (a, b) in enumerate(zip(ours[kind], theirs[kind]))
        )
    if kind == "dict":
        mine, other = ours[kind], theirs[kind]
        count = 1
        for key in sorted(set(mine) | set(other)):
            if key not in mine or key not in other:
                differences.append(f"{path}: key {key!r} only in {'ours' if key in mine else 'plistlib'}")
                count += 1
            else:
                count += compare(mine[key], other[key], f"{path}/{key}", differences)
        return count
    if ours != theirs:
        differences.append(f"{path}: ours {json.dumps(ours)[:200]}, plistlib {json.dumps(theirs)[:200]}")
    return 1


def run_swift(scratch_path, output):
    command = ["swift", "test", "--skip-build", "--filter", "PlistCorpusTests"]
    if scratch_path:
        command += ["--scratch-path", scratch_path]
    environment = dict(os.environ, PLIST_CORPUS_OUTPUT=output)
    result = subprocess.run(command, cwd=REPOSITORY, env=environment, capture_output=True, text=True)
    if result.returncode != 0 or not os.path.exists(output):
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        sys.exit(f"plist-corpus-compare: the Swift test failed ({' '.join(command)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scratch-path", help="the build directory of `swift build --build-tests`")
    parser.add_argument("--swift-output", help="what PlistCorpusTests wrote before (skips running it)")
    parser.add_argument("--verbose", action="store_true", help="list every file's outcome")
    arguments = parser.parse_args()

    with open(os.path.join(CORPUS, "sources.json")) as file:
        sources = json.load(file)["sources"]
    with open(os.path.join(CORPUS, "exceptions.json")) as file:
        exceptions = json.load(file)["exceptions"]

    output = arguments.swift_output
    if output is None:
        output = os.path.join(tempfile.mkdtemp(), "swift.json")
        run_swift(arguments.scratch_path, output)
    with open(output) as file:
        swift = json.load(file)

    counts = {"files": 0, "compared": 0, "equal": 0, "files equal": 0, "exceptions": 0, "both refuse": 0}
    failures = []
    for source in sources:
        for path in source["files"]:
            name = f"{source['directory']}/{path}"
            counts["files"] += 1
            with open(os.path.join(CORPUS, name), "rb") as file:
                data = file.read()
            try:
                theirs = plistlib.loads(data)
                theirs_error = None
            except Exception as error:  # plistlib raises many kinds
                theirs, theirs_error = None, f"{type(error).__name__}: {error}"
            if name not in swift:
                failures.append(f"{name}: the Swift test did not read it")
                continue
            ours = swift[name].get("value")
            ours_error = swift[name].get("error")
            exception = exceptions.get(name)
            outcome, detail, differences = None, "", []
            if ours is not None and theirs_error is None:
                # A root that is no dictionary is refused by ours, so both are dictionaries here.
                differences = []
                compared = compare(ours, canonical(theirs), "", differences)
                counts["compared"] += compared
                counts["equal"] += compared - len(differences)
                if differences:
                    outcome, detail = "differs", "; ".join(differences[:5])
                else:
                    counts["files equal"] += 1
                    outcome = "equal"
            elif ours is None and theirs_error is not None:
                outcome, detail = "both refuse", f"ours: {ours_error}; plistlib: {theirs_error}"
                counts["both refuse"] += 1
            elif ours is None:
                outcome, detail = "ours refuses", ours_error
            else:
                outcome, detail = "plistlib refuses", theirs_error
            if outcome in ("differs", "ours refuses", "plistlib refuses"):
                if exception is None:
                    failures.append(f"{name}: {outcome}, not listed in exceptions.json: {detail}")
                elif exception["outcome"] != outcome:
                    failures.append(f"{name}: {outcome}, but exceptions.json says {exception['outcome']}: {detail}")
                else:
                    counts["exceptions"] += 1
            elif exception is not None and exception["outcome"] != outcome:
                failures.append(f"{name}: listed in exceptions.json as {exception['outcome']}, but: {outcome}")
            if arguments.verbose:
                print(f"{outcome:16} {name}" + (f"  ({detail[:300]})" if detail else ""))
    for name in exceptions:
        if not any(name == f"{s['directory']}/{p}" for s in sources for p in s["files"]):
            failures.append(f"{name}: listed in exceptions.json but not in sources.json")

    print(
        "plist corpus: {files} files ({files equal} read alike, {both refuse} refused by both, "
        "{exceptions} listed exceptions); {compared} values compared, {equal} equal".format(**counts)
    )
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
