#if Fleet
    import EtcdFleetClient
    import Foundation
    import Testing

    /// One digit after the point without `String(format:)`.
    @Suite struct FleetNumbersTests {
        @Test func oneDecimalIsWhatPrintfPrints() {
            let values = [
                0, 0.04, 0.05, 0.15, 0.25, 0.35, 0.96, 1, 1.25, 1.75, 2.3, 2.349, 12.5, 59.95, 99.99, 1e12 + 0.5,
            ]
            for value in values + values.map(-) {
                #expect(FleetNumbers.oneDecimal(value) == String(format: "%.1f", value), "\(value)")
            }
            // Sizes in KiB and MiB, and durations in milliseconds, as the messages print them.
            for count in stride(from: 1, to: 300_000, by: 13) {
                let number = Double(count)
                let values: [Double] = [number / 1024, number / 1000, number / 1_048_576]
                for value in values {
                    let printed = String(format: "%.1f", value)
                    #expect(FleetNumbers.oneDecimal(value) == printed, "\(value)")
                }
            }
            #expect(FleetNumbers.oneDecimal(.infinity) == "inf")
        }
    }
#endif
