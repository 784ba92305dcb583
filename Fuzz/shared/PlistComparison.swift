// The strict comparison of a parsed SettingValue with the object Foundation's
// PropertyListSerialization returns, shared by the XML (plist) and binary (bplist) fuzzers:
// Fuzz/run.sh compiles it into both.

import Foundation

/// A strict structural comparison of a SettingValue with the object Foundation returns.
enum PlistComparison {
    /// Where the two differ (a path and what differs), or nil if they are the same.
    static func difference(_ ours: SettingValue, _ theirs: Any, at path: String) -> String? {
        // Foundation on Linux returns Swift Bools for <true/> and <false/>, and NSNumbers for
        // <integer> and <real>: check the Bool first, as a Bool also bridges to NSNumber.
        let isBool = type(of: theirs) == Bool.self
        switch ours {
        case .bool(let value):
            guard isBool, let other = theirs as? Bool else { return "\(path): boolean vs \(type(of: theirs))" }
            return value == other ? nil : "\(path): \(value) vs \(other)"
        case .integer(let value):
            guard !isBool, let number = theirs as? NSNumber else { return "\(path): integer vs \(type(of: theirs))" }
            let kind = String(cString: number.objCType)
            guard !["d", "f"].contains(kind) else { return "\(path): integer vs real" }
            // An unsigned NSNumber above Int.max would wrap in int64Value.
            guard kind != "Q" || number.uint64Value <= UInt64(Int.max), number.int64Value == Int64(value) else {
                return "\(path): \(value) vs \(number)"
            }
            return nil
        case .real(let value):
            guard !isBool, let number = theirs as? NSNumber else { return "\(path): real vs \(type(of: theirs))" }
            guard ["d", "f"].contains(String(cString: number.objCType)) else { return "\(path): real vs integer" }
            let other = number.doubleValue
            let same = value.bitPattern == other.bitPattern || (value.isNaN && other.isNaN)
            return same ? nil : "\(path): \(value) vs \(other)"
        case .string(let value):
            guard let other = theirs as? String else { return "\(path): string vs \(type(of: theirs))" }
            // Byte for byte: Swift's String equality would hide a difference in normalization.
            return value.utf8.elementsEqual(other.utf8)
                ? nil : "\(path): \(value.debugDescription) vs \(other.debugDescription)"
        case .date(let value):
            guard let other = theirs as? Date else { return "\(path): date vs \(type(of: theirs))" }
            let (seconds, otherSeconds) = (value.timeIntervalSinceReferenceDate, other.timeIntervalSinceReferenceDate)
            return seconds.bitPattern == otherSeconds.bitPattern ? nil : "\(path): \(seconds) vs \(otherSeconds)"
        case .data(let value):
            guard let other = theirs as? Data else { return "\(path): data vs \(type(of: theirs))" }
            return value == other ? nil : "\(path): \(Array(value)) vs \(Array(other))"
        case .array(let values):
            guard let others = theirs as? [Any] else { return "\(path): array vs \(type(of: theirs))" }
            guard values.count == others.count else { return "\(path): \(values.count) vs \(others.count) elements" }
            for (index, value) in values.enumerated() {
                if let difference = difference(value, others[index], at: "\(path)[\(index)]") { return difference }
            }
            return nil
        case .dictionary(let values):
            guard let others = theirs as? [String: Any] else { return "\(path): dictionary vs \(type(of: theirs))" }
            guard values.count == others.count else { return "\(path): \(values.count) vs \(others.count) keys" }
            // Keys matched byte for byte, for the same reason as strings.
            var byBytes: [[UInt8]: Any] = [:]
            for (key, value) in others { byBytes[Array(key.utf8)] = value }
            guard byBytes.count == others.count else { return "\(path): Foundation's keys collide" }
            for (key, value) in values {
                guard let other = byBytes[Array(key.utf8)] else {
                    return "\(path): key \(key.debugDescription) missing"
                }
                if let difference = difference(value, other, at: "\(path).\(key)") { return difference }
            }
            return nil
        }
    }
}
