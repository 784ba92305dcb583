#!/usr/bin/env python3
"""Keeps the Architecture article's module table and its lists of locks and bridges in step
with the code (issue 56.3).

    scripts/check-architecture.py

Reads Package.swift, every Swift file under Sources/ and the article
Sources/Environments/Environments.docc/Architecture.md, and fails (exit 1, with what to update)
when:

- a target of Package.swift (every kind but `.testTarget`: libraries, executables, system
  libraries, plugins, the test-support targets) has no row in the article's "## Modules" table,
  or a row names no target; and a folder of Sources/ or Plugins/ that is no target this script
  found (a new way of declaring one that it must learn);
- a type locks something of its own (a pthread mutex, read-write lock or spin lock,
  `os_unfair_lock`, the standard library's `Mutex`, `NSLock` and its kin, `flock(2)`,
  `fcntl` locks) and is not in the article's "### Locks" list;
- a type hands work between threads and async code or between threads (it makes a `Thread`, a
  pthread, a `DispatchQueue`, a `DispatchSemaphore` or `DispatchGroup`, a continuation, an
  `AsyncStream` or `AsyncThrowingStream`) and is neither in the article's "### Where work
  crosses threads" list nor in NOT_BRIDGES below with its reason;
- an entry of either list names a type that Sources/ does not declare, or declares in another
  module than the entry says ("- `Type` (module `Module`): ...");
- a module of Sources/ imports more of Foundation than the table's Foundation column says
  ("none", "Essentials": `FoundationEssentials` where it exists, full Foundation only in the
  `#else` of `#if canImport(FoundationEssentials)`), or says "full" and imports no more than
  Essentials (issue 55: a daemon that reads plists links no ICU data).

C sources (Sources/*/*.c, .h) are read too, each file as one unit, listed by its file name.
A type counts when it, or a type around it, is the one listed (`DedicatedThread` covers its
nested `Handoff`). Comments and strings are not read. Standard library only; well under a second.
"""

import os
import re
import sys

from lib.swift_scopes import SwiftFile, swift_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARTICLE = "Sources/Environments/Environments.docc/Architecture.md"

LOCK = re.compile(
    r"\bpthread_(mutex|rwlock|spin)_(lock|trylock|wrlock|rdlock)\b|\bos_unfair_lock\b|\bOSAllocatedUnfairLock\b"
    r"|\bMutex\s*[<(]|\bNS(Recursive)?Lock\b|\bNSCondition(Lock)?\b|\bflock\s*\(|\bF_SETLKW?\b|\bF_OFD_SETLKW?\b"
)
HANDOFF = re.compile(
    r"\bThread\s*[({]|\bpthread_create\b|\bDispatchQueue\s*\(|\bDispatchQueue\.global\b|\bDispatchSemaphore\s*\("
    r"|\bDispatchGroup\s*\(|\bwith(Checked|Unsafe)(Throwing)?Continuation\b"
    r"|\bAsync(Throwing)?Stream\b[^\n{]*?(\.makeStream\b|\{)"
)

# Types that make one of HANDOFF's primitives without handing anything between threads.
NOT_BRIDGES = {
    "ConfigurationReloader": "an actor: the continuations of its waiting reloads are resumed by the actor itself, "
    "between tasks, with no thread of ours in between",
    "EtcdClient": "a watch's stream is fed by a task of its own (async code to async code); AsyncHTTPClient's "
    "threads are behind its async API",
    "FleetStatusReporter": "a stream of wake-ups from async code (a reload's outcome, a graceful stop) to its own task",
}


def fail(problems):
    for problem in problems:
        print(f"scripts/check-architecture.py: {problem}", file=sys.stderr)
    print(
        f"\n{len(problems)} problem(s). Update {ARTICLE} (its \"## Modules\" table, its \"### Locks\" and "
        "\"### Where work crosses threads\" lists, saying what each is), or, for a type that makes a thread, "
        "queue, continuation or stream but hands nothing between threads, NOT_BRIDGES in this script with its "
        "reason.",
        file=sys.stderr,
    )
    sys.exit(1)


