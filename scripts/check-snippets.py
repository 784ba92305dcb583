#!/usr/bin/env python3
"""Type-checks every Swift snippet of the README and the DocC articles against the package's
real modules, so that a snippet can never rot: an API renamed or removed fails CI here.

    scripts/check-snippets.py [--scratch-path DIR]     (default: scripts/lib/scratch.sh's debug)
    scripts/check-snippets.py --manifests-only          the manifests against the imports (below)
                                                        and the snippet-of lines: no build needed
    scripts/check-snippets.py --print-compiler-flags [--scratch-path DIR] [--package DIR]
                                                        the flags that make a build's modules
                                                        importable, one a line (scripts/build-docs.sh)

Needs a debug build of the package with every trait (`swift build --build-tests
--enable-all-traits`, which CI and scripts/test.sh make): each snippet is compiled with
`swiftc -typecheck` against that build's modules, in about a second, with no SwiftPM graph of
its own.

Each ```swift block is one program: a main file (top-level statements and declarations), or a
library file when it declares `@main`. A block may need names that the text around it gives;
an HTML comment on the line right before the block says so:

    <!-- snippet-context: let snapshot = Environment.shared.snapshot -->   Swift put before it
    <!-- snippet-of: Examples/NAME/Sources/NAME/main.swift -->            taken from a program that CI
                                                                         builds: every line of code
                                                                         must be in that file
    <!-- snippet: not compiled (a Package.swift fragment) -->               skipped, with the reason

A Package.swift fragment (`.package(`, `.product(`, `targets:`) is compiled as a manifest
(`swift package dump-package`, which fetches nothing), and every product it takes from
swift-environments must be one that Package.swift declares.

A manifest is the one a reader copies, so it must list exactly what the code needs, which the
type-check cannot see (it compiles against the whole package, where every module is there). A
fragment that lists products (`.product(` or `.plugin(`) goes with the Swift snippets after
it in the same document, up to the next such fragment (those marked snippet-of excepted: their
program's own Package.swift is checked, below). The products it lists must be exactly the ones
that provide the modules those snippets import (a plugin is kept: it is used, not imported);
the `.package(` lines it shows, or the fragment of only `.package(` lines right before it,
must declare exactly the packages of those products. A fragment with no snippet after it is
checked as a manifest only. Each example's Package.swift (Examples/*/) is checked the same way
against its targets' imports. Which product and package provide a module: the library products
of Package.swift, else EXTERNAL_MODULES below (a module in neither fails the check). A
fragment's product of swift-environments must be one that Package.swift declares, and a product
behind a package trait (TRAIT_OF_PRODUCT below) needs that trait in the `traits:` of the
fragment's (or the example's) swift-environments `.package(` line.
"""
import argparse
import functools
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from lib.scratch import scratch_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "swift-environments"
# The modules that snippets and examples import from other packages: module -> (package, product).
EXTERNAL_MODULES = {
    "ArgumentParser": ("swift-argument-parser", "ArgumentParser"),
    "Logging": ("swift-log", "Logging"),
    "ServiceLifecycle": ("swift-service-lifecycle", "ServiceLifecycle"),
    "UnixSignals": ("swift-service-lifecycle", "UnixSignals"),
    "Metrics": ("swift-metrics", "Metrics"),
    "CoreMetrics": ("swift-metrics", "CoreMetrics"),
    "Configuration": ("swift-configuration", "Configuration"),
    "Hummingbird": ("hummingbird", "Hummingbird"),
    "Prometheus": ("swift-prometheus", "Prometheus"),
    "ConfigurationTesting": ("swift-configuration", "ConfigurationTesting"),
    "AsyncHTTPClient": ("async-http-client", "AsyncHTTPClient"),
    "NIOCore": ("swift-nio", "NIOCore"),
    "NIOPosix": ("swift-nio", "NIOPosix"),
    "NIOHTTP1": ("swift-nio", "NIOHTTP1"),
    "NIOSSL": ("swift-nio-ssl", "NIOSSL"),
    "Vapor": ("vapor", "Vapor"),
    "VaporTesting": ("vapor", "VaporTesting"),
}
# The products of swift-environments that a package trait brings (Package.swift's `traits:`).
TRAIT_OF_PRODUCT = {
    "EnvironmentsEtcd": "Fleet",
    "envctl-fleet": "Fleet",
    "example-fleet-daemon": "Fleet",
    "EnvironmentsConfiguration": "SwiftConfiguration",
    "EnvironmentsVapor": "Vapor",
}
# Modules of the toolchain: no dependency needed.
TOOLCHAIN_MODULES = {"Foundation", "FoundationEssentials", "Dispatch", "Glibc", "Musl", "Darwin",
                     "Synchronization", "Testing", "XCTest", "Observation", "RegexBuilder", "_Concurrency"}
