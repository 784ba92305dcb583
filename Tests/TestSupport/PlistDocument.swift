/// An XML property list whose root dictionary holds `body` (`<key>…</key>` and their values,
/// as text): the header and the root written once for every fixture.
package func plistDocument(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0">
    <dict>
    \(body)
    </dict>
    </plist>
    """
}
