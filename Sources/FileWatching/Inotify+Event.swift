#if os(Linux)
    import Glibc

    extension Inotify {
        /// A watch, as returned by ``Inotify/addWatch(path:mask:)`` and carried by every event.
        package struct WatchDescriptor: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            /// The kernel's watch descriptor number.
            package var rawValue: Int32

            /// Wraps a kernel watch descriptor number.
            package init(rawValue: Int32) {
                self.rawValue = rawValue
            }

            /// The watch descriptor of events that belong to no watch, such as a queue overflow.
            package static let none = WatchDescriptor(rawValue: -1)

            /// The number, for logs.
            package var description: String { String(rawValue) }
        }

        /// One `struct inotify_event` record read from an inotify file descriptor.
        package struct Event: Sendable, Hashable, CustomStringConvertible {
            /// The size of the fixed part of a record (`sizeof(struct inotify_event)`).
            package static let headerSize = MemoryLayout<inotify_event>.size

            /// The watch the event belongs to; ``WatchDescriptor/none`` for a queue overflow.
            package var watchDescriptor: WatchDescriptor
            /// What happened.
            package var mask: Mask
            /// Pairs the ``Mask/movedFrom`` and ``Mask/movedTo`` halves of one rename; 0 otherwise.
            package var cookie: UInt32
            /// The name of the entry in the watched directory the event is about, or `nil` when it
            /// is about the watched object itself.
            package var name: String?

            /// Creates an event from its parts.
            package init(watchDescriptor: WatchDescriptor, mask: Mask, cookie: UInt32 = 0, name: String? = nil) {
                self.watchDescriptor = watchDescriptor
                self.mask = mask
                self.cookie = cookie
                self.name = name
            }

            /// The event, for logs, for example `wd=1 [created] "a.plist"`.
            package var description: String {
                var text = "wd=\(watchDescriptor) \(mask)"
                if cookie != 0 { text += " cookie=\(cookie)" }
                if let name { text += " \"\(name)\"" }
                return text
            }

            /// Decodes the `struct inotify_event` records in `bytes`, as returned by one `read(2)`
            /// of an inotify file descriptor.
            ///
            /// Each record is a 16-byte header (watch descriptor, mask, cookie, name length)
            /// followed by `len` bytes holding a NUL-terminated, NUL-padded name. Trailing bytes that
            /// do not form a complete record are ignored; the kernel never returns partial records.
            ///
            /// - Parameter bytes: The bytes read from the file descriptor.
            /// - Returns: The events, in order.
            package static func decode(_ bytes: UnsafeRawBufferPointer) -> [Event] {
                var events: [Event] = []
                var offset = 0
                while bytes.count - offset >= headerSize {
                    let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameStart = offset + headerSize
                    guard bytes.count - nameStart >= length else { break }
                    var name: String?
                    if length > 0 {
                        let field = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<nameStart + length])
                        let end = field.firstIndex(of: 0) ?? field.endIndex
                        if end > field.startIndex {
                            name = String(decoding: field[field.startIndex..<end], as: UTF8.self)
                        }
                    }
                    events.append(
                        Event(
                            watchDescriptor: WatchDescriptor(rawValue: wd), mask: Mask(rawValue: mask),
                            cookie: cookie, name: name))
                    offset = nameStart + length
                }
                return events
            }

            /// Decodes the `struct inotify_event` records in `bytes`.
            ///
            /// Like the `UnsafeRawBufferPointer` overload; convenient in tests.
            ///
            /// - Parameter bytes: The bytes read from the file descriptor.
            /// - Returns: The events, in order.
            package static func decode(_ bytes: [UInt8]) -> [Event] {
                bytes.withUnsafeBytes { decode($0) }
            }
        }
    }
#endif
