#if !Fleet
    // Built without the trait "Fleet": this module is empty but for these names, which
    // say which trait to enable wherever a program uses them.

    /// Needs the package trait `Fleet`: `.package(url: …, traits: ["Fleet"])`.
    @available(
        *, unavailable,
        message:
            "EnvironmentsEtcd is built without the trait \"Fleet\": enable it on the package line, .package(url: \"…/swift-environments.git\", from: \"…\", traits: [\"Fleet\"]) (or swift build --traits Fleet in this package)"
    )
    public enum EtcdFleet {}
#endif
