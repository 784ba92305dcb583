#if !Fleet
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    // Built without the trait "Fleet": fleet-benchmark says so and exits with status 1.
    @main
    enum WithoutTrait {
        static func main() {
            let message = """
                fleet-benchmark: this build has no fleet mode (the package trait "Fleet" was not enabled). \
                Build it with: swift build --traits Fleet --product fleet-benchmark; \
                or, in a package that depends on swift-environments, add traits: ["Fleet"] to its .package line.

                """
            _ = message.withCString { write(2, $0, strlen($0)) }
            exit(1)
        }
    }
#endif
