/// The one rule for every name that becomes a component of a path: an application name
/// (`/etc/<name>/`, `/run/<name>/`), an instance (`/run/<name>/<instance>/`), a drop-in's name
/// (`Environments.plist.d/<name>.plist`).
///
/// A name is what systemd allows in the matching part of a unit name (`unit_prefix_is_valid`
/// and `unit_instance_is_valid` in systemd's `src/basic/unit-name.c`): ASCII letters, digits and
/// `:`, `-`, `_`, `.`, `\`, and for an instance or a drop-in also `@`. On top of systemd's rule:
/// not `.` or `..`, at most ``maximumLength`` bytes (a file name's limit, `NAME_MAX`; systemd's
/// whole unit name is shorter than 256; a drop-in's name ``maximumDropInLength``), and a
/// drop-in's name does not start with `.` (a hidden drop-in is never read). So no name can hold `/`, a NUL or any other control character, or
/// climb out of the directory it is put in.
package struct PathComponentName: Sendable, Hashable {
    /// What the name names: which characters it may hold, and how errors call it.
    package enum Kind: Sendable, Hashable {
        /// An application's name, systemd's unit-name prefix (no `@`).
        case applicationName
        /// An instance, as a template unit's `%i`.
        case instance
        /// A drop-in file's name, without `.plist`.
        case dropIn

        var noun: String {
            switch self {
            case .applicationName: "application name"
            case .instance: "instance name"
            case .dropIn: "drop-in name"
            }
        }

        /// Whether `@` is allowed: systemd allows it in an instance, not in a unit's prefix.
        var allowsAt: Bool { self != .applicationName }
    }

    /// The longest name, in bytes: `NAME_MAX`.
    package static let maximumLength = 255

    /// The longest drop-in name (without `.plist`), in bytes: `NAME.plist`, and envctl's
    /// temporary `.NAME.plist.XXXXXXXX.envctl-new` beside it, fit in ``maximumLength``.
    package static let maximumDropInLength = 228

    /// The longest name of `kind`, in bytes.
    package static func maximumLength(for kind: Kind) -> Int {
        kind == .dropIn ? maximumDropInLength : maximumLength
    }

    /// The name, valid.
    package let name: String

    /// What a valid name may be, in a sentence, for hints.
    package static func rule(for kind: Kind) -> String {
        "\(kind == .dropIn ? "a" : "an") \(kind.noun) is 1 to \(maximumLength(for: kind)) bytes of ASCII letters, digits and ':-_.\\"
            + (kind.allowsAt ? "@" : "") + "' (systemd's rule for a unit's "
            + (kind == .applicationName ? "name" : "instance") + "), not '.' or '..'"
            + (kind == .dropIn ? ", not starting with '.'" : "")
    }

    /// Checks `name`.
    ///
    /// - Parameters:
    ///   - kind: What it names.
    ///   - origin: Where it came from, for the error: `--instance`, `$APP_INSTANCE`, ...
    /// - Throws: ``EnvironmentError/Code/invalidName``, naming the name (shortened when
    ///   long), where it came from, what is wrong and what is allowed.
    package init(_ name: String, kind: Kind, from origin: String) throws(EnvironmentError) {
        if let problem = Self.problem(name, kind: kind) {
            throw EnvironmentError(
                .invalidName, "\(kind.noun) '\(Self.shortened(name))' (from \(origin)) cannot be used: \(problem)",
                hint: "Choose another name: " + Self.rule(for: kind))
        }
        self.name = name
    }

    /// Whether `name` is valid for `kind`.
    package static func isValid(_ name: String, kind: Kind) -> Bool {
        problem(name, kind: kind) == nil
    }

    /// What is wrong with `name`, or `nil` when it is valid.
    private static func problem(_ name: String, kind: Kind) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "it is empty" }
        let limit = maximumLength(for: kind)
        if bytes.count > limit { return "it is \(bytes.count) bytes long, more than \(limit)" }
        if name == "." || name == ".." { return "'\(name)' names a directory, not a name of its own" }
        for byte in bytes where !isAllowed(byte, kind: kind) {
            switch byte {
            case UInt8(ascii: "/"): return "it holds '/'"
            case 0: return "it holds a NUL character"
            case 0..<0x20, 0x7F: return "it holds a control character"
            case 0x80...: return "it holds a character outside ASCII"
            default: return "it holds '\(Character(Unicode.Scalar(byte)))'"
            }
        }
        if kind == .dropIn, bytes[0] == UInt8(ascii: ".") { return "it starts with '.' (a hidden file is never read)" }
        return nil
    }

    private static func isAllowed(_ byte: UInt8, kind: Kind) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "\\"):
            return true
        case UInt8(ascii: "@"):
            return kind.allowsAt
        default:
            return false
        }
    }

    /// At most 64 characters of `name`, for messages.
    private static func shortened(_ name: String) -> String {
        name.count <= 64 ? name : String(name.prefix(64)) + "…"
    }
}
