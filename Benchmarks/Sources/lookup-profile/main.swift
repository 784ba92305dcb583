import BenchmarkFixtures
import Configuration
import Environments
import EnvironmentsConfiguration
import Foundation
import Synchronization
import SystemPackage

// Runs one kind of lookup a given number of times, untimed, for an instruction counter:
//
//     valgrind --tool=callgrind .build/release/lookup-profile fetch 100000
//
// A plain synchronous program on purpose: it links no signal handler that runs before `main`
// and never parks the main thread in `dispatch_main`, which valgrind 3.19 cannot follow
// (it crashes in `rt_sigsuspend` on `environment-benchmarks`). `count-instructions.sh` runs
// every kind at two lookup counts and divides the difference, so set-up costs cancel out.

enum Kind: String, CaseIterable {
    /// A `[String: String]` lookup: the floor of any lookup by string key.
    case dictionary
    /// A `[String: Any]` lookup, the values as a property list gives them: `fetch`'s peer (the
    /// iOS pattern reads `Any` from a dictionary loaded from the app's plist), which pays for
    /// returning `Any` (an existential to make and destroy) as `fetch` does.
    case dictionaryAny = "dictionary-any"
    case fetch, string
    /// `fetch` on `Environment.shared` read once before the loop: without the caller's call to
    /// `shared`'s accessor, and its retain and release of the shared environment, around every
    /// call (which write nothing: `shared` is initialized statically).
    case heldFetch = "held-fetch"
    /// `fetch` on an environment of its own (`Environment(options:)`, not `shared`), read once
    /// before the loop: a read must not retain that environment's parts either.
    case ownFetch = "own-fetch"
    /// A typed read of a declared setting: `Environment.shared[setting]` (`Setting<String>`),
    /// the configuration loaded with the declaration of every key.
    case declared
    /// `fetch`, the configuration loaded with the declaration of every key: a declaration
    /// must not change what `fetch` costs.
    case declaredFetch = "declared-fetch"
    /// One cold load of an `N`-key configuration (`N` in place of the lookup count), with the
    /// declaration of every key made but not used: the loads' difference is the check's cost.
    case load
    /// The same load, checked against the declaration of every key.
    case loadDeclared = "load-declared"
    case swiftConfiguration = "swift-configuration"
    case oursProvider = "ours-provider"
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4, let kind = Kind(rawValue: arguments[1]),
    let lookups = Int(arguments[2]), lookups >= 0, let threads = arguments.count == 4 ? Int(arguments[3]) : 1,
    threads >= 1
else {
    let kinds = Kind.allCases.map(\.rawValue).joined(separator: "|")
    FileHandle.standardError.write(Data("usage: lookup-profile \(kinds) LOOKUPS [THREADS]\n".utf8))
    exit(2)
}

if kind == .load || kind == .loadDeclared {
    // A load, not lookups: the count is the number of keys.
    let directory = try Fixtures.makeDirectory("load")
    defer { Fixtures.removeAll() }
    let settings = Fixtures.settings(lookups)
    try Fixtures.environmentsPlist(settings).write(to: URL(fileURLWithPath: directory + "/Environments.plist"))
    let declaration = SettingsDeclaration(
        Fixtures.keys(lookups).map { Setting<String?>($0) as any SettingDeclaring })
    var options = Fixtures.options(directory)
    if kind == .loadDeclared { options.declaration = declaration }
    let environment = try Environment(options: options)
    blackHole(environment.get(Fixtures.keys(lookups)[lookups / 2], default: ""))
    exit(0)
}

let keyCount = 100
let keys = Fixtures.keys(keyCount)
let settings = Fixtures.settings(keyCount)
// Read-only after this line, by the lookup threads.
nonisolated(unsafe) let anySettings: [String: Any] = settings
let directory = try Fixtures.makeDirectory("profile")
defer { Fixtures.removeAll() }
let peerFile = try Fixtures.writeFiles(settings, in: directory).peer
let declared = keys.map { Setting<String>($0, default: "") }
var options = Fixtures.options(directory)
if kind == .declared || kind == .declaredFetch {
    options.declaration = SettingsDeclaration(declared.map { $0 as any SettingDeclaring })
}
try Environment.bootstrap(options)
let ownEnvironment = kind == .ownFetch ? try Environment(options: options) : nil

/// swift-configuration's file provider is made asynchronously: on the global executor, while
/// this thread waits on a semaphore (not in `dispatch_main`).
func peerReader() -> ConfigReader {
    let made = Mutex<ConfigReader?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let provider = try await FileProvider<PropertyListSnapshot>(filePath: FilePath(peerFile))
        made.withLock { $0 = ConfigReader(provider: provider) }
        done.signal()
    }
    done.wait()
    return made.withLock { $0! }
}

let rounds = lookups / keys.count
let reader: ConfigReader? =
    switch kind {
    case .swiftConfiguration: peerReader()
    case .oursProvider: ConfigReader(provider: EnvironmentProvider(environment: Environment.shared))
    default: nil
    }

/// The lookups one thread makes.
@Sendable func lookUp() {
    switch kind {
    case .dictionary:
        for _ in 0..<rounds { for key in keys { blackHole(settings[key]) } }
    case .dictionaryAny:
        for _ in 0..<rounds { for key in keys { blackHole(anySettings[key]) } }
    case .fetch, .declaredFetch:
        for _ in 0..<rounds { for key in keys { blackHole(Environment.shared.fetch(key)) } }
    case .heldFetch:
        let environment = Environment.shared
        for _ in 0..<rounds { for key in keys { blackHole(environment.fetch(key)) } }
    case .ownFetch:
        let environment = ownEnvironment!
        for _ in 0..<rounds { for key in keys { blackHole(environment.fetch(key)) } }
    case .string:
        for _ in 0..<rounds { for key in keys { blackHole(Environment.shared.get(key, default: "")) } }
    case .declared:
        for _ in 0..<rounds { for setting in declared { blackHole(Environment.shared[setting]) } }
    case .swiftConfiguration, .oursProvider:
        for _ in 0..<rounds { for key in keys { blackHole(reader!.string(forKey: ConfigKey(key))) } }
    case .load, .loadDeclared:
        break  // done above
    }
}

// With several threads, each makes every lookup (the same keys in the same order).
let workers = (1..<threads).map { _ in
    let thread = Thread(block: lookUp)
    thread.start()
    return thread
}
lookUp()
while workers.contains(where: { !$0.isFinished }) { usleep(1000) }
