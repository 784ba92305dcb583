#if os(Linux)
    import Glibc

    /// A failed system call in a test fixture.
    struct SystemCallError: Error, CustomStringConvertible {
        let call: String
        let code: Int32

        init(_ call: String, code: Int32 = errno) {
            self.call = call
            self.code = code
        }

        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }
#endif
