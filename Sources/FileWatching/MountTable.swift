/// One line of `/proc/self/mountinfo` (proc(5)): a mount, where it is and what it shows.
///
/// Paths are unescaped: the kernel writes a space, tab, line feed and backslash in a path as
/// `\040`, `\011`, `\012` and `\134`.
package struct MountInfoEntry: Sendable, Hashable {
    /// The mount's unique id in its namespace (field 1); a new mount gets a new one.
    package var mountID: Int
    /// The id of the mount it sits on (field 2).
    package var parentID: Int
    /// `major:minor` of the file system's device (field 3).
    package var device: String
    /// The directory of the file system that is the root of this mount (field 4).
    package var root: String
    /// Where it is mounted, relative to the process's root (field 5).
    package var mountPoint: String
    /// The file system type (the first field after the ` - ` separator), such as `overlay`.
    package var fileSystemType: String
    /// The mount source (the second field after the separator), such as `confext`.
    package var source: String
    /// The per-superblock options (the third field after the separator), such as an overlay's
    /// `lowerdir=...`.
    package var superOptions: String

    /// What identifies the mounted file system: a merge, a refresh or an unmerge changes it;
    /// a remount that only changes the mount's flags (read-only or not) does not.
    package struct Identity: Sendable, Hashable {
        /// ``MountInfoEntry/mountID``.
        package var mountID: Int
        /// ``MountInfoEntry/device``.
        package var device: String
        /// ``MountInfoEntry/root``.
        package var root: String
        /// ``MountInfoEntry/mountPoint``.
        package var mountPoint: String
    }

    /// The parts of the line that say which file system is mounted where.
    package var identity: Identity {
        Identity(mountID: mountID, device: device, root: root, mountPoint: mountPoint)
    }

    /// An overlay's lower directories, topmost first, from `lowerdir=` in ``superOptions``
    /// (unescaped); empty for other file systems.
    package var overlayLowerDirectories: [String] {
        guard fileSystemType == "overlay" else { return [] }
        for option in MountTable.splitOptions(superOptions) where option.hasPrefix("lowerdir=") {
            return MountTable.splitLowerDirectories(String(option.dropFirst("lowerdir=".count)))
        }
        return []
    }
}

/// Parses `/proc/self/mountinfo` and tells which mounts matter to a set of directories.
///
/// The kernel marks `/proc/self/mountinfo` with `POLLPRI` whenever the process's mount table
/// changes, for any mount anywhere; ``FileWatcher`` compares only the mounts that
/// ``relevantMounts(in:to:)`` picks before and after, so that mounts elsewhere (containers,
/// automounts) cause no reload.
package enum MountTable {
    /// Parses the text of a mountinfo file. Lines that do not have the documented form are
    /// skipped; nothing in the input can make it fail.
    ///
    /// - Parameter text: The file's contents.
    /// - Returns: One entry per well-formed line, in order.
    package static func parse(_ text: String) -> [MountInfoEntry] {
        // Split on bytes: a line feed or space followed by a combining mark is one Character.
        text.utf8.split(separator: UInt8(ascii: "\n")).compactMap { parseLine(Substring($0)) }
    }

    /// Parses one mountinfo line, or returns `nil` if it does not have the documented form:
    /// two decimal ids, `major:minor`, root, mount point, options, any optional fields, `-`,
    /// type, source and super options.
    ///
    /// - Parameter line: One line, without its line feed.
    package static func parseLine(_ line: Substring) -> MountInfoEntry? {
        let fields = line.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map {
            Substring($0)
        }
        guard fields.count >= 10, let separator = fields[6...].firstIndex(of: "-"),
            fields.count - separator >= 4,
            let mountID = Int(fields[0]), let parentID = Int(fields[1]), mountID >= 0, parentID >= 0
        else { return nil }
        let device = fields[2]
        guard let colon = device.firstIndex(of: ":"),
            !device[..<colon].isEmpty, !device[device.index(after: colon)...].isEmpty,
            device.allSatisfy({ $0 == ":" || $0.isASCII && $0.isNumber }),
            device.filter({ $0 == ":" }).count == 1
        else { return nil }
        let root = unescape(fields[3])
        let mountPoint = unescape(fields[4])
        guard root.hasPrefix("/"), mountPoint.hasPrefix("/") else { return nil }
        return MountInfoEntry(
            mountID: mountID, parentID: parentID, device: String(device), root: root, mountPoint: mountPoint,
            fileSystemType: unescape(fields[separator + 1]), source: unescape(fields[separator + 2]),
            superOptions: fields[(separator + 3)...].joined(separator: " "))
    }

    /// The mounts that can change what `directories` show: mounted on one of them, on a
    /// directory above one (`/`, `/etc`), or below one (a file or directory inside it).
    ///
    /// - Parameters:
    ///   - entries: A parsed mount table.
    ///   - directories: Absolute paths without symbolic links.
    /// - Returns: The identities of those mounts, in table order.
    package static func relevantMounts(
        in entries: [MountInfoEntry], to directories: some Collection<String>
    ) -> [MountInfoEntry.Identity] {
        entries.filter { entry in
            directories.contains { directory in
                isSameOrBelow(directory, entry.mountPoint) || isSameOrBelow(entry.mountPoint, directory)
            }
        }.map(\.identity)
    }

    /// Whether `path` is `ancestor` or lies below it (both absolute and normalized).
    package static func isSameOrBelow(_ path: String, _ ancestor: String) -> Bool {
        if ancestor == "/" || path == ancestor { return true }
        return path.hasPrefix(ancestor) && path.dropFirst(ancestor.count).first == "/"
    }

    /// Undoes the kernel's octal escapes (`\040` and the like) in one field. A backslash that
    /// does not start three octal digits is kept as it is.
    package static func unescape(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(field.utf8.count)
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
                let value = octal(utf8[(index + 1)...(index + 3)])
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Three octal digits as a byte, or `nil` if they are not exactly that.
    private static func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
        guard digits.count == 3 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "7") else { return nil }
            value = value * 8 + Int(digit - UInt8(ascii: "0"))
        }
        return value <= 255 ? UInt8(value) : nil
    }

    /// Splits super options at commas: the kernel writes a comma inside a value as `\054`.
    static func splitOptions(_ options: String) -> [String] {
        options.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
    }

    /// Splits an overlay's `lowerdir=` value at its colons (the kernel writes a colon inside a
    /// path as `\072`), and unescapes each part.
    static func splitLowerDirectories(_ value: String) -> [String] {
        value.split(separator: ":", omittingEmptySubsequences: true).map { unescape($0) }
    }
}
