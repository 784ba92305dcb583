#!/usr/bin/env python3
"""Lists the Swift Testing tests that can fail for no stated reason: `@Test` functions with no
expectation of their own nor in a helper they call (issue 56.4).

    scripts/expectation-less-tests.py [--list]

An expectation is `#expect` (and `#expect(throws:)`, `#expect(processExitsWith:)`), `#require`,
`Issue.record` or `confirmation(`. A test counts as having one when its body holds one, or calls a
function that holds one, directly or through other functions: every function of the test's own
target (its folder under Tests/) and of the support targets (Tests/TestSupport,
Tests/EtcdTestSupport), resolved by name, to a fixed point (`helper(`, `.helper(`, `helper {`;
an `init` of a type `T` by `T(`). A static approximation: a call to a function of the same name
elsewhere counts too. Comments and strings are not read.

Such a test passes unless it throws, crashes or hangs: whatever it claims is not checked. Each
one found is either given a real expectation of what it claims, or listed in ALLOWED below with
the reason it needs none. Exit status 1, naming them, when a test is found that ALLOWED does not
explain, or when an entry of ALLOWED matches no such test any more (remove it). --list prints
every test found, explained or not. Standard library only; a few seconds.

LEFT_OUT names a test folder left out, with the reason; it is empty.
"""

import argparse
import os
import re
import sys

from lib.swift_scopes import SwiftFile, swift_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUPPORT = ("TestSupport", "EtcdTestSupport")
LEFT_OUT: dict[str, str] = {}
EXPECTATION = re.compile(r"#expect\b|#require\b|\bIssue\.record\s*\(|\bconfirmation\s*\(")

# "Tests/Folder/File.swift:function": why the test needs no expectation of its own.
COMPAT = (
    "runs swift-configuration's own compatibility suite (ConfigurationTesting's ProviderCompatTest.runTest()), "
    "whose #expect calls, in that package, are the expectations: every operation of the provider against the "
    "values given"
)
ALLOWED = {
    "Tests/EnvironmentsConfigurationTests/ProviderCompatTests.swift:inMemory": COMPAT,
    "Tests/EnvironmentsConfigurationTests/ProviderCompatTests.swift:fromFiles": COMPAT,
}


def targets():
    """{test folder: [SwiftFile]} of Tests/, support folders apart."""
    found = {}
    for name in sorted(os.listdir(os.path.join(ROOT, "Tests"))):
        if os.path.isdir(os.path.join(ROOT, "Tests", name)):
            found[name] = [SwiftFile(path) for path in swift_files(ROOT, os.path.join("Tests", name))]
    return found


def called(body, names):
    """The names of `names` that `body` calls."""
    calls = set(re.findall(r"\b([A-Za-z_]\w*)\s*[({]", body))
    return calls & names


def expecting_functions(files):
    """Names of the functions (an init as its type's name) that hold an expectation, directly
    or through the others."""
    bodies = {}
    for source in files:
        for scope in source.scopes:
            if scope.kind != "function":
                continue
            name = scope.names[-2] if scope.name == "init" and len(scope.names) > 1 else scope.name
            bodies.setdefault(name.split(".")[-1], []).append(scope.body)
    expecting = {name for name, texts in bodies.items() if any(EXPECTATION.search(text) for text in texts)}
    names = set(bodies)
    while True:
        more = {name for name in names - expecting if any(called(text, expecting) for text in bodies[name])}
        if not more:
            return expecting
        expecting |= more


def tests(source):
    """The `@Test` functions of a file: (scope, key)."""
    for scope in source.scopes:
        if scope.kind != "function":
            continue
        before = source.code[: scope.start]
        boundary = max(before.rfind("{"), before.rfind("}"), before.rfind(";"))
        if re.search(r"@Test\b", before[boundary + 1 :]):
            yield scope, f"{os.path.relpath(source.path, ROOT)}:{scope.name}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", action="store_true", help="print every test found, explained or not")
    arguments = parser.parse_args()
    folders = targets()
    support = [source for name in SUPPORT for source in folders.get(name, [])]
    found, counted = [], 0
    for folder, files in folders.items():
        if folder in SUPPORT or folder in LEFT_OUT:
            continue
        expecting = expecting_functions(files + support)
        for source in files:
            for scope, key in tests(source):
                counted += 1
                if EXPECTATION.search(scope.body) or called(scope.body, expecting):
                    continue
                found.append((key, ".".join(scope.names), source.line_of(scope.start)))
    unexplained = [entry for entry in found if entry[0] not in ALLOWED]
    stale = sorted(set(ALLOWED) - {key for key, _, _ in found})
    if arguments.list:
        for key, qualified, line in found:
            path = key.rsplit(":", 1)[0]
            print(f"{path}:{line}  {qualified}  {ALLOWED.get(key, 'NOT EXPLAINED')}")
    for key, qualified, line in unexplained:
        path = key.rsplit(":", 1)[0]
        print(
            f"scripts/expectation-less-tests.py: {path}:{line} {qualified} has no expectation (#expect, #require, "
            "Issue.record, confirmation) of its own nor in a function it calls: give it one of what it claims, or "
            "add it to ALLOWED with the reason it needs none",
            file=sys.stderr,
        )
    for key in stale:
        print(f"scripts/expectation-less-tests.py: ALLOWED explains {key}, which is no such test now: remove it",
              file=sys.stderr)
    left_out = ", ".join(f"Tests/{name}" for name in sorted(LEFT_OUT)) or "none"
    print(f"{counted} tests, {len(found)} without an expectation ({len(found) - len(unexplained)} explained); "
          f"left out: {left_out}")
    sys.exit(1 if unexplained or stale else 0)


if __name__ == "__main__":
    main()
