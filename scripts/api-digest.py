#!/usr/bin/env python3
"""The public API of every library product, as a committed digest (api/<Module>.txt), and a
check that a change to it is deliberate (issue 43.4).

The digest has one line per public declaration of each Swift module of a library product:

    Module<TAB>kind<TAB>Type.member<TAB>the declaration, spelled out

and one per conformance (kind `conformance` or `inherits`: `SettingValue: Swift.Hashable`, and
the module's conformances of other modules' types to its protocols), sorted. It is read from the
modules of an existing debug build with swift-symbolgraph-extract (public and open only;
`package`, internal and `@_spi(...) public` declarations are not API), so the check costs seconds
after `swift build`, with no second build of a baseline.

  scripts/api-digest.py [--check] [--scratch-path DIR] [--package-path DIR]
      Compares the build's API with the committed digest (the default). A declaration removed or
      changed is breaking: it fails unless CHANGELOG.md's `## [Unreleased]` section has an entry
      marked **Breaking** that names it (its name, `get(_:as:)` or `get`; an initializer or a
      subscript by its type's name; every declaration of a module that is no longer a product by
      the module's name). Any difference, breaking or additive, also fails until the digest is
      written again, so the committed digest is always the current API. When the commit that
      added the CHANGELOG's newest release section holds a digest too, the breaking changes since
      that release must be listed as well, even when the digest was rewritten since.
  scripts/api-digest.py --write [--scratch-path DIR] [--package-path DIR]
      Writes the digest from the build (and removes the files of modules that are no longer a
      library product's). Commit api/ with the change.

Both print the number of public declarations, per module and in all (enum cases and protocol
requirements included; conformances apart). --scratch-path is the
build's (SwiftPM's --scratch-path; default .build in the package); the build must be current
(`swift build`, or scripts/test.sh's). Standard library only. Exit status: 0 when the API and
the digest agree, 1 when they do not, 2 when the build or the tools are missing.
"""

import argparse
import concurrent.futures
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

WRITE_HINT = "run scripts/api-digest.py --write and commit api/"
BREAKING_HINT = ("list it under [Unreleased] as **Breaking** (what to use instead) and run "
                 "scripts/api-digest.py --write")


def fail(message, status=2):
    print(f"api-digest: {message}", file=sys.stderr)
    sys.exit(status)


def run(command, **kwargs):
    return subprocess.run(command, check=False, capture_output=True, text=True, **kwargs)


# The package: its library products' Swift modules, and the build's modules.

