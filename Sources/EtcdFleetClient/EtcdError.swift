#if Fleet
    /// Why talking to etcd failed: what was asked, of which endpoint, what etcd (or the network)
    /// said, and what an operator can do.
    public struct EtcdError: Error, Sendable, CustomStringConvertible {
        /// What failed, for example `range /fleet/app/` or `watch /fleet/app/ from revision 42`.
        package var operation: String
        /// The endpoint that was asked, or `nil` when none answered.
        package var endpoint: String?
        /// What went wrong.
        package var message: String
        /// etcd's gRPC status code, when etcd answered with an error.
        package var code: Int?
        /// What to do about it, naming tools the operator has.
        package var hint: String?
        /// Whether the endpoint could not answer (unreachable, no leader), so that another
        /// endpoint may.
        package internal(set) var endpointUnavailable = false
        /// Whether the endpoint answered with more than the caller would read, so that another
        /// endpoint would not help.
        package internal(set) var responseTooLarge = false

        /// An error about `operation`.
        package init(operation: String, endpoint: String? = nil, message: String, code: Int? = nil, hint: String? = nil)
        {
            self.operation = operation
            self.endpoint = endpoint
            self.message = message
            self.code = code
            self.hint = hint
        }

        /// Whether etcd refused because the revision asked for was compacted away (code 11).
        package var isCompacted: Bool { code == 11 || message.contains("required revision has been compacted") }

        /// Whether etcd refused because the user's roles do not grant the key (code 7).
        package var isPermissionDenied: Bool { code == 7 || message.contains("permission denied") }

        /// Whether the authentication token is missing, invalid or expired (code 16), so that
        /// authenticating again may help.
        var isAuthenticationFailure: Bool {
            code == 16 || message.contains("invalid auth token") || message.contains("user name is empty")
        }

        /// One line: operation, endpoint, message, hint.
        public var description: String {
            var text = "etcd: \(operation)"
            if let endpoint { text += " on \(endpoint)" }
            text += " failed: \(message)"
            if let hint { text += " (\(hint))" }
            return text
        }
    }
#endif
