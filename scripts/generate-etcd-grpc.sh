#!/usr/bin/env bash
# Generates the Swift code of etcd's gRPC API that EtcdFleetClient calls (trait "Fleet"), from
# etcd's own .proto files trimmed to the services and messages the client uses.
#
#   scripts/generate-etcd-grpc.sh ETCD_CHECKOUT [PLUGIN_DIR]
#
# ETCD_CHECKOUT: a checkout of etcd-io/etcd at v3.4.23 (Debian 12's etcd; the wire format is the
#   same in every 3.x), or a directory that holds rpc.proto, kv.proto at etcd 3.4's paths.
# PLUGIN_DIR: where protoc-gen-swift and protoc-gen-grpc-swift-2 are; built when not given, in a
#   scratch package of their own (swift-protobuf 1.39.0, grpc-swift-protobuf 2.4.1).
#
# Needs protoc (apt-get install -y protobuf-compiler) and python3. CI never runs this: the output,
# Sources/EtcdFleetClient/Generated/*.swift and the trimmed Generated/Protos/*.proto, is committed.
# Run it again only to call another RPC, and commit what changes.
set -euo pipefail

etcd=${1:?usage: $0 ETCD_CHECKOUT [PLUGIN_DIR]}
plugins=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/Sources/EtcdFleetClient/Generated"
protos="$out/Protos"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v protoc >/dev/null || { echo "protoc is missing: apt-get install -y protobuf-compiler" >&2; exit 1; }

if [[ -z "$plugins" ]]; then
    mkdir -p "$work/plugins/Sources/Empty"
    : >"$work/plugins/Sources/Empty/Empty.swift"
    cat >"$work/plugins/Package.swift" <<'MANIFEST'
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "protoc-plugins",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf.git", exact: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", exact: "2.4.1"),
    ],
    targets: [.target(name: "Empty")]
)
MANIFEST
    (cd "$work/plugins" && swift build -c release --product protoc-gen-swift \
        && swift build -c release --product protoc-gen-grpc-swift-2)
    plugins="$work/plugins/.build/release"
fi

find_proto() {
    for candidate in "$etcd/$1" "$etcd/$2" "$etcd/$(basename "$1")"; do
        [[ -f "$candidate" ]] && { echo "$candidate"; return; }
    done
    echo "no $(basename "$1") under $etcd" >&2
    exit 1
}

mkdir -p "$protos"
python3 - "$(find_proto etcdserver/etcdserverpb/rpc.proto api/etcdserverpb/rpc.proto)" \
    "$(find_proto mvcc/mvccpb/kv.proto api/mvccpb/kv.proto)" "$protos" <<'PY'
# Trims etcd's rpc.proto and kv.proto to what EtcdFleetClient calls: no gogoproto or
# google.api options, the services with the RPCs below only, and the messages they need.
import re, sys, os

rpc_path, kv_path, out = sys.argv[1:4]
RPCS = {
    "KV": ["Range", "Put", "DeleteRange", "Txn"],
    "Watch": ["Watch"],
    "Lease": ["LeaseGrant", "LeaseRevoke", "LeaseKeepAlive"],
    "Maintenance": ["Status"],
    "Auth": ["Authenticate"],
}
MESSAGES = [
    "ResponseHeader", "RangeRequest", "RangeResponse", "PutRequest", "PutResponse",
    "DeleteRangeRequest", "DeleteRangeResponse", "RequestOp", "ResponseOp", "Compare",
    "TxnRequest", "TxnResponse", "WatchRequest", "WatchCreateRequest", "WatchCancelRequest",
    "WatchProgressRequest", "WatchResponse", "LeaseGrantRequest", "LeaseGrantResponse",
    "LeaseRevokeRequest", "LeaseRevokeResponse", "LeaseKeepAliveRequest", "LeaseKeepAliveResponse",
    "StatusRequest", "StatusResponse", "AuthenticateRequest", "AuthenticateResponse",
    "KeyValue", "Event",
]
HEADER = """// Copyright The etcd Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
//
// From etcd v3.4.23 ({source}), trimmed by scripts/generate-etcd-grpc.sh to what
// EtcdFleetClient calls: gogoproto and google.api options removed, services and messages
// the client does not use left out. The wire format is etcd's own.

"""

