import Environments

extension Environment {
    /// The string values of `keys`, in order; nil where a key is unset or holds no string.
    /// Several keys in one expectation.
    func strings(_ keys: [String]) -> [String?] {
        keys.map { try? require($0, as: String.self) }
    }
}