def targets():
    """(modules, test targets) that Package.swift declares."""
    text = open(os.path.join(ROOT, "Package.swift"), encoding="utf-8").read()
    text = re.sub(r"//[^\n]*", "", text)
    modules, tests = set(), set()
    for kind, name in re.findall(
        r"\.(target|executableTarget|systemLibrary|plugin|binaryTarget|macro|testTarget)\(\s*name:\s*\"([^\"]+)\"", text
    ):
        (tests if kind == "testTarget" else modules).add(name)
    # Helpers that declare a target from their first argument (`func exampleDaemon(_ name: String, ...)`).
    for helper in re.findall(r"func\s+(\w+)\(\s*_\s+name:\s*String[^{]*\{[^}]*?\.\w*[tT]arget\(\s*name:\s*name", text):
        modules.update(re.findall(rf"\b{helper}\(\s*\"([^\"]+)\"", text))
    return modules, tests


def article_sections():
    text = open(os.path.join(ROOT, ARTICLE), encoding="utf-8").read()

    def section(heading):
        match = re.search(rf"^{re.escape(heading)}\s*$(.*?)(?=^#{{2,3}} |\Z)", text, re.M | re.S)
        return match.group(1) if match else None

    return section("## Modules"), section("### Locks"), section("### Where work crosses threads")


def listed(section):
    """{type: module} of a list's entries: "- `Type` (module `Module`)"."""
    return {
        name: module
        for name, module in re.findall(r"^- `([A-Za-z_][\w.]*)[^`]*`(?: \(module `([\w-]+)`\))?", section, re.M)
    }


def check_modules(problems, table):
    modules, _ = targets()
    rows = set(re.findall(r"^\| `([\w-]+)` \|", table, re.M))
    for name in sorted(modules - rows):
        problems.append(f"the target {name} (Package.swift) has no row in the Modules table of {ARTICLE}")
    for name in sorted(rows - modules):
        problems.append(f"the Modules table of {ARTICLE} has a row for {name}, which Package.swift does not declare")
    for folder in ("Sources", "Plugins"):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if os.path.isdir(os.path.join(ROOT, folder, name)) and not name.endswith(".docc") and name not in modules:
                problems.append(
                    f"{folder}/{name} is no target this script found in Package.swift: declare it, or teach "
                    "targets() in scripts/check-architecture.py how it is declared"
                )


FULL_IMPORT = re.compile(r"^\s*(@preconcurrency )?(public |package |internal )?import Foundation(Networking|XML)?\s*$")
ESSENTIALS_IMPORT = re.compile(r"^\s*(public |package |internal )?import FoundationEssentials\s*$")


def check_foundation(problems, table):
    """Each module's imports of Foundation against the table's Foundation column."""
    said = dict(re.findall(r"^\| `([\w-]+)` \|[^|]*\|[^|]*\| (none|Essentials|full)\b[^|]*\|$", table, re.M))
    imports = {}
    for module, swift_file in sources():
        lines = open(swift_file.path, encoding="utf-8").read().split("\n")
        for index, line in enumerate(lines):
            previous = lines[index - 1].strip() if index else ""
            if FULL_IMPORT.match(line) and not previous.startswith(("#else", "#elseif")):
                imports[module] = "full"
            elif ESSENTIALS_IMPORT.match(line) and imports.get(module) != "full":
                imports[module] = "Essentials"
    modules, _ = targets()
    for module in sorted(modules):
        if not os.path.isdir(os.path.join(ROOT, "Sources", module)):
            continue
        found, claim = imports.get(module, "none"), said.get(module)
        if claim is None:
            problems.append(f"the row of {module} in the Modules table of {ARTICLE} has no Foundation column")
        elif found == "full" and claim != "full":
            problems.append(f"{module} imports full Foundation, but its row in {ARTICLE} says {claim}")
        elif claim == "full" and found != "full":
            problems.append(f"{module} imports no more than {found}, but its row in {ARTICLE} says full")
        elif claim == "none" and found == "Essentials":
            problems.append(f"{module} imports FoundationEssentials, but its row in {ARTICLE} says none")


_SOURCES = []


