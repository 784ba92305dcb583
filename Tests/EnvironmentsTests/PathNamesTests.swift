import Foundation
import Testing

@testable import Environments

/// The path helpers that replace `NSString`'s give what `NSString` gives, for the paths the
/// package splits and joins, and for the odd ones (empty, root, trailing and doubled slashes).
@Suite struct PathNamesTests {
    static let paths = [
        "/a", "/a/b", "a/b", "/etc/app/Environments.plist", "/etc/app/Environments.plist.d/10-a.plist",
    ]

    /// Odd paths, with what NSString gives where it gives anything (on Linux it traps on some).
    @Test(arguments: [
        ("/", "/", "/"), ("a", "a", ""), ("a/", "a", ""), ("/a/", "a", "/"), ("/a/b/", "b", "/a"), ("a/b//", "b", "a"),
        ("/a//b", "b", "/a"),
    ])
    func oddPaths(_ path: String, last: String, directory: String) {
        #expect(PathNames.lastComponent(of: path) == last, "\(path)")
        #expect(PathNames.directory(of: path) == directory, "\(path)")
    }

    @Test(arguments: paths)
    func lastComponentAndDirectoryAreNSString(_ path: String) {
        #expect(PathNames.lastComponent(of: path) == (path as NSString).lastPathComponent, "\(path)")
        #expect(PathNames.directory(of: path) == (path as NSString).deletingLastPathComponent, "\(path)")
    }

    /// `//` is the root, whose last component and directory are `/`, as for `/` (NSString on
    /// Linux gives the empty string for both).
    @Test func doubledRootIsTheRoot() {
        // And the empty path has neither (NSString on Linux traps on it: not compared).
        #expect(PathNames.lastComponent(of: "") == "")
        #expect(PathNames.directory(of: "") == "")
        #expect(PathNames.lastComponent(of: "//") == "/")
        #expect(PathNames.directory(of: "//") == "/")
    }

    @Test(arguments: ["", "/", "a", "a/", "/a", "/a/", "/etc/app"], ["b", "b.plist", ".hidden"])
    func joinIsNSString(_ directory: String, _ name: String) {
        #expect(PathNames.join(directory, name) == (directory as NSString).appendingPathComponent(name))
    }
}