def c99name(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def library_targets(package_path, swift):
    """The targets of the manifest's library products, in order, without duplicates."""
    # A scratch path of its own, which it does not create: the package's .build may be locked by
    # a build under way.
    with tempfile.TemporaryDirectory(prefix="api-digest-") as scratch:
        result = run([swift, "package", "--package-path", package_path,
                      "--scratch-path", os.path.join(scratch, "unused"), "dump-package"])
    if result.returncode != 0:
        fail(f"swift package dump-package failed:\n{result.stderr.strip()}")
    manifest = json.loads(result.stdout)
    targets = {target["name"]: target for target in manifest["targets"]}
    names = []
    for product in manifest["products"]:
        if "library" not in product["type"]:
            continue
        for name in product["targets"]:
            target = targets.get(name)
            # Only source targets make modules: not system libraries, binaries, plugins, macros.
            if target and target["type"] == "regular" and name not in names:
                names.append(name)
    return names, targets


def has_swift_sources(package_path, target):
    """Whether a target is Swift (else C or C++, which has no Swift API to digest)."""
    if target.get("path"):
        roots = [os.path.join(package_path, target["path"])]
    else:
        roots = [os.path.join(package_path, folder, target["name"])
                 for folder in ("Sources", "Source", "src", "srcs")]
    for root in roots:
        for _, _, files in os.walk(root):
            if any(name.endswith(".swift") for name in files):
                return True
    return False


def host_triple():
    machine = platform.machine()
    if sys.platform == "darwin":
        return f"{'arm64' if machine == 'arm64' else machine}-apple-macosx"
    return f"{machine}-unknown-linux-gnu"


def modules_directory(scratch, triple):
    for candidate in (os.path.join(scratch, "debug", "Modules"),
                      os.path.join(scratch, triple, "debug", "Modules"),
                      os.path.join(scratch, "debug"),
                      os.path.join(scratch, triple, "debug")):
        if os.path.isdir(candidate) and any(name.endswith(".swiftmodule") for name in os.listdir(candidate)):
            return candidate
    return None


def build_flags(scratch, modules):
    """The search paths each module was compiled with (its C modules' module maps and headers
    among them), from the build's llbuild manifest (debug.yaml), by module name."""
    flags = {}
    manifest = os.path.join(scratch, "debug.yaml")
    if not os.path.exists(manifest):
        return flags
    keep_with_value = {"-I", "-F", "-Fsystem", "-Isystem", "-Xcc", "-sdk", "-resource-dir",
                       "-module-cache-path", "-target"}
    with open(manifest, encoding="utf-8") as file:
        for line in file:
            stripped = line.strip()
            if not stripped.startswith("args: [") or '"-module-name"' not in stripped:
                continue
            try:
                args = json.loads(stripped[len("args: "):])
            except ValueError:
                continue
            try:
                name = args[args.index("-module-name") + 1]
                module_path = args[args.index("-emit-module-path") + 1]
            except (ValueError, IndexError):
                continue
            # The target platform's module, not the host tools' copy (Modules-tool).
            if name not in modules or os.path.basename(os.path.dirname(module_path)) == "Modules-tool":
                continue
            kept = []
            index = 0
            while index < len(args):
                if args[index] in keep_with_value and index + 1 < len(args):
                    kept += args[index:index + 2]
                    index += 2
                else:
                    index += 1
            flags[name] = kept
    return flags


def symbolgraph_extractor(swift):
    for candidate in (os.path.join(os.path.dirname(os.path.realpath(swift)), "swift-symbolgraph-extract"),
                      shutil.which("swift-symbolgraph-extract")):
        if candidate and os.access(candidate, os.X_OK):
            return [candidate]
    return [swift, "symbolgraph-extract"]


# Symbol graphs to digest lines.

def spelled(fragments):
    return re.sub(r"\s+", " ", "".join(fragment.get("spelling", "") for fragment in fragments)).strip()


def constraint(item):
    relation = {"conformance": ":", "superclass": ":", "sameType": " =="}.get(item.get("kind"), " ?")
    return f"{item.get('lhs')}{relation} {item.get('rhs')}"


# Conformances every type has unless it opts out, implied by the declaration itself.
IMPLICIT_PROTOCOLS = {"Swift.Copyable", "Swift.Escapable", "Swift.SendableMetatype"}


def demangled(usrs, swift):
    """Names of external types by their USRs (s:Sa: Swift.Array), with swift-demangle."""
    usrs = sorted(usr for usr in usrs if usr.startswith("s:"))
    tool = os.path.join(os.path.dirname(os.path.realpath(swift)), "swift-demangle")
    if not usrs or not os.access(tool, os.X_OK):
        return {}
    result = run([tool, "--compact"], input="".join("$s" + usr[2:] + "\n" for usr in usrs))
    names = result.stdout.splitlines() if result.returncode == 0 else []
    return dict(zip(usrs, names)) if len(names) == len(usrs) else {}


def digest_lines(module, graph_dir, swift):
    """The digest's lines of a module: one per public declaration, and one per conformance of
    a type to a protocol (kind `conformance` or `inherits`: not counted as declarations)."""
    graphs = []
    for name in sorted(os.listdir(graph_dir)):
        # Module.symbols.json, and Module@Other.symbols.json: its extensions of other modules' types.
        if name.endswith(".symbols.json") and (name.startswith(module + ".") or name.startswith(module + "@")):
            with open(os.path.join(graph_dir, name), encoding="utf-8") as file:
                graphs.append(json.load(file))
    lines = set()
    public = {}
    for graph in graphs:
        for symbol in graph.get("symbols", []):
            if symbol.get("spi") or symbol.get("accessLevel") not in ("public", "open"):
                continue
            public[symbol["identifier"]["precise"]] = symbol
            kind = symbol["kind"]["identifier"]
            kind = kind[len("swift."):] if kind.startswith("swift.") else kind
            path = ".".join(symbol["pathComponents"])
            declaration = spelled(symbol.get("declarationFragments", []))
            # A member of a constrained extension: its constraints are part of its API.
            constraints = symbol.get("swiftExtension", {}).get("constraints", [])
            if constraints:
                declaration += " (in extension where " + ", ".join(constraint(c) for c in constraints) + ")"
            lines.add(f"{module}\t{kind}\t{path}\t{declaration}")

    # Conformances (and superclasses, protocols' inheritance): of this module's types, and this
    # module's conformances of other modules' types to its protocols (Array:
    # SettingValueConvertible). Other modules' types are named by their members' parent, or
    # demangled from their USRs.
    relationships = [r for graph in graphs for r in graph.get("relationships", [])]
    names = {r["target"]: r["targetFallback"] for r in relationships
             if r.get("kind") == "memberOf" and r.get("targetFallback")}
    names.update({usr: module + "." + ".".join(symbol["pathComponents"]) for usr, symbol in public.items()})
    conformances = [r for r in relationships if r.get("kind") in ("conformsTo", "inheritsFrom")]
    unnamed = {usr for r in conformances for usr in (r["source"], r["target"])
               if usr not in names and not r.get("targetFallback")}
    names.update(demangled(unnamed, swift) if unnamed else {})
    for relationship in conformances:
        source, target = relationship["source"], relationship["target"]
        if source in public:
            shown = path = ".".join(public[source]["pathComponents"])
        elif target in public and source in names:
            # Another module's type, conforming to one of this module's protocols.
            shown = names[source]
            path = shown.split(".", 1)[-1]
        else:
            continue  # not public, or another module's conformance
        protocol = names.get(target) or relationship.get("targetFallback") or target
        if protocol in IMPLICIT_PROTOCOLS:
            continue
        text = f"{shown}: {protocol}"
        constraints = relationship.get("swiftConstraints", [])
        if constraints:
            text += " where " + ", ".join(constraint(c) for c in constraints)
        kind = "conformance" if relationship["kind"] == "conformsTo" else "inherits"
        lines.add(f"{module}\t{kind}\t{path}\t{text}")
    return lines


def extract(modules, scratch, swift):
    triple = host_triple()
    modules_dir = modules_directory(scratch, triple)
    if not modules_dir:
        fail(f"no built modules in {scratch}: build first (swift build --enable-all-traits --scratch-path {scratch})")
    missing = [module for module in modules if not os.path.exists(os.path.join(modules_dir, module + ".swiftmodule"))]
    if missing:
        fail(f"{', '.join(missing)} not built in {modules_dir}: build first "
             f"(swift build --enable-all-traits --scratch-path {scratch})")
    flags = build_flags(scratch, set(modules))
    extractor = symbolgraph_extractor(swift)
    work = tempfile.mkdtemp(prefix="api-digest-")

    def one(module):
        output = os.path.join(work, module)
        os.makedirs(output)
        module_flags = flags.get(module, [])
        command = extractor + ["-module-name", module, "-I", modules_dir,
                               "-minimum-access-level", "public", "-skip-synthesized-members",
                               "-omit-extension-block-symbols", "-output-dir", output]
        if "-target" not in module_flags:
            command += ["-target", triple]
        if "-module-cache-path" not in module_flags:
            command += ["-module-cache-path", os.path.join(work, "ModuleCache")]
        result = run(command + module_flags)
        if result.returncode != 0:
            return module, None, f"{' '.join(command[:3])} ... failed:\n{result.stderr.strip()}"
        return module, digest_lines(module, output, swift), None

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(len(modules), os.cpu_count() or 1))) as pool:
            results = list(pool.map(one, modules))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    digest = {}
    for module, lines, error in results:
        if error:
            fail(f"symbol graph of {module}: {error}")
        digest[module] = lines
    return digest


