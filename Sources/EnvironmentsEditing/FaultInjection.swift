import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Fault injection for tests that kill `envctl` between two system calls of a change that
/// spans files (``FileTransaction``), or make one of its renames fail. Only a debug build reads
/// the variables; in a release build every call does nothing.
///
/// - ``killVariable`` (`ENVCTL_TEST_KILL_AT_STEP=N`): the process sends itself `SIGKILL` at
///   the Nth ``step()`` (from 1).
/// - ``failRenameVariable`` (`ENVCTL_TEST_FAIL_RENAME=I`): the rename of the file at index I
///   fails (as `EACCES`), which undoes the change.
package enum FaultInjection {
    /// The variable that names the step at which the process kills itself.
    package static let killVariable = "ENVCTL_TEST_KILL_AT_STEP"
    /// The variable that names the index of the rename that fails.
    package static let failRenameVariable = "ENVCTL_TEST_FAIL_RENAME"

    #if DEBUG
        private static let steps = Atomic<Int>(0)
        private static let killAt: Int? = ProcessInfo.processInfo.environment[killVariable].flatMap { Int($0) }
        private static let failingRename: Int? = ProcessInfo.processInfo.environment[failRenameVariable].flatMap {
            Int($0)
        }
    #endif

    /// A point between two system calls: the process kills itself here when it is the step
    /// ``killVariable`` names.
    package static func step() {
        #if DEBUG
            guard let killAt else { return }
            let step = steps.add(1, ordering: .relaxed).newValue
            if step == killAt { kill(getpid(), SIGKILL) }
        #endif
    }

    /// Whether the rename of the file at `index` is to fail.
    package static func failsRename(_ index: Int) -> Bool {
        #if DEBUG
            return failingRename == index
        #else
            return false
        #endif
    }
}
