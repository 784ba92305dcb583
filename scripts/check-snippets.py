#!/usr/bin/env python3
"""Type-checks every Swift snippet of the README and the DocC articles against the package's
real modules, so that a snippet can never rot: an API renamed or removed fails CI here.

    scripts/check-snippets.py [--scratch-path DIR]      (default: scripts/lib/scratch.sh's debug)

Needs a debug build of the package (`swift build --build-tests`, which CI and scripts/test.sh
make): each snippet is compiled with `swiftc -typecheck` against that build's modules, in about
a second, with no SwiftPM graph of its own.

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
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"^```swift[^\n]*\n(.*?)^```", re.S | re.M)
DIRECTIVE = re.compile(r"<!--\s*snippet(-context|-of)?:\s*(.*?)\s*-->\s*$", re.S)


def default_scratch():
    out = subprocess.run(
        ["bash", "-c", "source scripts/lib/scratch.sh && scratch_path debug"],
        cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


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


def root_products():
    out = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True, text=True, check=True)
    return {product["name"] for product in json.loads(out.stdout)["products"]}


def check_manifest(code, work, products):
    """Problems with a Package.swift fragment: it does not compile in a manifest, or names a
    product of this package that does not exist."""
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
    for name in re.findall(r'\.(?:product|plugin)\(name:\s*"([^"]+)",\s*package:\s*"swift-environments"', code):
        if name not in products:
            problems.append(f"swift-environments has no product '{name}' (it has {', '.join(sorted(products))})")
    return problems


def is_manifest_fragment(code):
    return re.search(r"\.package\(|\.product\(|^\s*targets:|swift-tools-version", code, re.M) is not None


def compiler_flags(scratch):
    modules = os.path.join(scratch, "debug", "Modules")
    if not os.path.isdir(modules):
        sys.exit(f"check-snippets: no debug build in {scratch} (run swift build --build-tests first)")
    flags = ["-I", modules, "-swift-version", "6"]
    # Clang modules: those SwiftPM generated for C targets, and our own module maps.
    for modulemap in sorted(glob.glob(os.path.join(scratch, "debug", "*.build", "module.modulemap"))):
        flags += ["-Xcc", f"-fmodule-map-file={modulemap}"]
    for modulemap in sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "module.modulemap"))):
        flags += ["-Xcc", f"-fmodule-map-file={modulemap}"]
    for include in sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "include"))):
        flags += ["-Xcc", f"-I{include}"]
    for checkout in sorted(glob.glob(os.path.join(scratch, "checkouts", "*", "Sources", "*", "include"))):
        flags += ["-Xcc", f"-I{checkout}"]
    return flags


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scratch-path", default=None)
    arguments = parser.parse_args()
    scratch = arguments.scratch_path or default_scratch()
    flags = compiler_flags(scratch)
    checked, skipped, failures = 0, [], []
    products = root_products()
    with tempfile.TemporaryDirectory() as work:
        for path in documents():
            relative = os.path.relpath(path, ROOT)
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
    for skip in skipped:
        print(f"skipped {skip}")
    if failures:
        print(f"check-snippets: {len(failures)} of {checked} snippets do not compile:", file=sys.stderr)
        for failure in failures:
            print(failure, file=sys.stderr)
        print("Fix the snippet, or say what it needs with <!-- snippet-context: ... --> right before it.",
              file=sys.stderr)
        return 1
    print(f"check-snippets: {checked} snippets compile ({len(skipped)} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