# The committed digest, the release's, and the CHANGELOG.

def read_digest_dir(api_dir):
    digest = {}
    if os.path.isdir(api_dir):
        for name in sorted(os.listdir(api_dir)):
            if name.endswith(".txt"):
                with open(os.path.join(api_dir, name), encoding="utf-8") as file:
                    digest[name[:-len(".txt")]] = {line.rstrip("\n") for line in file if line.strip()}
    return digest


def git(directory, *args):
    result = run(["git", "-C", directory, *args])
    return result.stdout if result.returncode == 0 else None


def release_digest(api_dir, changelog):
    """The digest at the commit that added the CHANGELOG's newest release section:
    (version, commit, digest, note); digest is None when there is none to compare with, and the
    note says why."""
    version = heading = None
    with open(changelog, encoding="utf-8") as file:
        for line in file:
            match = re.match(r"##\s*\[([^\]]+)\]", line)
            if match and match.group(1).lower() != "unreleased":
                version, heading = match.group(1), line.split(" - ")[0].strip()
                break
    if version is None:
        return None, None, None, "the CHANGELOG has no release section yet"
    top = git(os.path.dirname(os.path.abspath(changelog)), "rev-parse", "--show-toplevel") if shutil.which("git") else None
    if not top:
        return version, None, None, "no git history here"
    top = os.path.realpath(top.strip())
    commits = git(top, "log", "--format=%H", "-S", heading, "--", os.path.relpath(os.path.realpath(changelog), top))
    if not commits:
        return version, None, None, f"the commit that added [{version}] to the CHANGELOG is not in this clone"
    commit = commits.split()[-1]  # the oldest: the one that added the section
    folder = os.path.relpath(os.path.realpath(api_dir), top)
    names = git(top, "ls-tree", "--name-only", commit, folder + "/")
    digest = {}
    for path in (names or "").split():
        if path.endswith(".txt"):
            text = git(top, "show", f"{commit}:{path}") or ""
            digest[os.path.basename(path)[:-len(".txt")]] = {line for line in text.splitlines() if line.strip()}
    if not digest:
        return version, commit, None, f"the commit that added [{version}] to the CHANGELOG ({commit[:12]}) has no {folder}/"
    return version, commit, digest, None


