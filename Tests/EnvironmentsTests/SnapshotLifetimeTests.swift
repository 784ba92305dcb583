import Environments
import Foundation
import Locking
import Testing

/// How long snapshots live, and reads and writes from several threads at once.
@Suite struct SnapshotLifetimeTests {
    /// Runs `body` on a thread of its own (not the cooperative pool) and waits for it.
    private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                body(index)
                group.leave()
            }.start()
        }
        group.wait()
    }

    @Test func aReplacedSnapshotIsFreedWhileAThreadThatReadItIdles() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Token": "old-secret"], "Debug": [:]])
            let environment = try Environment(options: directory.options())
            weak var first: EnvironmentSnapshot?
            do { first = environment.snapshot }
            #expect(first != nil)

            // A thread reads once, then stays alive without reading again.
            let hasRead = DispatchSemaphore(value: 0)
            let mayExit = DispatchSemaphore(value: 0)
            let seen = Locked<String?>(nil)
            Thread {
                seen.withLock { $0 = (try? environment.require("Token", as: String.self)) }
                hasRead.signal()
                mayExit.wait()
            }.start()
            hasRead.wait()
            #expect(seen.value == "old-secret")

            try directory.writeXML(["Common": ["Token": "new-secret"], "Debug": [:]])
            try environment.reload()
            #expect((try? environment.require("Token", as: String.self)) == "new-secret")
            #expect(first == nil, "the replaced snapshot (and the rotated secret) is freed at once")
            mayExit.signal()
        }
    }

    @Test func aFreedEnvironmentsSnapshotIsFreedAlthoughThisThreadReadIt() throws {
        weak var snapshot: EnvironmentSnapshot?
        do {
            let environment = try Environment(values: ["Token": "secret"])
            // This thread now holds a view of it.
            #expect((try? environment.require("Token", as: String.self)) == "secret")
            snapshot = environment.snapshot
            #expect(snapshot != nil)
        }
        #expect(snapshot == nil, "the environment is gone, and so is its snapshot")
    }

    @Test func oneThreadReadingManyEnvironmentsInTurnSeesEachOnesCurrentValues() throws {
        // More environments than a thread keeps views of (4): every read is still right.
        let environments = try (0..<7).map { try Environment(values: ["N": .integer($0)]) }
        for round in 0..<3 {
            for (index, environment) in environments.enumerated() {
                #expect(environment.get("N", default: -1) == index + 10 * round)
            }
            for (index, environment) in environments.enumerated() {
                try environment.setOverride(.integer(index + 10 * (round + 1)), forKey: "N")
            }
        }
    }

    @Test func aSnapshotHeldByTheCallerStaysValid() throws {
        let environment = try Environment(values: ["A": "1"])
        let held = environment.snapshot
        try environment.setOverride("2", forKey: "A")
        try environment.setOverride("3", forKey: "A")
        #expect((try? held.require("A", as: String.self)) == "1")
        #expect((try? environment.require("A", as: String.self)) == "3")
    }

    @Test func validateMayReadTheEnvironmentItValidates() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Limit": 1], "Debug": [:]])
            let box = Locked<Environment?>(nil)
            let seenDuringValidation = Locked<[Int]>([])
            let options = directory.options(validate: { snapshot in
                // The environment still serves the current configuration while a new one is judged.
                if let running = box.value {
                    seenDuringValidation.withLock { $0.append(running.get("Limit", default: -1)) }
                }
                if snapshot.get("Limit", default: 0) > 10 {
                    throw EnvironmentError(.validationFailed, "Limit is above 10", key: "Limit")
                }
            })
            let environment = try Environment(options: options)
            box.withLock { $0 = environment }
            try directory.writeXML(["Common": ["Limit": 5], "Debug": [:]])
            try environment.reload()
            try directory.writeXML(["Common": ["Limit": 50], "Debug": [:]])
            #expect(throws: EnvironmentError.self) { try environment.reload() }
            #expect(environment.get("Limit", default: 0) == 5)
            #expect(seenDuringValidation.value == [1, 5])
            // validate holds the box, which holds the environment, which holds validate.
            box.withLock { $0 = nil }
        }
    }

    @Test func overridesSetFromSeveralThreadsAtOnceAreAllApplied() throws {
        let environment = try Environment(values: ["Base": "b"])
        let perThread = 40
        onThreads(4) { thread in
            for index in 0..<perThread {
                _ = try? environment.setOverride(.integer(index), forKey: "T\(thread).K\(index)")
            }
        }
        for thread in 0..<4 {
            for index in 0..<perThread {
                #expect(environment.get("T\(thread).K\(index)", default: -1) == index)
            }
        }
        #expect(environment.generation == UInt64(1 + 4 * perThread))
    }

    @Test func readsDuringReloadsSeeWholeGenerationsThatNeverGoBack() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["A": 0, "B": 0], "Debug": [:]])
            let environment = try Environment(options: directory.options())
            let problems = Locked<[String]>([])
            let done = Locked(false)
            let readers = DispatchGroup()
            for _ in 0..<3 {
                readers.enter()
                Thread {
                    var last: UInt64 = 0
                    var reads = 0
                    while !done.value || reads < 1000 {
                        let snapshot = environment.snapshot
                        let a = snapshot.get("A", default: -1)
                        let b = snapshot.get("B", default: -2)
                        if a != b { problems.withLock { $0.append("A=\(a) B=\(b) in one snapshot") } }
                        if snapshot.generation < last {
                            problems.withLock { $0.append("generation \(snapshot.generation) after \(last)") }
                        }
                        last = snapshot.generation
                        // The lock-free path too: A has a value in every generation.
                        if !(environment.fetch("A") is Int) { problems.withLock { $0.append("A missing") } }
                        reads += 1
                    }
                    readers.leave()
                }.start()
            }
            for version in 1...200 {
                try directory.writeXML(["Common": ["A": version, "B": version], "Debug": [:]])
                try environment.reload()
            }
            done.withLock { $0 = true }
            readers.wait()
            #expect(problems.value.prefix(5) == [])
            #expect(environment.generation == 201)
        }
    }
}
