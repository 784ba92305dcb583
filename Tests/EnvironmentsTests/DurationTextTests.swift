import Environments
import Testing

/// Durations are written in one form wherever they are shown (explain's defaults and bounds,
/// errors): the form configuration files use, which reads back as the same duration.
@Suite("durations as text")
struct DurationTextTests {
    @Test(
        "whole units from the largest down",
        arguments: [
            (Duration.seconds(5), "5s"), (.milliseconds(1), "1ms"), (.seconds(600), "10min"),
            (.seconds(5400), "1h 30min"), (.zero, "0s"), (.nanoseconds(1500), "1us 500ns"),
            (.seconds(-2), "-2s"), (.seconds(90_061), "1d 1h 1min 1s"),
        ])
    func examples(duration: Duration, text: String) {
        #expect(DurationParser.text(duration) == text)
    }

    @Test("every duration reads back as itself")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let duration = Duration.nanoseconds(Int64.random(in: 0...(1 << 52), using: &generator))
            #expect(DurationParser.parse(DurationParser.text(duration)) == duration)
        }
    }
}
