#if !Vapor
    // Built without the trait "Vapor": this module is empty but for these names, which
    // say which trait to enable wherever a program uses them.

    /// Needs the package trait `Vapor`: `.package(url: …, traits: ["Vapor"])`.
    @available(
        *, unavailable,
        message:
            "EnvironmentsVapor is built without the trait \"Vapor\": enable it on the package line, .package(url: \"…/swift-environments.git\", from: \"…\", traits: [\"Vapor\"]) (or swift build --traits Vapor in this package)"
    )
    public struct VaporEnvironmentsConfiguration {}
#endif
