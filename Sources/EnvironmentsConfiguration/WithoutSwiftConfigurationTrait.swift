#if !SwiftConfiguration
    // Built without the trait "SwiftConfiguration": this module is empty but for these names, which
    // say which trait to enable wherever a program uses them.

    /// Needs the package trait `SwiftConfiguration`: `.package(url: …, traits: ["SwiftConfiguration"])`.
    @available(
        *, unavailable,
        message:
            "EnvironmentsConfiguration is built without the trait \"SwiftConfiguration\": enable it on the package line, .package(url: \"…/swift-environments.git\", from: \"…\", traits: [\"SwiftConfiguration\"]) (or swift build --traits SwiftConfiguration in this package)"
    )
    public struct EnvironmentProvider {}
#endif
