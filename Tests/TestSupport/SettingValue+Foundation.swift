import Environments
import Foundation

// What tests need to compare our parsers with Foundation's `PropertyListSerialization`: the
// package itself reads no property list with Foundation.

extension SettingValue {
    /// An object of Foundation's `PropertyListSerialization` as a ``SettingValue``: as
    /// ``SettingValue/init(propertyList:)``, with each `NSNumber` read as the boolean, integer
    /// or real it is; `nil` for an integer outside `Int`'s range.
    package init?(foundationObject value: Any) {
        self.init(propertyList: value) { leaf in
            guard let number = leaf as? NSNumber, type(of: leaf) != Bool.self else { return nil }
            return .some(SettingValue(number: number))
        }
    }

    /// `nil` for an integer outside `Int`'s range: Foundation parses `<integer>` up to
    /// `UInt64.max` (and binary property lists hold 128-bit integers), which `intValue` would
    /// silently wrap (`UInt64.max` reads as -1).
    private init?(number: NSNumber) {
        #if canImport(Darwin)
            if CFGetTypeID(number) == CFBooleanGetTypeID() {
                self = .bool(number.boolValue)
                return
            }
        #endif
        let type = String(cString: number.objCType)
        switch type {
        case "c", "B":
            // `char` is how CoreFoundation reports a boolean NSNumber.
            if number.intValue == 0 || number.intValue == 1, type == "B" {
                self = .bool(number.boolValue)
            } else {
                self = .integer(number.intValue)
            }
        case "f", "d":
            self = .real(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            guard let exact = Int(exactly: number.uint64Value) else { return nil }
            self = .integer(exact)
        case "q", "l", "i", "s":
            self = .integer(Int(number.int64Value))
        default:
            // Anything else (CoreFoundation's 128-bit integers, say) only if `int64Value` holds
            // it exactly.
            let value = number.int64Value
            guard NSNumber(value: value) == number else { return nil }
            self = .integer(Int(value))
        }
    }
}