def sources():
    """[(module, SwiftFile)] of every Swift file under Sources/, read once."""
    if not _SOURCES:
        for path in swift_files(ROOT, "Sources"):
            module = os.path.relpath(path, os.path.join(ROOT, "Sources")).split(os.sep)[0]
            _SOURCES.append((module, SwiftFile(path)))
    return _SOURCES


def declarations():
    """{type name: set of modules that declare it} across Sources/."""
    declared = {}
    for module, source in sources():
        for name in re.findall(r"\b(?:class|struct|enum|actor|protocol)\s+([A-Za-z_]\w*)", source.code):
            declared.setdefault(name, set()).add(module)
    return declared


def users(pattern):
    """[(type names around the use, outermost first, or the file's name), module, file:line] of each use."""
    found = []
    for module, source in sources():
        path = source.path
        for match in pattern.finditer(source.code):
            names = []
            for scope in source.enclosing(match.start(), kind="type"):
                names += scope.name.split(".")
            where = f"{os.path.relpath(path, ROOT)}:{source.line_of(match.start())}"
            found.append((names or [os.path.basename(path)], module, where, re.sub(r"[\s({]+$", "", match.group(0))))
    # C sources: the file is the unit (listed by its name, `EarlySignals.c`), comments dropped.
    for directory, _, files in os.walk(os.path.join(ROOT, "Sources")):
        for name in sorted(f for f in files if f.endswith((".c", ".h", ".cpp"))):
            path = os.path.join(directory, name)
            code = re.sub(r"//[^\n]*|/\*.*?\*/", " ", open(path, encoding="utf-8", errors="replace").read(), flags=re.S)
            module = os.path.relpath(path, os.path.join(ROOT, "Sources")).split(os.sep)[0]
            for match in pattern.finditer(code):
                where = f"{os.path.relpath(path, ROOT)}:{code.count(chr(10), 0, match.start()) + 1}"
                found.append(([name], module, where, re.sub(r"[\s({]+$", "", match.group(0))))
    return found


def check_list(problems, section, heading, pattern, what, exempt, declared):
    entries = listed(section)
    for name, module in sorted(entries.items()):
        root = name.split(".")[0]
        if name.endswith((".c", ".h", ".cpp")):
            if not module or not os.path.exists(os.path.join(ROOT, "Sources", module, name)):
                problems.append(f"{heading} of {ARTICLE} lists {name}, which is not Sources/{module}/{name}")
        elif root not in declared:
            problems.append(f"{heading} of {ARTICLE} lists {name}, which no file of Sources/ declares")
        elif module and module not in declared[root]:
            problems.append(
                f"{heading} of {ARTICLE} says {name} is in the module {module}; it is declared in "
                + ", ".join(sorted(declared[root]))
            )
    seen = set()
    for names, module, where, primitive in users(pattern):
        if any(n in entries or n in exempt for n in names) or (names[-1], primitive) in seen:
            continue
        seen.add((names[-1], primitive))
        problems.append(f"{'.'.join(names)} (module {module}, {where}) {what} ({primitive}) and is not in {heading}")


def main():
    table, locks, bridges = article_sections()
    problems = []
    for heading, section in (("## Modules", table), ("### Locks", locks), ("### Where work crosses threads", bridges)):
        if section is None:
            problems.append(f"{ARTICLE} has no section \"{heading}\"")
    if problems:
        fail(problems)
    check_modules(problems, table)
    check_foundation(problems, table)
    declared = declarations()
    check_list(problems, locks, "the list \"### Locks\"", LOCK, "holds a lock of its own", {}, declared)
    check_list(
        problems, bridges, "the list \"### Where work crosses threads\"", HANDOFF,
        "hands work between threads", NOT_BRIDGES, declared,
    )
    for name in sorted(NOT_BRIDGES):
        if name not in declared:
            problems.append(f"NOT_BRIDGES in scripts/check-architecture.py names {name}, which Sources/ does not declare")
    if problems:
        fail(problems)
    modules, _ = targets()
    print(
        f"Architecture: {len(modules)} modules, {len(listed(locks))} types with locks, "
        f"{len(listed(bridges))} bridges, {len(NOT_BRIDGES)} types that are no bridge: in step with the code"
    )


if __name__ == "__main__":
    main()
