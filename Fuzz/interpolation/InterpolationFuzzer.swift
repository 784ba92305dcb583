// libFuzzer target for `${...}` interpolation (Interpolator), against a reference model.
//
// The input is a small text configuration (see FuzzInput). For every input:
// - resolving must end (libFuzzer's -timeout catches a loop) without crashing;
// - it must fail exactly when the model (InterpolationModel) fails, with one of the model's
//   error codes: so a cycle is an interpolationCycle error, never a loop or a result, and a
//   value over the cap on one value or more than the cap on all of them together an
//   interpolationLimitExceeded error, never a result (the caps are `fuzzLimits`, smaller
//   than the library's 1 MiB and 16 MiB so that inputs reaching them stay fast; Fuzz/run.sh
//   runs this target under a memory limit, a limit on any one allocation and a time limit,
//   so an expansion without a bound is an oom-* or timeout-* finding);
// - when it succeeds, every leaf must hold the model's value and secrecy: each `${Key}`,
//   `${env:VAR}` and `${credential:NAME}` replaced, `$${` made `${`, nothing else touched, and
//   a value that used a secret key or a credential secret;
// - resolving the result again changes no value, unless a result holds a `${` (from `$${`,
//   the environment or a credential), which a second pass would rightly expand.
// Built by Fuzz/run.sh with all of Sources/Environments (and swift-log), so internals are visible.

import Foundation

/// The caps the interpolator and the model work within here: 64 KiB per value (reached by
/// 17 doublings of one byte), 1 MiB in all (16 such values).
let fuzzLimits = Interpolator.Limits(valueBytes: 64 << 10, totalBytes: 1 << 20)

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInterpolation(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = FuzzInput(String(decoding: UnsafeBufferPointer(start: pointer, count: size), as: UTF8.self))
    var model = InterpolationModel(
        tree: input.tree, environment: input.environment, secrets: input.secrets,
        credentials: input.hasCredentials ? FuzzInput.credentials : nil,
        maximumValueBytes: fuzzLimits.valueBytes, maximumTotalBytes: fuzzLimits.totalBytes)

    // What the model expects, leaf by leaf (in a fixed order: the codes of all failing leaves).
    var expected: [String: (SettingValue, isSecret: Bool)] = [:]
    var failures: [EnvironmentError.Code] = []
    // More than the whole-configuration cap: interpolation must fail, with any of its codes.
    var tooLarge = false
    for (path, node) in model.flat.sorted(by: { $0.key < $1.key }) where !tooLarge {
        guard case .leaf(let configured) = node else { continue }
        do {
            expected[path] = try model.resolve(configured.value, at: path)
        } catch {
            switch error {
            case .tooLarge: tooLarge = true
            case .error(let code): failures.append(code)
            }
        }
    }

    var interpolator = Interpolator(
        tree: input.tree, environmentName: "Fuzz", processEnvironment: input.environment, secretPaths: input.secrets,
        limits: fuzzLimits)
    let resolved: [String: SettingNode]
    do {
        resolved = try interpolator.resolve(input.tree)
    } catch {
        let interpolationErrors: [EnvironmentError.Code] = [
            .interpolationCycle, .unresolvedReference, .missingEnvironmentVariable, .missingCredential,
            .invalidInterpolation, .interpolationLimitExceeded,
        ]
        let anyCode = model.isAmbiguous || tooLarge
        guard anyCode ? interpolationErrors.contains(error.code) : failures.contains(error.code) else {
            fatalError("interpolation failed with \(error.code) (\(error)), the model with \(failures)")
        }
        return 0
    }
    if model.isAmbiguous { return 0 }
    guard !tooLarge else { fatalError("interpolation built more than the whole-configuration cap") }
    guard failures.isEmpty else { fatalError("interpolation succeeded, the model failed with \(failures)") }

    var resultsHoldReferences = false
    compare(resolved, with: input.tree, expected: expected, prefix: "", holdsReferences: &resultsHoldReferences)
    if !resultsHoldReferences {
        var again = Interpolator(
            tree: resolved, environmentName: "Fuzz", processEnvironment: input.environment,
            secretPaths: input.secrets, limits: fuzzLimits)
        guard let twice = try? again.resolve(resolved) else { fatalError("a resolved tree does not resolve again") }
        guard twice.mapValues(\.value) == resolved.mapValues(\.value) else {
            fatalError("resolving a resolved tree changed it: \(resolved) then \(twice)")
        }
    }
    return 0
}

/// Checks every leaf of `resolved` against the model; the tree's shape and sources must not change.
private func compare(
    _ resolved: [String: SettingNode], with original: [String: SettingNode],
    expected: [String: (SettingValue, isSecret: Bool)], prefix: String, holdsReferences: inout Bool
) {
    guard resolved.count == original.count else { fatalError("keys changed: \(original.keys) to \(resolved.keys)") }
    for (key, before) in original {
        let path = SettingPath.joined(prefix, key)
        switch (before, resolved[key]) {
        case (.branch(let children, let source), .branch(let after, let afterSource)?):
            guard source == afterSource else { fatalError("the source of \(path) changed") }
            compare(after, with: children, expected: expected, prefix: path, holdsReferences: &holdsReferences)
        case (.leaf(let configured), .leaf(let after)?):
            guard let (value, isSecret) = expected[path] else { fatalError("the model has no value for \(path)") }
            guard after.source == configured.source else { fatalError("the source of \(path) changed") }
            guard same(after.value, value) else {
                fatalError("\(path): \(configured.value) became \(after.value), the model says \(value)")
            }
            guard after.isSecret == isSecret else {
                fatalError("\(path): \(after.value) is \(after.isSecret ? "" : "not ")secret, the model says otherwise")
            }
            holdsReferences = holdsReferences || containsReference(after.value)
        default:
            fatalError("\(path) changed shape: \(before) to \(String(describing: resolved[key]))")
        }
    }
}

/// Equality with strings compared byte for byte (Swift's `==` is canonical equivalence).
private func same(_ one: SettingValue, _ other: SettingValue) -> Bool {
    switch (one, other) {
    case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
    case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
    case (.dictionary(let a), .dictionary(let b)):
        a.count == b.count && a.allSatisfy { key, value in b[key].map { same(value, $0) } ?? false }
    default: one == other
    }
}

private func containsReference(_ value: SettingValue) -> Bool {
    switch value {
    case .string(let text): text.contains("${")
    case .array(let values): values.contains(where: containsReference)
    case .dictionary(let values): values.values.contains(where: containsReference)
    default: false
    }
}
