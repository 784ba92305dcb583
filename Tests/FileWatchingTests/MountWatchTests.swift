import Foundation
import Testing

@testable import FileWatching

#if os(Linux)
    import Glibc

    /// Real mounts, made with mount(2) in this process's mount namespace, under a fresh
    /// temporary directory, and undone before the test returns.
    enum Mounts {
        /// `mount -t tmpfs tmpfs PATH`.
        static func tmpfs(at path: String) throws {
            try check(mount("tmpfs", path, "tmpfs", 0, "size=1m,mode=0755"), "mount tmpfs", path)
        }

        /// A read-only overlay of `lower` (topmost first) on `path`, as `systemd-confext merge`
        /// puts one on `/etc` (with `/etc` itself as the lowest layer).
        static func overlay(lower: [String], at path: String) throws {
            try check(
                mount("overlay", path, "overlay", UInt(MS_RDONLY), "lowerdir=" + lower.joined(separator: ":")),
                "mount overlay", path)
        }

        /// Unmounts the topmost mount on `path`.
        static func unmount(_ path: String) throws {
            try check(umount2(path, 0), "umount", path)
        }

        /// Unmounts everything on `path`, however deep, ignoring errors (cleanup).
        static func unmountAll(_ path: String) {
            while umount2(path, Int32(MNT_DETACH)) == 0 {}
        }

        private static func check(_ result: Int32, _ operation: String, _ path: String) throws {
            if result != 0 {
                throw TestFailure(description: "\(operation) \(path) failed: \(String(cString: strerror(errno)))")
            }
        }

        /// The mount table, as the watcher reads it.
        static func table() throws -> [MountInfoEntry] { try MountWatch().read() }
    }

    extension FileWatchingTests {
        @Suite("mountinfo parsing") struct MountInfoParsingTests {
            @Test("the example line of proc(5): fields, optional fields and escapes")
            func procManualLine() throws {
                let line =
                    #"36 35 98:0 /mnt1 /mnt\0402 rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue"#
                let entry = try #require(MountTable.parseLine(Substring(line)))
                #expect(entry.mountID == 36)
                #expect(entry.parentID == 35)
                #expect(entry.device == "98:0")
                #expect(entry.root == "/mnt1")
                #expect(entry.mountPoint == "/mnt 2")
                #expect(entry.fileSystemType == "ext3")
                #expect(entry.source == "/dev/root")
                #expect(entry.superOptions == "rw,errors=continue")
                #expect(entry.overlayLowerDirectories.isEmpty)
            }

            @Test("systemd-confext's overlay on /etc, as systemd 257 mounts it: its layers, topmost first")
            func confextOverlay() throws {
                let line =
                    "265 99 0:57 / /etc ro,nosuid,nodev,noexec,relatime shared:85 - overlay confext "
                    + "ro,lowerdir=/run/systemd/sysext/meta/etc:/run/systemd/sysext/confexts/demo/etc:/etc,redirect_dir=on"
                let entry = try #require(MountTable.parseLine(Substring(line)))
                #expect(entry.mountPoint == "/etc")
                #expect(entry.source == "confext")
                #expect(
                    entry.overlayLowerDirectories == [
                        "/run/systemd/sysext/meta/etc", "/run/systemd/sysext/confexts/demo/etc", "/etc",
                    ])
                // A colon or comma inside a layer's path is escaped by the kernel.
                let escaped = try #require(
                    MountTable.parseLine("1 0 0:1 / /a rw - overlay x ro,lowerdir=/l\\072one:/l\\054two"))
                #expect(escaped.overlayLowerDirectories == ["/l:one", "/l,two"])
            }

            @Test(
                "malformed lines are skipped",
                arguments: [
                    "", "36 35 98:0 /mnt1 /mnt2 rw - ext3", "x 35 98:0 / / rw - ext3 s o",
                    "36 35 980 / / rw - ext3 s o",
                    "36 35 98:0 mnt / rw - ext3 s o", "36 35 98:0 / / rw master:1 ext3 s o",
                    "-1 35 98:0 / / rw - a b c",
                ])
            func malformed(line: String) {
                #expect(MountTable.parseLine(Substring(line)) == nil)
            }

            @Test("a backslash that starts no octal escape stays")
            func strayBackslash() {
                #expect(MountTable.unescape(#"/a\b\04"#) == #"/a\b\04"#)
                #expect(MountTable.unescape(#"/a\134b\011c"#) == "/a\\b\tc")
            }

            @Test("this process's own table: every line parses, / is in it")
            func ownTable() throws {
                let text = try String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
                let lines = text.split(separator: "\n")
                let entries = MountTable.parse(text)
                #expect(entries.count == lines.count)
                #expect(entries.contains { $0.mountPoint == "/" })
            }

            @Test("which mounts matter: on, above and below a directory; not beside it")
            func relevance() {
                func entry(_ id: Int, _ point: String) -> MountInfoEntry {
                    MountInfoEntry(
                        mountID: id, parentID: 1, device: "0:\(id)", root: "/", mountPoint: point,
                        fileSystemType: "tmpfs",
                        source: "tmpfs", superOptions: "rw")
                }
                let table = [
                    entry(1, "/"), entry(2, "/etc"), entry(3, "/etc/app/Environments.plist.d"),
                    entry(4, "/etc/application"),
                    entry(5, "/var/lib/docker/overlay2/x/merged"), entry(6, "/etc/app"),
                ]
                let relevant = MountTable.relevantMounts(in: table, to: ["/etc/app"]).map(\.mountID)
                #expect(relevant == [1, 2, 3, 6])
            }
        }

        @Suite(
            "mounts over watched directories (real mounts)", .serialized,
            .enabled(if: geteuid() == 0, "mounts file systems (root)"))
        struct MountWatchTests {
            @Test("a mount elsewhere changes the table but not the mounts that matter to the configuration")
            func unrelatedMount() async throws {
                try await withTemporaryDirectory { directory in
                    let app = directory + "/app", elsewhere = directory + "/elsewhere"
                    try FS.makeDirectory(app)
                    try FS.makeDirectory(elsewhere)
                    defer { Mounts.unmountAll(elsewhere) }
                    let before = try Mounts.table()
                    try Mounts.tmpfs(at: elsewhere)
                    let after = try Mounts.table()
                    #expect(before != after)
                    #expect(after.contains { $0.mountPoint == elsewhere })
                    #expect(
                        MountTable.relevantMounts(in: before, to: [app])
                            == MountTable.relevantMounts(in: after, to: [app]))
                    // The same mount matters to a directory above it.
                    #expect(
                        MountTable.relevantMounts(in: before, to: [directory])
                            != MountTable.relevantMounts(in: after, to: [directory]))
                }
            }

            @Test("merge, refresh and unmerge of an overlay, as systemd-confext does on /etc, are each reported")
            func confextLikeOverlay() async throws {
                try await withTemporaryDirectory { directory in
                    // `etc` is the hierarchy; `ext/etc` an extension's files, `ext2/etc` a refreshed one.
                    let etc = directory + "/etc", app = etc + "/app", file = app + "/Environments.plist"
                    let dropIns = app + "/Environments.plist.d"
                    for path in [etc, app, directory + "/ext", directory + "/ext/etc", directory + "/ext/etc/app"] {
                        try FS.makeDirectory(path)
                    }
                    try FS.writeInPlace(file, "base")
                    try FS.writeInPlace(directory + "/ext/etc/app/Environments.plist", "extension")
                    defer { Mounts.unmountAll(etc) }
                    try await withWatcher(files: [file], directories: [dropIns]) { recorder in
                        try Mounts.overlay(lower: [directory + "/ext/etc", etc], at: etc)
                        #expect(try String(contentsOfFile: file, encoding: .utf8) == "extension")
                        #expect(await waitUntil { recorder.batches.contains(where: \.mountsChanged) })
                        #expect(recorder.changedPaths == [file, dropIns])
                        await recorder.settle()

                        // A refresh: a new overlay replaces the old one. The kernel may give it the
                        // old one's mount id and device, so that the table reads the same as before;
                        // the watches on the old overlay report its unmount (IN_UNMOUNT) then.
                        try FS.writeInPlace(directory + "/ext/etc/app/Environments.plist", "refreshed")
                        try Mounts.unmount(etc)
                        try Mounts.overlay(lower: [directory + "/ext/etc", etc], at: etc)
                        #expect(try String(contentsOfFile: file, encoding: .utf8) == "refreshed")
                        #expect(await waitUntil { recorder.batches.contains(where: \.mountsChanged) })
                        #expect(recorder.changedPaths == [file, dropIns])
                        await recorder.settle()

                        try Mounts.unmount(etc)
                        #expect(try String(contentsOfFile: file, encoding: .utf8) == "base")
                        #expect(await waitUntil { recorder.batches.contains(where: \.mountsChanged) })
                        #expect(recorder.changedPaths == [file, dropIns])
                    }
                }
            }

            @Test("after a mount over the directory, the watches follow it: a save on the new mount is reported")
            func watchesFollowTheMount() async throws {
                try await withTemporaryDirectory { directory in
                    let app = directory + "/app", file = app + "/Environments.plist"
                    try FS.makeDirectory(app)
                    try FS.writeInPlace(file, "v1")
                    defer { Mounts.unmountAll(app) }
                    try await withWatcher(files: [file]) { recorder in
                        try Mounts.tmpfs(at: app)
                        #expect(await waitUntil { recorder.batches.contains(where: \.mountsChanged) })
                        await recorder.settle()
                        // The file exists on the new mount only; the old watch is on the hidden directory.
                        try FS.writeAtomically(file, "v2")
                        #expect(await recorder.waitForChange(of: [file]))
                        #expect(recorder.batches.allSatisfy { !$0.mountsChanged })
                        await recorder.settle()
                        try Mounts.unmount(app)
                        #expect(await waitUntil { recorder.batches.contains(where: \.mountsChanged) })
                    }
                }
            }
        }

        @Suite("which configuration extension a file comes from")
        struct ConfigurationExtensionTests {
            /// systemd 257's overlay on `/etc` with the extensions `names`, topmost first.
            func table(_ names: [String]) -> [MountInfoEntry] {
                let layers =
                    ["/run/systemd/sysext/meta/etc"] + names.map { "/run/systemd/sysext/confexts/\($0)/etc" } + ["/etc"]
                let line =
                    "265 99 0:57 / /etc ro,relatime shared:85 - overlay confext ro,lowerdir=\(layers.joined(separator: ":"))"
                return MountTable.parse(line)
            }

            @Test("a directory extension that has the file names it; one without it, the image and /etc itself do not")
            func directoryExtensions() async throws {
                try await withTemporaryDirectory { search in
                    for path in ["/site", "/site/etc", "/site/etc/app", "/other", "/other/etc"] {
                        try FS.makeDirectory(search + path)
                    }
                    try FS.writeInPlace(search + "/site/etc/app/70-site.plist", "x")
                    let extensions = ConfigurationExtensions(
                        mounts: table(["other", "site"]), searchDirectories: [search])
                    #expect(extensions.merges == [.init(hierarchy: "/etc", extensions: ["other", "site"])])
                    #expect(extensions.origin(of: "/etc/app/70-site.plist") == .init(name: "site", certain: true))
                    #expect(extensions.origin(of: "/etc/app/Environments.plist") == nil)
                    #expect(extensions.origin(of: "/etcetera/app/70-site.plist") == nil)
                    #expect(extensions.origin(of: "/etc/app/70-site.plist")?.note == "(from confext site)")
                    // An image above it may hold the file too: envctl cannot tell.
                    try FS.writeInPlace(search + "/image.raw", "")
                    let withImage = ConfigurationExtensions(
                        mounts: table(["image", "site"]), searchDirectories: [search])
                    #expect(withImage.origin(of: "/etc/app/70-site.plist") == .init(name: "image", certain: false))
                    // Nothing merged: no origin.
                    #expect(
                        ConfigurationExtensions(mounts: [], searchDirectories: [search]).origin(
                            of: "/etc/app/70-site.plist") == nil)
                }
            }

            @Test(
                "a real overlay with source confext, as systemd-confext mounts it, is found in this process's table",
                .enabled(if: geteuid() == 0, "mounts file systems (root)"))
            func realOverlay() async throws {
                try await withTemporaryDirectory { directory in
                    let etc = directory + "/etc", search = directory + "/confexts"
                    let layer = search + "/site" + etc
                    var path = ""
                    for component in layer.split(separator: "/") {
                        path += "/" + component
                        if !FileManager.default.fileExists(atPath: path) { try FS.makeDirectory(path) }
                    }
                    try FS.makeDirectory(etc)
                    try FS.makeDirectory(layer + "/app")
                    try FS.makeDirectory(etc + "/app")
                    try FS.writeInPlace(layer + "/app/70-site.plist", "site")
                    try FS.writeInPlace(etc + "/app/Environments.plist", "base")
                    defer { Mounts.unmountAll(etc) }
                    guard mount("confext", etc, "overlay", UInt(MS_RDONLY), "lowerdir=\(layer):\(etc)") == 0 else {
                        throw TestFailure(description: "mount overlay: \(String(cString: strerror(errno)))")
                    }
                    var extensions = ConfigurationExtensions.current()
                    extensions.searchDirectories = [search]
                    #expect(extensions.merges.contains(.init(hierarchy: etc, extensions: ["site"])))
                    #expect(extensions.origin(of: etc + "/app/70-site.plist") == .init(name: "site", certain: true))
                    #expect(extensions.origin(of: etc + "/app/Environments.plist") == nil)
                }
            }
        }
    }
#endif
