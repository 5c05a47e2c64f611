import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a variable such as `HOME` or `LATCHKEY_GITHUB_CLIENT_ID` is read: this process's own
/// environment, one variable at a time where it lies, or a given set (a test's, a child's).
///
/// `ProcessInfo.processInfo.environment` builds a dictionary of every variable at each call: in a
/// desktop session's environment ~0.5 million instructions of splitting, validating and hashing.
/// The window's launch asked for it eight times before GTK started (docs/performance.md).
public enum EnvironmentVariables: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// This process's environment, as it is when a variable is read.
    case process
    case given([String: String])

    public init(dictionaryLiteral elements: (String, String)...) {
        self = .given(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The variable's value; nil when it is unset.
    public subscript(name: String) -> String? {
        switch self {
        case .process: getenv(name).map { String(cString: $0) }
        case .given(let variables): variables[name]
        }
    }

    /// The variable's value; nil when it is unset or empty.
    public func nonEmpty(_ name: String) -> String? {
        self[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// An XDG base directory: `$<name>` (`XDG_STATE_HOME`, `XDG_CONFIG_HOME` …) when set, else
    /// `fallback` (`.local/state`, `.config` …) under `$HOME`, or under the account's home folder
    /// when that is unset or empty.
    public func baseDirectory(_ name: String, else fallback: String) -> URL {
        nonEmpty(name).map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: nonEmpty("HOME") ?? PathText.home).appendingPathComponent(fallback)
    }
}
