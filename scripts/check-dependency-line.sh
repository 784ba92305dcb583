#!/bin/bash
# The README's dependency line resolves and builds (issue 43.3): a reader who copies the
# "Use it in your package" snippet gets a package that builds against this tree.
#
#   scripts/check-dependency-line.sh
#
# Clones this repository (its committed HEAD: uncommitted changes, the README's too, are not
# in the clone) into a temporary directory, tags the clone with LibraryVersion.current (read from
# the clone's Sources/Environments/Support/LibraryVersion.swift; a tag of that name already there
# is moved to HEAD) and makes its `main` branch HEAD. Then a scratch package beside the clone
# takes the clone's README's ```swift block that contains `.package(url:` as its manifest, with
# the placeholder URL of the tagged line replaced by file://CLONE and `from:` kept as written,
# and a main.swift that imports Environments and reads a value:
#   1. the tagged line: `swift build`, then the program runs and reads the value from an
#      Environments.plist ($CONFIGURATION_DIRECTORY);
#   2. each commented line that resolves before any tag, in its place: `.package(path:)` as
#      written (the clone is at ../swift-environments from the scratch package) and
#      `.package(url:, branch:)` with its placeholder URL replaced: `swift package resolve`.
# Fails with a message that names the line that did not resolve or build. It asserts no count of
# resolved packages (Benchmarks does that). The README's snippet is the core's, no `traits:`;
# scripts/check-consumers.sh builds the lines with traits (Vapor, Fleet, SwiftConfiguration) the
# same way. About a minute with a warm package cache: the
# build compiles swift-log and the core. (4 min at load 8, 2026-11-28, while the root package
# still declared swift-nio and the etcd client's other dependencies: each of the three
# resolutions fetched them.)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
name="scripts/check-dependency-line.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() {
    echo "$name: $*" >&2
    exit 1
}
# Runs a command with its output in a log; on failure prints the log's end and fails with MESSAGE.
run() { # log message command...
    local log="$1" message="$2"
    shift 2
    if ! "$@" >"$log" 2>&1; then
        tail -30 "$log" >&2
        fail "$message"
    fi
}

clone="$work/swift-environments"
run "$work/clone.log" "cannot clone $root" git clone --quiet --no-hardlinks "$root" "$clone"
version="$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$clone/Sources/Environments/Support/LibraryVersion.swift")"
[ -n "$version" ] || fail "no LibraryVersion.current in Sources/Environments/Support/LibraryVersion.swift"
git -C "$clone" tag -f "$version" >/dev/null
if [ "$(git -C "$clone" branch --show-current)" != main ]; then
    git -C "$clone" branch -f main HEAD
fi
echo "   a clone of $(git -C "$clone" rev-parse --short HEAD), tagged $version"

# Writes the scratch package's Package.swift from the README's snippet, in one of three forms:
# tagged (the line as written), path or branch (that commented line instead of the tagged one).
# Prints the line it uses.
package="$work/my-program"
mkdir -p "$package"
manifest() { # form
    python3 - "$1" "$clone/README.md" "$clone" "$package" <<'EOF'
import re, sys
form, readme, clone, package = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
blocks = [b for b in re.findall(r"^```swift\n(.*?)^```", text, re.S | re.M) if ".package(url:" in b]
if not blocks:
    sys.exit("README.md has no ```swift block with `.package(url:`")
snippet = blocks[0]
tagged = re.search(r'^(\s*)\.package\(url:\s*"([^"]*swift-environments[^"]*)",\s*(?:from|exact):[^\n]*$', snippet, re.M)
if not tagged:
    sys.exit("README.md's manifest snippet has no `.package(url: \"…swift-environments…\", from: …)` line")
if form == "tagged":
    line = tagged.group(0).replace(tagged.group(2), "file://" + clone)
else:
    pattern = {"path": r'^\s*//\s*(\.package\((?:name:\s*"[^"]*",\s*)?path:\s*"[^"]*"\),?)',
               "branch": r'^\s*//\s*(\.package\(url:\s*"([^"]*)",\s*branch:\s*"[^"]*"\),?)'}[form]
    alternative = re.search(pattern, snippet, re.M)
    if not alternative:
        sys.exit(f"README.md's manifest snippet has no commented `.package(…{form}: …)` line beside the tagged one")
    line = tagged.group(1) + alternative.group(1)
    if form == "branch":
        line = line.replace(alternative.group(2), "file://" + clone)
snippet = snippet[:tagged.start()] + line + snippet[tagged.end():]
target = re.search(r'\.executableTarget\(name:\s*"([^"]+)"', snippet)
if not target:
    sys.exit("README.md's manifest snippet has no `.executableTarget(name:`")
tools = open(f"{clone}/Package.swift", encoding="utf-8").readline().strip()
with open(f"{package}/Package.swift", "w", encoding="utf-8") as out:
    out.write(f'{tools}\nimport PackageDescription\n\nlet package = Package(\n    name: "my-program",\n'
              f'{snippet.rstrip().rstrip(",")}\n)\n')
with open(f"{package}/target", "w") as out:
    out.write(target.group(1))
print(re.sub(r"\s+//.*$", "", line.strip()))
EOF
}

# Each form first, so that a snippet without one fails before anything builds.
for form in path branch tagged; do
    manifest "$form" >/dev/null || fail "cannot make a manifest of README.md's snippet with its $form line"
done

# 1. The tagged line, as written but for the URL: resolve, build, run.
line="$(manifest tagged)"
target="$(cat "$package/target")"
mkdir -p "$package/Sources/$target" "$work/config"
cat >"$package/Sources/$target/main.swift" <<'EOF'
import Environments

print(Environment.shared.fetch("DependencyLine") as? String ?? "(no value)")
EOF
cat >"$work/config/Environments.plist" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Common</key>
    <dict><key>DependencyLine</key><string>resolved</string></dict>
    <key>Debug</key><dict/>
    <key>Release</key><dict/>
</dict>
</plist>
EOF
echo "   $line"
run "$work/tagged.log" "README.md's line $line (tag $version on a clone of this tree) does not resolve or build: its log above" \
    swift build --package-path "$package" --scratch-path "$work/build-tagged" --product "$target"
output="$(CONFIGURATION_DIRECTORY="$work/config" "$work/build-tagged/debug/$target" 2>&1)" ||
    fail "the program built with README.md's line exits with an error: $output"
[ "$(tail -1 <<<"$output")" = resolved ] ||
    fail "the program built with README.md's line did not read its Environments.plist: $output"
echo "   resolves, builds and runs"

# 2. The lines for a clone before any tag, each in place of the tagged one: resolve.
for form in path branch; do
    line="$(manifest "$form")" || fail "cannot make a manifest of README.md's snippet with its $form line"
    rm -f "$package/Package.resolved"
    echo "   $line"
    run "$work/$form.log" "README.md's line $line (a clone of this tree at ../swift-environments, main = HEAD) does not resolve: its log above" \
        swift package --package-path "$package" --scratch-path "$work/build-$form" resolve
    echo "   resolves"
done
echo "$name: README.md's dependency lines resolve ($version tagged, path and branch) and the tagged one builds"
