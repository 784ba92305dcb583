#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sets and unsets process environment variables for the duration of a closure, then
/// restores them. Only for tests in the serialized ``EnvironmentSensitiveTests`` suite.
enum ProcessEnvironment {
    static func with<Result>(
        _ changes: [String: String?], _ body: () throws -> Result
    ) rethrows -> Result {
        let saved = apply(changes)
        defer { restore(saved) }
        return try body()
    }

    static func with<Result>(
        _ changes: [String: String?], _ body: () async throws -> Result
    ) async rethrows -> Result {
        let saved = apply(changes)
        defer { restore(saved) }
        return try await body()
    }

    private static func apply(_ changes: [String: String?]) -> [String: String?] {
        var saved: [String: String?] = [:]
        for (name, value) in changes {
            saved[name] = .some(getenv(name).map { String(cString: $0) })
            set(name, value)
        }
        return saved
    }

    private static func restore(_ saved: [String: String?]) {
        for (name, value) in saved {
            set(name, value)
        }
    }

    private static func set(_ name: String, _ value: String?) {
        if let value {
            setenv(name, value, 1)
        } else {
            unsetenv(name)
        }
    }
}