def breaking_entries(changelog):
    """The entries of [Unreleased] marked **Breaking**: each a top-level list item with its
    nested items and continuation lines, or a paragraph."""
    entries, current, inside = [], [], False
    with open(changelog, encoding="utf-8") as file:
        for line in file:
            if re.match(r"##\s*\[", line):
                if inside:
                    break
                inside = "unreleased" in line.lower()
                continue
            if not inside:
                continue
            if not line.strip() or line.startswith("#") or re.match(r"[-*+] ", line):
                if current:
                    entries.append(" ".join(current))
                current = [] if (not line.strip() or line.startswith("#")) else [line.strip()]
            else:
                current.append(line.strip())
    if current:
        entries.append(" ".join(current))
    return [entry for entry in entries if "**Breaking" in entry]


def word(text, name):
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", text) is not None


def listed(line, entries):
    """Whether a **Breaking** entry names a declaration: its name (`get(_:as:)`), its base name
    (`get`), or for an initializer or a subscript its type's name with "init", "initializer" or
    "subscript"; a conformance by the type's name and the protocol's."""
    _, kind, path, declaration = line.split("\t", 3)
    components = path.split(".")
    name = components[-1]
    base = name.split("(")[0]
    if kind in RELATIONS:
        # A conformance: the entry names the type and the protocol.
        protocol = declaration.split(": ", 1)[-1].split(" where ")[0].split(".")[-1]
        return any(word(entry, name) and word(entry, protocol) for entry in entries)
    for entry in entries:
        if word(entry, name):
            return True
        if base in ("init", "subscript", "deinit"):
            if len(components) > 1 and word(entry, components[-2]) and (
                    base in entry or (base == "init" and "initializer" in entry)):
                return True
        elif base and word(entry, base):
            return True
    return False


