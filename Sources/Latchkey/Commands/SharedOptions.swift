import ArgumentParser
import FoundationEssentials
import Logging

/// `--log-level`, as every command that logs takes it: a level by name, else `LATCHKEY_LOG_LEVEL`,
/// else the command's own default (`level(otherwise:)`).
struct LoggingOptions: ParsableArguments {
    @Option(
        name: .customLong("log-level"),
        help:
            "What to say on stderr: trace, debug, info, notice, warning, error or critical (default: $LATCHKEY_LOG_LEVEL, else the command's own)."
    )
    var named: LevelName?

    static var fromEnvironment: String? { ProcessInfo.processInfo.environment["LATCHKEY_LOG_LEVEL"] }

    func validate() throws {
        if self.named == nil, let named = Self.fromEnvironment, Logger.Level(rawValue: named) == nil {
            throw ValidationError("Unknown LATCHKEY_LOG_LEVEL \(named): trace, debug, info, notice, warning, error or critical.")
        }
    }

    func level(otherwise fallback: Logger.Level) -> Logger.Level {
        named?.level ?? Self.fromEnvironment.flatMap(Logger.Level.init(rawValue:)) ?? fallback
    }
}

/// A log level as the command line names it.
struct LevelName: ExpressibleByArgument {
    let level: Logger.Level

    init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument) else { return nil }
        self.level = level
    }

    static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}

/// `--keyring-timeout`, for every command that reads the keyring.
struct KeyringWait: ParsableArguments {
    @Option(
        name: .customLong("keyring-timeout"),
        help: "Seconds to wait for the keyring, its password prompt included, before keeping the sign-in in a private file instead.")
    var seconds: Double = 60

    func validate() throws {
        try Self.check("--keyring-timeout", seconds)
    }

    static func check(_ name: String, _ seconds: Double) throws {
        guard seconds.isFinite, seconds >= 1, seconds <= 3600 else {
            throw ValidationError("\(name) must be a number of seconds from 1 to 3600.")
        }
    }
}