def blocks(text):
    """Top-level items: (kind, name, text with the comments before it), and other lines."""
    lines = text.split("\n")
    items, pending, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        match = re.match(r"^(service|message|enum)\s+(\w+)\s*\{", line)
        if match:
            depth, body = 0, []
            while True:
                body.append(lines[i])
                depth += lines[i].count("{") - lines[i].count("}")
                if depth == 0:
                    break
                i += 1
            items.append((match.group(1), match.group(2), pending + body))
            pending = []
        elif line.startswith("//") or (line.strip() == "" and pending):
            pending.append(line)
        else:
            if pending:
                items.append(("text", None, pending))
                pending = []
            items.append(("text", None, [line]))
        i += 1
    if pending:
        items.append(("text", None, pending))
    return items

def service(name, body):
    """The service with the RPCs of RPCS[name] only, without their options."""
    kept, comments, i = [], [], 1
    while i < len(body) - 1:
        line = body[i]
        match = re.match(r"^\s*rpc\s+(\w+)\s*\(", line)
        if line.strip().startswith("//"):
            comments.append(line)
        elif match:
            signature = line.split("{")[0].rstrip()
            depth = line.count("{") - line.count("}")
            while depth > 0:
                i += 1
                depth += body[i].count("{") - body[i].count("}")
            if match.group(1) in RPCS[name]:
                kept += comments + [signature + " {}", ""]
            comments = []
        else:
            comments = []
        i += 1
    while kept and kept[-1] == "":
        kept.pop()
    return [body[0]] + kept + ["}"]

def trim(path, source):
    text = open(path).read()
    text = re.sub(r'^import "gogoproto/gogo.proto";\n', "", text, flags=re.M)
    text = re.sub(r'^// for grpc-gateway\n', "", text, flags=re.M)
    text = re.sub(r'^import "google/api/annotations.proto";\n', "", text, flags=re.M)
    text = re.sub(r'^import "etcd/auth/authpb/auth.proto";\n', "", text, flags=re.M)
    text = re.sub(r'^import "etcd/mvcc/mvccpb/kv.proto";', 'import "kv.proto";', text, flags=re.M)
    text = re.sub(r"^option \(gogoproto\.[^;]*;\n", "", text, flags=re.M)
    text = re.sub(r"\s*\[\(gogoproto\.[^\]]*\]", "", text)
    result = []
    for kind, name, body in blocks(text):
        if kind == "service":
            if name in RPCS:
                start = next(j for j, line in enumerate(body) if line.startswith("service"))
                result += body[:start] + service(name, body[start:]) + [""]
        elif kind in ("message", "enum"):
            if name in MESSAGES:
                result += body + [""]
        else:
            result += body
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(result)).strip() + "\n"
    with open(os.path.join(out, os.path.basename(path)), "w") as f:
        f.write(HEADER.format(source=source) + text)

trim(rpc_path, "etcdserver/etcdserverpb/rpc.proto")
trim(kv_path, "mvcc/mvccpb/kv.proto")
PY

rm -f "$out"/*.swift
# The messages of both files; the clients of rpc.proto's services (kv.proto has none).
protoc --proto_path="$protos" --plugin=protoc-gen-swift="$plugins/protoc-gen-swift" \
    --swift_out="$work" --swift_opt=Visibility=Package,UseAccessLevelOnImports=true,FileNaming=DropPath \
    "$protos/kv.proto" "$protos/rpc.proto"
protoc --proto_path="$protos" --plugin=protoc-gen-grpc-swift="$plugins/protoc-gen-grpc-swift-2" \
    --grpc-swift_out="$work" \
    --grpc-swift_opt=Visibility=Package,UseAccessLevelOnImports=true,Server=false,Client=true,FileNaming=DropPath \
    "$protos/rpc.proto"

# Every file of the module builds only with the trait "Fleet".
for file in "$work"/*.swift; do
    {
        echo "// swift-format-ignore-file"
        echo "// Generated by scripts/generate-etcd-grpc.sh from etcd's .proto files (Apache-2.0, see"
        echo "// Protos/); do not edit."
        echo "#if Fleet"
        cat "$file"
        echo "#endif"
    } >"$out/$(basename "$file")"
done
ls -l "$out"