def module_listed(module, entries):
    return any(word(entry, module) for entry in entries)


# Comparing.

RELATIONS = ("conformance", "inherits")


def key(line):
    """What a line declares: a changed declaration keeps its key (module, kind, path); a
    conformance is its own key."""
    fields = line.split("\t")
    return tuple(fields) if fields[1] in RELATIONS else tuple(fields[:3])


def declarations(lines):
    return sum(1 for line in lines if line.split("\t")[1] not in RELATIONS)

def compare(old, new):
    """Lines removed or changed (breaking) and added, as (kind, line, other) tuples."""
    breaking, added = [], []
    for module in sorted(set(old) | set(new)):
        before, after = old.get(module, set()), new.get(module, set())
        if module not in new:
            breaking += [("module gone", line, None) for line in sorted(before)]
            continue
        gone, came = before - after, after - before
        keys_after = {}
        for line in came:
            keys_after.setdefault(key(line), []).append(line)
        replaced = set()
        for line in sorted(gone):
            others = keys_after.get(key(line))
            if others:
                breaking.append(("changed", line, others))
                replaced.update(others)
            else:
                breaking.append(("removed", line, None))
        added += [("added", line, None) for line in sorted(came - replaced)]
    return breaking, added


def show(line):
    module, kind, path, declaration = line.split("\t", 3)
    return f"{module} {kind} {path}: {declaration}"


def report_breaking(breaking, entries, against):
    unlisted = []
    for kind, line, others in breaking:
        module = line.split("\t", 1)[0]
        ok = listed(line, entries) or (kind == "module gone" and module_listed(module, entries))
        if not ok:
            unlisted.append((kind, line, others))
    for kind, line, others in unlisted:
        if kind == "changed":
            module, kind_name, path, declaration = line.split("\t", 3)
            print(f"  changed  {module} {kind_name} {path}")
            print(f"       was {declaration}")
            for other in others:
                print(f"       now {other.split(chr(9), 3)[3]}")
        elif kind == "module gone":
            print(f"  removed  {show(line)}  (the module is no longer a library product's)")
        else:
            print(f"  removed  {show(line)}")
    if unlisted:
        print(f"api-digest: {len(unlisted)} breaking change(s) {against} that CHANGELOG.md does not "
              f"list: {BREAKING_HINT}")
    listed_count = len(breaking) - len(unlisted)
    if listed_count:
        print(f"api-digest: {listed_count} breaking change(s) {against}, listed as **Breaking** in [Unreleased]")
    return len(unlisted)


def print_counts(digest):
    print("api-digest: public declarations (and conformances) per module:")
    for module in sorted(digest):
        lines = digest[module]
        print(f"  {module:<28} {declarations(lines):>5}  ({len(lines) - declarations(lines)})")
    total = sum(declarations(lines) for lines in digest.values())
    relations = sum(len(lines) for lines in digest.values()) - total
    print(f"api-digest: {total} public declarations in {len(digest)} modules "
          f"(and {relations} conformances; the goal: at most 280, spent where users need a capability)")