IMPORT = re.compile(r"^[ \t]*(?:@\w+(?:\([^)\n]*\))?[ \t]+)*(?:(?:public|package|internal|fileprivate|private)[ \t]+)?"
                    r"import[ \t]+(?:(?:struct|class|enum|func|protocol|typealias|var|let)[ \t]+)?(\w+)", re.M)
BLOCK = re.compile(r"^```swift[^\n]*\n(.*?)^```", re.S | re.M)
DIRECTIVE = re.compile(r"<!--\s*snippet(-context|-of)?:\s*(.*?)\s*-->\s*$", re.S)


def documents():
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "*.md")))
    return files


def snippets(path):
    text = open(path, encoding="utf-8").read()
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        directive = DIRECTIVE.search(before)
        yield line, match.group(1), directive


def missing_lines(code, path):
    """The snippet's lines of code (without comments) that the file does not contain."""
    def normal(text):
        return " ".join(text.split())
    source = normal(open(os.path.join(ROOT, path), encoding="utf-8").read())
    missing = []
    for line in code.splitlines():
        stripped = re.sub(r"\s//\s.*$", "", line).strip()
        if stripped and not stripped.startswith("//") and normal(stripped) not in source:
            missing.append(stripped)
    return missing


def dump_package(directory):
    return _dump_package(os.path.normpath(os.path.abspath(directory)))


