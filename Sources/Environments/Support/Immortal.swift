#if os(Linux)
    /// The Swift runtime's own way to make an object immortal (the standard library uses it for
    /// its static objects); exported by libswiftCore on Linux.
    @_silgen_name("_swift_stdlib_immortalize")
    private func swiftStdlibImmortalize(_ object: UnsafeMutableRawPointer)
#endif

/// Objects that live until the process exits.
enum Immortal {
    /// Marks `object` as never deallocated, so that retaining and releasing it no longer write
    /// its reference count: threads that use it at the same time then share its cache line
    /// read-only instead of fighting over it. Where the runtime does not offer this, the object
    /// is retained once more and merely never freed.
    static func make(_ object: AnyObject) {
        let pointer = Unmanaged.passRetained(object).toOpaque()
        #if os(Linux)
            swiftStdlibImmortalize(pointer)
        #endif
    }
}
