# Modules of this package and of swift-log built with plain swiftc, no SwiftPM: for programs
# that compile part of the package into one module of their own (the fuzzers, Fuzz/run.sh; the
# read path under ThreadSanitizer, scripts/tsan-read-path.sh). Sourced, not run.
#
# The caller sets $out (the output folder) and may set module_flags (default: -O), the swiftc
# flags every module is compiled with (a sanitizer, say). Each function leaves a module and a
# static library in a folder of $out; link with -I DIR -L DIR -lNAME.

# The upcoming features Package.swift turns on for every target of this package: the package's
# modules below, and whatever compiles their sources into a module of its own (Fuzz/run.sh),
# are compiled with them too, or their `package import`s read as ambiguous.
package_features=(
    -enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature MemberImportVisibility
    -enable-upcoming-feature ExistentialAny
)

# swift-log's Logging module, for the interpolation target (the whole Environments module
# imports it). Its sources come from a checkout SwiftPM already made, else from a resolve of
# our own (into .build-fuzz-spm, leaving .build alone).
build_logging() {
    local sources=""
    if [ -n "${logging_built:-}" ]; then return 0; fi # once per run
    source scripts/lib/scratch.sh
    for checkout in "$(scratch_path debug)/checkouts/swift-log" .build-fuzz-spm/checkouts/swift-log; do
        if [ -d "$checkout/Sources/Logging" ]; then sources="$checkout/Sources/Logging" && break; fi
    done
    if [ -z "$sources" ]; then
        swift package resolve --scratch-path .build-fuzz-spm >&2
        sources=.build-fuzz-spm/checkouts/swift-log/Sources/Logging
    fi
    mkdir -p "$out/logging"
    # The upcoming features and package name that swift-log's Package.swift sets.
    swiftc "${module_flags[@]:--O}" -swift-version 6 -parse-as-library -module-name Logging -package-name swift_log \
        -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility \
        -enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature NonisolatedNonsendingByDefault \
        -emit-module -emit-module-path "$out/logging/Logging.swiftmodule" \
        -emit-library -static -o "$out/logging/libLogging.a" $(find "$sources" -name '*.swift' | sort)
    logging_built=1
}

# One of the package's modules that imports none of the others (its API is `package`), with the
# package name of the program that uses it, into $out/<module, lower case>-<package name>/:
# build_leaf_module MODULE PACKAGE.
build_leaf_module() {
    local dir="$out/$(echo "$1" | tr '[:upper:]' '[:lower:]')-$2"
    mkdir -p "$dir"
    swiftc "${module_flags[@]:--O}" -swift-version 6 -parse-as-library -module-name "$1" -package-name "$2" "${package_features[@]}" \
        -emit-module -emit-module-path "$dir/$1.swiftmodule" \
        -emit-library -static -o "$dir/lib$1.a" Sources/"$1"/*.swift
}

# TextEscaping, Locking and FileDescriptorWriting (the one loop that writes bytes whole), into
# $out/textescaping-<package name>/ and so on.
build_text_escaping() { build_leaf_module TextEscaping "$1"; }
build_locking() { build_leaf_module Locking "$1"; }
build_file_descriptor_writing() { build_leaf_module FileDescriptorWriting "$1"; }

# The package's JSONText module (JSON values and their text), with the package name of the
# program that uses it, into $out/jsontext-<package name>/; needs that package's TextEscaping.
build_json_text() {
    mkdir -p "$out/jsontext-$1"
    swiftc "${module_flags[@]:--O}" -swift-version 6 -parse-as-library -module-name JSONText -package-name "$1" "${package_features[@]}" \
        -I "$out/textescaping-$1" \
        -emit-module -emit-module-path "$out/jsontext-$1/JSONText.swiftmodule" \
        -emit-library -static -o "$out/jsontext-$1/libJSONText.a" Sources/JSONText/*.swift
}

# The package's Environments module (for the read path's stress, scripts/tsan-read-path.sh), with
# the package name of the program that uses it, into $out/environments-<package name>/; needs
# Logging and that package's TextEscaping, JSONText, Locking and FileDescriptorWriting (build_json_text,
# build_locking, build_file_descriptor_writing).
build_environments() {
    mkdir -p "$out/environments-$1"
    swiftc "${module_flags[@]:--O}" -swift-version 6 -parse-as-library -module-name Environments -package-name "$1" "${package_features[@]}" \
        -I "$out/logging" -I "$out/textescaping-$1" -I "$out/jsontext-$1" -I "$out/locking-$1" \
        -I "$out/filedescriptorwriting-$1" \
        -emit-module -emit-module-path "$out/environments-$1/Environments.swiftmodule" \
        -emit-library -static -o "$out/environments-$1/libEnvironments.a" \
        $(find Sources/Environments -name '*.swift' | sort)
}