def write(api_dir, digest, old):
    os.makedirs(api_dir, exist_ok=True)
    for module, lines in digest.items():
        path = os.path.join(api_dir, module + ".txt")
        text = "".join(line + "\n" for line in sorted(lines))
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(tmp, path)
    for module in old:
        if module not in digest:
            os.remove(os.path.join(api_dir, module + ".txt"))
            print(f"api-digest: removed {os.path.join(api_dir, module + '.txt')} (no longer a library product's module)")


def find_changelog(package_path):
    directory = os.path.abspath(package_path)
    while True:
        candidate = os.path.join(directory, "CHANGELOG.md")
        if os.path.exists(candidate):
            return candidate
        if os.path.isdir(os.path.join(directory, ".git")) or os.path.dirname(directory) == directory:
            return None
        directory = os.path.dirname(directory)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare with the committed digest (the default)")
    mode.add_argument("--write", action="store_true", help="write the digest from the build")
    parser.add_argument("--package-path", default=".", help="the package (default: .)")
    parser.add_argument("--scratch-path", help="the debug build's scratch path (default: PACKAGE/.build)")
    parser.add_argument("--api-dir", help="the digest's folder (default: PACKAGE/api)")
    parser.add_argument("--changelog", help="default: the CHANGELOG.md of the package or of a folder above it")
    args = parser.parse_args()

    package_path = os.path.abspath(args.package_path)
    scratch = os.path.abspath(args.scratch_path or os.path.join(package_path, ".build"))
    api_dir = os.path.abspath(args.api_dir or os.path.join(package_path, "api"))
    changelog = args.changelog or find_changelog(package_path)
    swift = shutil.which("swift")
    if not swift:
        fail("swift is not on PATH")

    names, targets = library_targets(package_path, swift)
    modules = [c99name(name) for name in names if has_swift_sources(package_path, targets[name])]
    if not modules:
        fail(f"{package_path} has no Swift library product")
    current = extract(modules, scratch, swift)
    committed = read_digest_dir(api_dir)
    entries = breaking_entries(changelog) if changelog else []
    shown_dir = os.path.relpath(api_dir)

    # Breaking: against the committed digest, and against the release's when it has one.
    breaking, added = compare(committed, current)
    version, commit, released, note = release_digest(api_dir, changelog) if changelog else (None, None, None, None)
    since_release = []
    if released is not None:
        seen = {line for _, line, _ in breaking}
        since_release = [item for item in compare(released, current)[0] if item[1] not in seen]

    if args.write:
        write(api_dir, current, committed)
        print(f"api-digest: wrote {shown_dir}/ ({len(added)} added, {len(breaking)} removed or changed)")
        print_counts(current)
        if breaking or since_release:
            print("api-digest: breaking changes, which the check wants listed in the CHANGELOG:")
            report_breaking(breaking, entries, "against the digest before this write")
            report_breaking(since_release, entries, f"since {version} (the digest of commit {commit and commit[:12]})")
        return 0

    failures = 0
    if not committed:
        print(f"api-digest: no digest in {shown_dir}/: {WRITE_HINT}")
        failures += 1
    else:
        failures += report_breaking(breaking, entries, f"against {shown_dir}/")
    if released is not None:
        print(f"api-digest: also compared with the digest of {version} (commit {commit[:12]}, which added "
              f"[{version}] to the CHANGELOG): {len(since_release)} more breaking change(s)")
        failures += report_breaking(since_release, entries, f"since {version}")
    elif note:
        print(f"api-digest: {note}: compared with {shown_dir}/ only")
    if committed and (added or breaking):
        for _, line, _ in added[:40]:
            print(f"  added    {show(line)}")
        if len(added) > 40:
            print(f"  ... and {len(added) - 40} more")
        print(f"api-digest: {shown_dir}/ is not the build's public API ({len(added)} added, "
              f"{len(breaking)} removed or changed): {WRITE_HINT}")
        failures += 1
    print_counts(current)
    if failures:
        return 1
    print(f"api-digest: the public API matches {shown_dir}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
