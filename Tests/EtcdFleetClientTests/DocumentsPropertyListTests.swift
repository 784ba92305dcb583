#if Fleet
    @testable import Environments
    import EtcdFleetClient
    import Foundation
    import Testing

    /// What `envctl-fleet documents` writes for envctl, read back by Foundation's reader (envctl's)
    /// and by the library's own binary reader.
    @Suite struct DocumentsPropertyListTests {
        static let samples: [[ConfigurationDocument]] = [
            [],
            [ConfigurationDocument(origin: "etcd:/fleet/app/Environments.plist@3", data: Data("<plist/>".utf8))],
            // Non-ASCII origins (UTF-16), empty data, data of 15 bytes (a count after the marker).
            [
                ConfigurationDocument(origin: "etcd:/flotte/café/Environments.plist@42", data: Data()),
                ConfigurationDocument(origin: "é", data: Data(repeating: 7, count: 15)),
                ConfigurationDocument(origin: "etcd:/x/Environments.plist.d/🚀.plist@1", data: Data(0..<255)),
            ],
            // Offsets of one byte, but the offset table past 255 (its offset needs two bytes).
            [
                ConfigurationDocument(
                    origin: "etcd:/fleet/app/Environments.plist@1", data: Data(repeating: 1, count: 255))
            ],
            // 256 objects: references of two bytes, though the largest is 255.
            (0..<51).map { ConfigurationDocument(origin: "o\($0)", data: Data()) },
            // More than 15 documents, more than 255 objects (two-byte references), a document of
            // 70,000 bytes (four-byte counts and offsets).
            (0..<60).map { index in
                ConfigurationDocument(
                    origin: "etcd:/fleet/app/Environments.plist.d/\(index).plist@\(index)",
                    data: Data((0..<(index == 59 ? 70_000 : index * 300)).map { UInt8(truncatingIfNeeded: $0) }))
            },
        ]

        @Test(arguments: samples)
        func foundationReadsWhatIsWritten(_ documents: [ConfigurationDocument]) throws {
            let bytes = Data(DocumentsPropertyList.encode(documents))
            var format = PropertyListSerialization.PropertyListFormat.xml
            let list = try #require(
                try PropertyListSerialization.propertyList(from: bytes, format: &format) as? [[String: Any]])
            #expect(format == .binary)
            let read = list.map { ConfigurationDocument(origin: $0["origin"] as! String, data: $0["data"] as! Data) }
            #expect(read == documents)
        }

        @Test(arguments: samples)
        func theLibrarysReaderReadsWhatIsWritten(_ documents: [ConfigurationDocument]) throws {
            let bytes = Data(DocumentsPropertyList.encode(documents))
            #expect(BinaryPropertyListBounds.isBinaryPropertyList(bytes))
            #expect(BinaryPropertyListBounds.problem(in: bytes) == nil)
            let expected = SettingValue.array(
                documents.map { .dictionary(["origin": .string($0.origin), "data": .data($0.data)]) })
            #expect(try BinaryPropertyListParser.parse(bytes) == expected)
        }
    }
#endif
