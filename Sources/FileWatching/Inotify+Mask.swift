#if os(Linux)
    import Glibc

    extension Inotify {
        /// The bits of an inotify event mask: what to watch for, and what happened.
        ///
        /// The same type is used for the mask given to ``Inotify/addWatch(path:mask:)`` and
        /// for ``Inotify/Event/mask``. Some bits only make sense in one of the two places, as
        /// noted on each.
        package struct Mask: OptionSet, Sendable, Hashable, CustomStringConvertible {
            /// The raw `uint32_t` mask value.
            package var rawValue: UInt32

            /// Creates a mask from a raw `uint32_t` value.
            package init(rawValue: UInt32) {
                self.rawValue = rawValue
            }

            /// A file was read (`IN_ACCESS`).
            package static let accessed = Mask(rawValue: UInt32(IN_ACCESS))
            /// A file was written (`IN_MODIFY`).
            package static let modified = Mask(rawValue: UInt32(IN_MODIFY))
            /// Metadata changed: permissions, timestamps, link count, ownership (`IN_ATTRIB`).
            package static let attributesChanged = Mask(rawValue: UInt32(IN_ATTRIB))
            /// A file opened for writing was closed (`IN_CLOSE_WRITE`).
            package static let closedAfterWriting = Mask(rawValue: UInt32(IN_CLOSE_WRITE))
            /// A file not opened for writing was closed (`IN_CLOSE_NOWRITE`).
            package static let closedWithoutWriting = Mask(rawValue: UInt32(IN_CLOSE_NOWRITE))
            /// A file or directory was opened (`IN_OPEN`).
            package static let opened = Mask(rawValue: UInt32(IN_OPEN))
            /// An entry was renamed out of the watched directory (`IN_MOVED_FROM`).
            package static let movedFrom = Mask(rawValue: UInt32(IN_MOVED_FROM))
            /// An entry was renamed into the watched directory (`IN_MOVED_TO`).
            package static let movedTo = Mask(rawValue: UInt32(IN_MOVED_TO))
            /// An entry was created in the watched directory (`IN_CREATE`).
            package static let created = Mask(rawValue: UInt32(IN_CREATE))
            /// An entry was deleted from the watched directory (`IN_DELETE`).
            package static let deleted = Mask(rawValue: UInt32(IN_DELETE))
            /// The watched file or directory itself was deleted (`IN_DELETE_SELF`).
            package static let deletedSelf = Mask(rawValue: UInt32(IN_DELETE_SELF))
            /// The watched file or directory itself was moved (`IN_MOVE_SELF`).
            package static let movedSelf = Mask(rawValue: UInt32(IN_MOVE_SELF))

            /// Event only: the file system holding the watched object was unmounted (`IN_UNMOUNT`).
            package static let unmounted = Mask(rawValue: UInt32(IN_UNMOUNT))
            /// Event only: the kernel's event queue overflowed and events were lost (`IN_Q_OVERFLOW`).
            ///
            /// Such an event has watch descriptor -1.
            package static let queueOverflowed = Mask(rawValue: UInt32(IN_Q_OVERFLOW))
            /// Event only: the watch was removed, explicitly or because the object went away
            /// (`IN_IGNORED`). No more events arrive for its watch descriptor.
            package static let ignored = Mask(rawValue: UInt32(IN_IGNORED))
            /// Event only: the subject of the event is a directory (`IN_ISDIR`).
            package static let isDirectory = Mask(rawValue: UInt32(IN_ISDIR))

            /// Watch only: fail with `ENOTDIR` unless the path is a directory (`IN_ONLYDIR`).
            package static let onlyDirectory = Mask(rawValue: UInt32(IN_ONLYDIR))
            /// Watch only: do not follow the path if it is a symbolic link (`IN_DONT_FOLLOW`).
            package static let dontFollow = Mask(rawValue: UInt32(IN_DONT_FOLLOW))
            /// Watch only: no events for children after they were unlinked (`IN_EXCL_UNLINK`).
            package static let excludeUnlinked = Mask(rawValue: UInt32(IN_EXCL_UNLINK))
            /// Watch only: add to the mask of an existing watch instead of replacing it
            /// (`IN_MASK_ADD`).
            package static let addToExistingMask = Mask(rawValue: UInt32(IN_MASK_ADD))
            /// Watch only: remove the watch after its first event (`IN_ONESHOT`).
            package static let oneShot = Mask(rawValue: UInt32(IN_ONESHOT))

            /// Either kind of close (`IN_CLOSE`).
            package static let closed: Mask = [.closedAfterWriting, .closedWithoutWriting]
            /// Either direction of a rename (`IN_MOVE`).
            package static let moved: Mask = [.movedFrom, .movedTo]
            /// Every event kind that can be watched for (`IN_ALL_EVENTS`).
            package static let allEvents: Mask = [
                .accessed, .modified, .attributesChanged, .closed, .opened, .moved, .created, .deleted,
                .deletedSelf, .movedSelf,
            ]

            private static let names: [(Mask, String)] = [
                (.accessed, "accessed"), (.modified, "modified"),
                (.attributesChanged, "attributesChanged"), (.closedAfterWriting, "closedAfterWriting"),
                (.closedWithoutWriting, "closedWithoutWriting"), (.opened, "opened"),
                (.movedFrom, "movedFrom"), (.movedTo, "movedTo"), (.created, "created"),
                (.deleted, "deleted"), (.deletedSelf, "deletedSelf"), (.movedSelf, "movedSelf"),
                (.unmounted, "unmounted"), (.queueOverflowed, "queueOverflowed"),
                (.ignored, "ignored"), (.isDirectory, "isDirectory"),
                (.onlyDirectory, "onlyDirectory"), (.dontFollow, "dontFollow"),
                (.excludeUnlinked, "excludeUnlinked"), (.addToExistingMask, "addToExistingMask"),
                (.oneShot, "oneShot"),
            ]

            /// The names of the bits that are set, for logs, for example `[created, isDirectory]`.
            package var description: String {
                var remaining = self
                var parts: [String] = []
                for (bit, name) in Self.names where remaining.contains(bit) {
                    parts.append(name)
                    remaining.remove(bit)
                }
                if !remaining.isEmpty {
                    parts.append("0x" + String(remaining.rawValue, radix: 16))
                }
                return "[" + parts.joined(separator: ", ") + "]"
            }
        }
    }
#endif
