import Logging

extension JournalLogHandler {
    /// The fields this handler writes itself; metadata keys that sanitize to one of them
    /// get ``metadataCollisionPrefix``.
    package static let standardFieldNames: Set<String> = [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
        "LOGGER_LABEL", "LOGGER_LEVEL", "LOGGER_SOURCE",
    ]

    /// The prefix for metadata keys that collide with ``standardFieldNames``.
    package static let metadataCollisionPrefix = "META_"

    /// The journal field name for a metadata key: sanitized, and prefixed when it collides
    /// with a standard field.
    ///
    /// - Parameter key: A swift-log metadata key.
    /// - Returns: A valid journal field name that is not one of ``standardFieldNames``.
    package static func fieldName(forMetadataKey key: String) -> String {
        let name = JournalFieldName.sanitize(key)
        guard standardFieldNames.contains(name) else { return name }
        return JournalFieldName.sanitize(metadataCollisionPrefix + name)
    }

    /// The structured entry for a log event.
    func journalEntry(for event: LogEvent, metadata: Logger.Metadata) -> JournalEntry {
        var entry = JournalEntry()
        entry.fields.reserveCapacity(9 + metadata.count)
        entry.append("MESSAGE", event.message.description)
        entry.append("PRIORITY", String(SyslogPriority(event.level).rawValue))
        entry.append("SYSLOG_IDENTIFIER", identifier)
        entry.append("CODE_FILE", event.file)
        entry.append("CODE_LINE", String(event.line))
        entry.append("CODE_FUNC", event.function)
        entry.append("LOGGER_LABEL", label)
        entry.append("LOGGER_LEVEL", event.level.rawValue)
        entry.append("LOGGER_SOURCE", event.source)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            let name = Self.fieldName(forMetadataKey: key)
            if case .array(let elements) = value {
                for element in elements {
                    entry.append(name, element.description)
                }
            } else {
                entry.append(name, value.description)
            }
        }
        return entry
    }
}