@functools.cache
def _dump_package(directory):
    # A scratch path of its own: the package's may be locked by a build that runs meanwhile.
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(["swift", "package", "--scratch-path", scratch, "dump-package"], cwd=directory,
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def repository_products():
    """The products of this package, by package name, and module -> (package, product) for each
    library's modules."""
    products, modules = {}, dict(EXTERNAL_MODULES)
    for directory in [ROOT]:
        manifest = dump_package(directory)
        package = manifest["name"]
        products[package] = set()
        for product in manifest["products"]:
            products[package].add(product["name"])
            if "library" in product["type"]:
                for target in product["targets"]:
                    modules.setdefault(target, (package, product["name"]))
    return products, modules


def missing_traits(listed, traits):
    """The traits that the products of swift-environments in `listed` need and `traits` (those
    its `.package(` line enables; None when no line declares it here) lacks, as problems."""
    needed = {TRAIT_OF_PRODUCT[name] for package, name in listed if package == PACKAGE and name in TRAIT_OF_PRODUCT}
    if traits is None or not needed - traits:
        return []
    return [f'takes products behind the trait(s) {", ".join(sorted(needed))}: its .package( line for {PACKAGE} '
            f'needs traits: [{", ".join(f"{t!r}" for t in sorted(needed))}]'.replace("'", '"')]


def declared_traits(code):
    """The traits that the fragment's `.package(` line for swift-environments enables, or None when
    it has no such line."""
    code = strip_comments(code)
    for declaration in re.findall(r"\.package\((.*?)\)(?=\s*,?\s*(?:\.package|\]|$))", code, re.S):
        if PACKAGE in declaration or re.search(r'path:\s*"\.\.', declaration):
            found = re.search(r"traits:\s*\[([^\]]*)\]", declaration)
            return set(re.findall(r'"([^"]+)"', found.group(1))) if found else set()
    return None


def imported_modules(code):
    return set(IMPORT.findall(code)) - TOOLCHAIN_MODULES


def strip_comments(code):
    """Swift line comments out (a `//` inside a URL stays)."""
    return re.sub(r"(^|\s)//.*", r"\1", code, flags=re.M)


def declared_packages(code):
    """The identities of the packages that `.package(` lines (not commented out) declare."""
    code = strip_comments(code)
    packages = set()
    for declaration in re.findall(r"\.package\(([^)]*)\)", code):
        name = re.search(r'name:\s*"([^"]+)"', declaration)
        location = re.search(r'(?:url|path):\s*"([^"]+)"', declaration)
        if name:
            packages.add(name.group(1))
        elif location:
            packages.add(re.sub(r"\.git$", "", location.group(1).rstrip("/").rsplit("/", 1)[-1]).lower())
    return packages


def listed_products(code):
    """The (package, product) pairs a fragment's targets name, and the plugins apart."""
    code = strip_comments(code)
    products = set(re.findall(r'\.product\(name:\s*"([^"]+)",\s*package:\s*"([^"]+)"', code))
    plugins = set(re.findall(r'\.plugin\(name:\s*"([^"]+)",\s*package:\s*"([^"]+)"', code))
    return {(package, name) for name, package in products}, {(package, name) for name, package in plugins}


def needed_products(imports, modules):
    """The (package, product) pairs that provide these modules, and the modules none does."""
    needed, unknown = set(), set()
    for module in imports:
        if module in modules:
            needed.add(modules[module])
        else:
            unknown.add(module)
    return needed, unknown


def compare_dependencies(listed, plugins, declared, imports, modules):
    """What a manifest lists against what code importing `imports` needs: problems, as text."""
    needed, unknown = needed_products(imports, modules)
    problems = [f"imports {module}, which no product of {PACKAGE} provides and EXTERNAL_MODULES "
                "(scripts/check-snippets.py) does not name" for module in sorted(unknown)]
    for package, product in sorted(needed - listed):
        problems.append(f'missing .product(name: "{product}", package: "{package}") for its imports')
    for package, product in sorted(listed - needed):
        problems.append(f'lists .product(name: "{product}", package: "{package}") but no import needs it')
    if declared is not None:
        packages = {package for package, _ in listed | plugins | needed}
        for package in sorted(packages - declared):
            problems.append(f"names package '{package}' that no .package( line declares")
        for package in sorted(declared - packages):
            problems.append(f"declares package '{package}' that no product it lists comes from")
    return problems


def check_example(directory, modules):
    """An example's Package.swift against its targets' imports."""
    manifest = dump_package(directory)
    declared, traits = set(), None
    for dependency in manifest["dependencies"]:
        for kind in dependency.values():
            for entry in kind:
                name = entry.get("nameForTargetDependencyResolutionOnly") or entry["identity"]
                declared.add(name)
                if name == PACKAGE:
                    traits = {trait["name"] for trait in entry.get("traits") or []}
    problems = []
    for target in manifest["targets"]:
        listed, plugins = set(), set()
        for dependency in target["dependencies"]:
            if "product" in dependency:
                name, package = dependency["product"][0], dependency["product"][1]
                listed.add((package, name))
        for plugin in target.get("pluginUsages") or []:
            if "plugin" in plugin and plugin["plugin"][1]:
                plugins.add((plugin["plugin"][1], plugin["plugin"][0]))
        sources = os.path.join(directory, target.get("path") or os.path.join(
            "Sources" if target["type"] != "test" else "Tests", target["name"]))
        imports = set()
        for file in glob.glob(os.path.join(sources, "**", "*.swift"), recursive=True):
            imports |= imported_modules(open(file, encoding="utf-8").read())
        local = {t["name"] for t in manifest["targets"]}
        imports -= local
        problems += [f"target {target['name']}: {problem}" for problem in
                     compare_dependencies(listed, plugins, None, imports, modules) + missing_traits(listed, traits)]
        used = {package for package, _ in listed | plugins}
        for package in sorted(used - declared):
            problems.append(f"target {target['name']} names package '{package}' that no dependency declares")
    used = {dependency["product"][1] for target in manifest["targets"] for dependency in target["dependencies"]
            if "product" in dependency}
    # swift-docc-plugin is a command plugin (swift package generate-documentation), which no target uses
    # (scripts/build-docs.sh does not need it; a package may still declare it for its readers).
    for package in sorted(declared - used - {"swift-docc-plugin"}):
        problems.append(f"declares package '{package}' that no target uses")
    return problems


def check_manifest(code, work, products):
    """Problems with a Package.swift fragment: it does not compile in a manifest, or names a
    product of one of this repository's packages (`products`: package name -> products) that
    does not exist."""
    stripped = re.sub(r"^\s*//.*\n", "", code, flags=re.M).lstrip()
    if stripped.startswith(".package("):
        body = f"dependencies: [\n{code}\n]"
    elif stripped.startswith("."):
        # A target: the packages it names are declared (dump-package fetches none of them).
        packages = sorted(set(re.findall(r'package:\s*"([^"]+)"', code)))
        declared = ",\n".join(f'.package(url: "https://git.example/{name}.git", from: "1.0.0")' for name in packages)
        body = f"dependencies: [\n{declared}\n],\ntargets: [\n{code}\n]"
    else:
        body = code
    manifest = os.path.join(work, "manifest")
    os.makedirs(manifest, exist_ok=True)
    open(os.path.join(manifest, "Package.swift"), "w", encoding="utf-8").write(
        "// swift-tools-version:6.2\nimport PackageDescription\n\n"
        f"let package = Package(\n    name: \"Snippet\",\n{body.rstrip().rstrip(',')}\n)\n")
    problems = []
    result = subprocess.run(["swift", "package", "dump-package"], cwd=manifest, capture_output=True, text=True)
    if result.returncode != 0:
        problems += [l for l in result.stderr.splitlines() if "error" in l][:5] or result.stderr.splitlines()[-5:]
    for name, package in re.findall(r'\.(?:product|plugin)\(name:\s*"([^"]+)",\s*package:\s*"([^"]+)"', code):
        if package in products and name not in products[package]:
            problems.append(f"{package} has no product '{name}' (it has {', '.join(sorted(products[package]))})")
    return problems


def is_manifest_fragment(code):
    return re.search(r"\.package\(|\.product\(|^\s*targets:|swift-tools-version", code, re.M) is not None


def compiler_flags(scratch, package=ROOT):
    """The flags that make the modules of a debug build (`scratch`, of `package`) importable by
    swiftc and swift-symbolgraph-extract."""
    modules = os.path.join(scratch, "debug", "Modules")
    if not os.path.isdir(modules):
        sys.exit(f"check-snippets: no debug build in {scratch} (run swift build --build-tests first)")
    flags = ["-I", modules, "-swift-version", "6"]
    # Clang modules: those SwiftPM generated for C targets, and our own module maps.
    # Not those of `NAME-tool.build`: the same C module built again for a plugin's tool (grpc-swift-protobuf's
    # CGRPCProtobuf), which clang reads as a redefinition.
    for modulemap in sorted(glob.glob(os.path.join(scratch, "debug", "*.build", "module.modulemap"))):
        if not os.path.basename(os.path.dirname(modulemap)).endswith("-tool.build"):
            flags += ["-Xcc", f"-fmodule-map-file={modulemap}"]
    sources = sorted({os.path.join(ROOT, "Sources"), os.path.join(os.path.abspath(package), "Sources")})
    for directory in sources:
        for modulemap in sorted(glob.glob(os.path.join(directory, "*", "module.modulemap"))):
            flags += ["-Xcc", f"-fmodule-map-file={modulemap}"]
        for include in sorted(glob.glob(os.path.join(directory, "*", "include"))):
            flags += ["-Xcc", f"-I{include}"]
    for checkout in sorted(glob.glob(os.path.join(scratch, "checkouts", "*", "Sources", "*", "include"))):
        flags += ["-Xcc", f"-I{checkout}"]
    return flags


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scratch-path", default=None)
    parser.add_argument("--manifests-only", action="store_true",
                        help="check the manifests against the imports, type-check no snippet")
    parser.add_argument("--print-compiler-flags", action="store_true",
                        help="print the flags for the build at --scratch-path (of --package), one a line; check nothing")
    parser.add_argument("--package", default=ROOT,
                        help="with --print-compiler-flags: the package of that build (default: this one)")
    arguments = parser.parse_args()
    if arguments.print_compiler_flags:
        print("\n".join(compiler_flags(arguments.scratch_path or scratch_path("debug"), arguments.package)))
        return 0
    if not arguments.manifests_only:
        flags = compiler_flags(arguments.scratch_path or scratch_path("debug"))
    checked, skipped, failures = 0, [], []
    products, modules = repository_products()
    for directory in sorted(glob.glob(os.path.join(ROOT, "Examples", "*", ""))):
        relative = os.path.relpath(os.path.join(directory, "Package.swift"), ROOT)
        checked += 1
        problems = check_example(directory, modules)
        if problems:
            failures.append(f"{relative} (its targets' imports):\n    " + "\n    ".join(problems))

    def finish(group):
        """Checks a manifest fragment against the imports of the snippets that went with it."""
        if group and group["snippets"]:
            problems = compare_dependencies(group["listed"], group["plugins"], group["declared"],
                                            group["imports"], modules)
            if problems:
                failures.append(f"{group['where']} (a Package.swift fragment, against the imports of the "
                                f"snippets at lines {', '.join(map(str, group['snippets']))}):\n    "
                                + "\n    ".join(problems))

    with tempfile.TemporaryDirectory() as work:
        for path in documents():
            relative = os.path.relpath(path, ROOT)
            group, packages, packages_traits = None, None, None
            for line, code, directive in snippets(path):
                where = f"{relative}:{line}"
                context = ""
                if directive and directive.group(1) == "-of":
                    checked += 1
                    missing = missing_lines(code, directive.group(2))
                    if missing:
                        failures.append(f"{where}: not in {directive.group(2)}:\n    " + "\n    ".join(missing[:5]))
                    continue
                if directive and directive.group(1) is None:
                    skipped.append(f"{where}: {directive.group(2)}")
                    continue
                if directive:
                    context = directive.group(2) + "\n"
                if is_manifest_fragment(code):
                    checked += 1
                    problems = check_manifest(code, work, products)
                    if problems:
                        failures.append(f"{where} (a Package.swift fragment):\n    " + "\n    ".join(problems))
                    listed, plugins = listed_products(code)
                    declared = declared_packages(code)
                    traits = declared_traits(code)
                    if traits is None and packages_traits is not None:
                        traits = packages_traits
                    trait_problems = missing_traits(listed, traits)
                    if trait_problems:
                        failures.append(f"{where} (a Package.swift fragment):\n    " + "\n    ".join(trait_problems))
                    if not listed and not plugins:
                        packages = declared  # for the fragment that lists the products
                        packages_traits = traits
                        continue
                    packages_traits = None
                    finish(group)
                    group = {"where": where, "listed": listed, "plugins": plugins, "imports": set(),
                             "snippets": [], "declared": (declared | (packages or set())) or None}
                    packages = None
                    continue
                if group is not None:
                    group["imports"] |= imported_modules(code)
                    group["snippets"].append(line)
                if arguments.manifests_only:
                    continue
                imports = [l for l in code.splitlines() if re.match(r"^(@\w+\s+)*import\s", l)]
                body = [l for l in code.splitlines() if l not in imports]
                source = "\n".join(imports) + "\n" + context + "\n".join(body) + "\n"
                library = re.search(r"^\s*@main\b", code, re.M) is not None
                file = os.path.join(work, "main.swift" if not library else "Snippet.swift")
                for old in glob.glob(os.path.join(work, "*.swift")):
                    os.remove(old)
                open(file, "w", encoding="utf-8").write(source)
                command = ["swiftc", "-typecheck", *flags, file]
                if library:
                    command.insert(2, "-parse-as-library")
                result = subprocess.run(command, capture_output=True, text=True)
                checked += 1
                if result.returncode != 0:
                    errors = [l for l in result.stderr.splitlines() if "error:" in l][:5]
                    failures.append(f"{where}:\n    " + "\n    ".join(errors or result.stderr.splitlines()[-5:]))
            finish(group)
    for skip in skipped:
        print(f"skipped {skip}")
    if failures:
        print(f"check-snippets: {len(failures)} of {checked} snippets fail the check:", file=sys.stderr)
        for failure in failures:
            print(failure, file=sys.stderr)
        print("Fix the snippet, or say what it needs with <!-- snippet-context: ... --> right before it; "
              "a manifest lists exactly the products its snippets import.",
              file=sys.stderr)
        return 1
    if arguments.manifests_only:
        print(f"check-snippets: {checked} manifests and snippet-of snippets agree ({len(skipped)} skipped)")
        return 0
    print(f"check-snippets: {checked} snippets compile ({len(skipped)} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
