// libFuzzer target for the control socket's message decoding: arbitrary bytes go through the
// framer (in chunks, as reads deliver them) and every complete message through the decoder,
// then the decoded call is encoded and decoded again and must come back equal (numbers as the
// reals they denote: JSON has no integer type, so a real with an integral value,
// `2.4444444444444444e+18`, may come back as an integer).
// Built by Fuzz/run.sh together with Sources/Varlink/*.swift, linked with JSONText.

import JSONText

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVarlink(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first byte picks the chunk size, so splits at every position get tried.
    let chunk = max(1, Int(bytes.first ?? 1))
    var framer = VarlinkFramer(maximumMessageSize: 4096)
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + chunk)
        for frame in framer.append(bytes[start..<end]) {
            switch frame {
            case .tooLarge:
                return 0
            case .message(let message):
                precondition(message.count <= 4096, "the framer let a message past its limit")
                precondition(!message.contains(0), "a framed message contains its terminator")
                guard let call = try? VarlinkCoding.decode(VarlinkCall.self, from: message) else { continue }
                let encoded = try! VarlinkCoding.encode(call)
                let again = try! VarlinkCoding.decode(VarlinkCall.self, from: encoded.dropLast())
                precondition(
                    again.parameters.map(normalized) == call.parameters.map(normalized) && again.method == call.method
                        && again.oneway == call.oneway && again.more == call.more && again.upgrade == call.upgrade,
                    "a call does not survive encoding: \(call) vs \(again)")
                _ = call.interface
                _ = call.parameters?["key"]?.stringValue
            }
        }
        start = end
    }
    precondition(framer.pendingByteCount <= 4096, "the framer holds more than its limit")
    return 0
}

/// `parameters` with every number as a real: the same JSON number, whichever way a decoder
/// reads it.
private func normalized(_ parameters: [String: JSONValue]) -> [String: JSONValue] {
    parameters.mapValues(normalized)
}

private func normalized(_ value: JSONValue) -> JSONValue {
    switch value {
    case .int(let number): return .double(Double(number))
    case .array(let elements): return .array(elements.map(normalized))
    case .object(let members): return .object(members.mapValues(normalized))
    default: return value
    }
}
