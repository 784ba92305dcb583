import ArgumentParser

/// `--allow-shadowed`, for `set`, `unset` and `edit`.
struct ShadowOptions: ParsableArguments {
    @Flag(
        name: .customLong("allow-shadowed"),
        help:
            "Write the change even where it does not take effect (a later drop-in, the environment's or an instance's section, an APP_ variable or a runtime override outweighs it): said on stderr, exit 0."
    )
    var allowShadowed = false
}
