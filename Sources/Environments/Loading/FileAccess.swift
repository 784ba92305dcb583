#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Looks at configuration paths without reading them, and turns an `errno` into an error that
/// names the path and the cause.
///
/// Only a path that truly is not there is absent: the last component does not exist (and is
/// not a symbolic link). A dangling link, a loop of links, a component that is not a directory,
/// missing permission or an I/O error is a broken deploy, never "no file": a reload that meets
/// one is rejected and the last good configuration stays.
enum FileAccess {
    /// What is at a path.
    enum Presence {
        /// Something is there (through symbolic links); whether it is a directory.
        case present(isDirectory: Bool)
        /// Nothing: the path does not exist and is not a symbolic link.
        case absent
        /// Something is in the way: the error says what.
        case unusable(EnvironmentError)
    }

    /// What is at `path`, following symbolic links.
    ///
    /// - Parameter subject: What the path is, for the error: "the configuration directory".
    static func presence(of path: String, subject: String) -> Presence {
        var status = stat()
        if stat(path, &status) == 0 { return .present(isDirectory: status.st_mode & S_IFMT == S_IFDIR) }
        let code = errno
        if code == ENOENT, linkTarget(path) == nil { return .absent }
        return .unusable(error(path: path, errno: code, subject: subject))
    }

    /// Whether nothing at all is at `path`: `lstat` fails with `ENOENT`. A dangling link is
    /// something; so is a path that cannot be looked at (`EACCES`, `ELOOP`, ...), whose reader
    /// then reports why.
    static func isAbsent(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) != 0 && errno == ENOENT
    }

    /// Where the symbolic link at `path` points, or `nil` if `path` is not a symbolic link.
    static func linkTarget(_ path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return "?" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The error for a failed `open`, `stat` or `opendir` of `path` with `errno` `code`.
    ///
    /// `ENOENT` is ``EnvironmentError/Code/fileNotFound`` only when nothing is there: through a
    /// dangling symbolic link it is ``EnvironmentError/Code/fileUnreadable``, as every other
    /// cause is.
    ///
    /// - Parameter subject: What the path is, put before the message: "the drop-in directory".
    static func error(path: String, errno code: Int32, subject: String? = nil) -> EnvironmentError {
        let what = subject.map { $0 + " " } ?? ""
        let namei = "`namei -l \(path)` shows each step"
        switch code {
        case ENOENT:
            if let target = linkTarget(path) {
                return EnvironmentError(
                    .fileUnreadable, "\(what)is a symbolic link to '\(target)', which does not exist", file: path,
                    hint: "Point the link at what it should lead to, or remove it (\(namei))")
            }
            return EnvironmentError(
                .fileNotFound, "\(what)does not exist", file: path,
                hint: "Create it, or point --config-dir or $CONFIGURATION_DIRECTORY at the directory that holds it")
        case EACCES, EPERM:
            return EnvironmentError(
                .fileUnreadable, "\(what)cannot be read: permission denied", file: path,
                hint: "Give user \(currentUserName) read access to it and search access to its directories (\(namei))")
        case ELOOP:
            return EnvironmentError(
                .fileUnreadable, "\(what)cannot be read: too many levels of symbolic links (a loop)", file: path,
                hint: "Check where the links lead (\(namei))")
        case ENOTDIR:
            return EnvironmentError(
                .fileUnreadable, "\(what)cannot be read: a directory on its path is not a directory", file: path,
                hint: "Check what each part of the path is (\(namei))")
        default:
            return EnvironmentError(
                .fileUnreadable, "\(what)cannot be read: \(String(cString: strerror(code))) (errno \(code))",
                file: path)
        }
    }

    /// The names in the directory at `path`, without `.` and `..`; an error names the cause.
    static func entries(of path: String, subject: String) throws(EnvironmentError) -> [String] {
        guard let stream = opendir(path) else { throw error(path: path, errno: errno, subject: subject) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                let code = errno
                if code != 0 { throw error(path: path, errno: code, subject: subject) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// The user the program runs as, for hints about permissions.
    private static var currentUserName: String {
        let uid = getuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name {
            return "\(String(cString: name)) (uid \(uid))"
        }
        return "uid \(uid)"
    }
}
