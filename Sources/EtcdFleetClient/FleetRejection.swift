#if Fleet
    package import Environments

    /// Why a host rejected a fleet change, in the only form that may leave the host: where (file,
    /// line, key) and what kind of error (its code), never a message.
    ///
    /// A host's status key (``FleetHostStatus``) is read by every host with read access to the
    /// fleet, while an error's message may quote a value from this host's own files, variables or
    /// credentials (a declaration's bounds error quotes the value; an application's validation
    /// message says what it likes). So the status holds this type, which can only be made from an
    /// `EnvironmentError`'s code and location or as ``abandoned``: no initializer takes text, and
    /// no path can put a message, or a value in it, into the fleet. The host's journal has the
    /// whole error.
    package struct FleetRejection: Sendable, Hashable, CustomStringConvertible {
        /// What kind of error: an error's code, or a reload abandoned because the service stopped.
        private enum Kind: Sendable, Hashable {
            case error(EnvironmentError.Code)
            case abandoned
        }

        private let kind: Kind
        /// The file the error names, if any.
        package let file: String?
        /// The line in ``file``, where known.
        package let line: Int?
        /// The key the error names, if any.
        package let key: String?

        /// The rejection `error` stands for: its code, file, line and key; never its message or hint.
        package init(_ error: EnvironmentError) {
            kind = .error(error.code)
            file = error.file
            line = error.line
            key = error.key
        }

        private init(abandoned: Void) {
            kind = .abandoned
            file = nil
            line = nil
            key = nil
        }

        /// A reload abandoned because the service was stopping.
        package static let abandoned = FleetRejection(abandoned: ())

        /// `FILE:LINE: 'KEY': type mismatch (the host's journal has the whole error: journalctl -u UNIT)`.
        package var description: String {
            let what: String
            switch kind {
            case .abandoned:
                return "abandoned: the service was stopping"
            case .error(let code):
                // `typeMismatch` → "type mismatch".
                what = code.description.reduce(into: "") { text, character in
                    if character.isUppercase { text += " " + character.lowercased() } else { text.append(character) }
                }
            }
            let location = [file.map { file in line.map { "\(file):\($0)" } ?? file }, key.map { "'\($0)'" }]
                .compactMap { $0 }.joined(separator: ": ")
            return (location.isEmpty ? what : "\(location): \(what)")
                + " (the host's journal has the whole error: journalctl -u UNIT)"
        }
    }
#endif
