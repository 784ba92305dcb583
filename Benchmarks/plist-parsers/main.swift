// Cold parses of generated Environments.plist files of N keys, side by side in one process:
// the package's XMLPropertyListParser against Foundation's PropertyListSerialization followed by
// SettingValue(propertyList:leaf:) (the path files took before our parser was the only one).
// Built and run by Benchmarks/plist-parsers.sh; prints the median of several runs per size.
import Foundation

func document(keys: Int) -> Data {
    var xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        <key>Common</key>
        <dict>

        """
    // A realistic mix: nested sections of strings, integers, booleans, reals and arrays.
    let perSection = 50
    for section in 0..<max(1, keys / perSection) {
        xml += "<key>Section\(section)</key>\n<dict>\n"
        for index in 0..<perSection {
            switch index % 5 {
            case 0: xml += "<key>URL\(index)</key><string>https://api-\(section).example.com/v\(index)</string>\n"
            case 1: xml += "<key>Port\(index)</key><integer>\(8000 + index)</integer>\n"
            case 2: xml += "<key>Enabled\(index)</key><true/>\n"
            case 3: xml += "<key>Ratio\(index)</key><real>0.\(index)5</real>\n"
            default:
                xml += "<key>Hosts\(index)</key><array><string>a.example</string><string>b.example</string></array>\n"
            }
        }
        xml += "</dict>\n"
    }
    xml += "</dict>\n<key>Debug</key>\n<dict/>\n</dict>\n</plist>\n"
    return Data(xml.utf8)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func measure(_ body: () -> Void) -> Double {
    let start = ContinuousClock.now
    body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
}

let runs = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 7
print("keys     bytes      ours ms  Foundation ms  Foundation/ours")
for keys in [10_000, 100_000] {
    let data = document(keys: keys)
    var ours: [Double] = []
    var foundation: [Double] = []
    for _ in 0..<runs {
        // Alternated, so that both see the same machine.
        ours.append(
            measure {
                guard case .dictionary? = XMLPropertyListParser.parse(data) else { fatalError("ours refused it") }
            })
        foundation.append(
            measure {
                let object = try! PropertyListSerialization.propertyList(from: data, options: [], format: nil)
                guard case .dictionary? = SettingValue(propertyList: object, leaf: number) else {
                    fatalError("not a dictionary")
                }
            })
    }
    let (o, f) = (median(ours), median(foundation))
    print(
        String(
            format: "%-8d %-10d %8.1f  %13.1f  %15.2f×", keys, data.count, o, f, f / o))
}

/// Foundation's `NSNumber`s as the package's tests read them (`SettingValue(foundationObject:)`
/// in TestSupport): a real or an integer by its type; every other leaf as it is.
func number(_ leaf: Any) -> SettingValue?? {
    guard type(of: leaf) != Bool.self, let number = leaf as? NSNumber else { return nil }
    let kind = String(cString: number.objCType)
    return .some(kind == "d" || kind == "f" ? .real(number.doubleValue) : .integer(number.intValue))
}
