import ArgumentParser
import FoundationEssentials
import Logging
import OAuthCore

/// `--log-level`, as every command that logs takes it: a level by name, else `LATCHKEY_LOG_LEVEL`,
/// else the command's own default (`level(otherwise:)`).
public struct LoggingOptions: ParsableArguments {
    public init() {}

    @Option(
        name: .customLong("log-level"),
        help:
            "What to say on stderr: trace, debug, info, notice, warning, error or critical (default: $LATCHKEY_LOG_LEVEL, else the command's own)."
    )
    public var named: LevelName?

    static var fromEnvironment: String? { EnvironmentVariables.process["LATCHKEY_LOG_LEVEL"] }

    public func validate() throws {
        if self.named == nil, let named = Self.fromEnvironment, Logger.Level(rawValue: named) == nil {
            throw ValidationError("Unknown LATCHKEY_LOG_LEVEL \(named): trace, debug, info, notice, warning, error or critical.")
        }
    }

    public func level(otherwise fallback: Logger.Level) -> Logger.Level {
        named?.level ?? Self.environmentLevel ?? fallback
    }

    /// `$LATCHKEY_LOG_LEVEL`, when it names a level. (A command line with no `--log-level`, read
    /// without the parser, as `latchkey` alone is: see Sources/Latchkey/main.swift.)
    public static var environmentLevel: Logger.Level? { fromEnvironment.flatMap(Logger.Level.init(rawValue:)) }

    /// Whether `$LATCHKEY_LOG_LEVEL` is unset or names a level: else `validate` refuses the command line.
    public static var environmentIsValid: Bool { fromEnvironment == nil || environmentLevel != nil }
}

/// A log level as the command line names it.
public struct LevelName: ExpressibleByArgument {
    public let level: Logger.Level

    public init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument) else { return nil }
        self.level = level
    }

    public static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}

/// `--keyring-timeout`, for every command that reads the keyring.
public struct KeyringWait: ParsableArguments {
    public init() {}

    @Option(
        name: .customLong("keyring-timeout"),
        help: "Seconds to wait for the keyring, its password prompt included, before keeping the sign-in in a private file instead.")
    public var seconds: Double = Self.defaultSeconds

    public static let defaultSeconds: Double = 60

    public func validate() throws {
        try Self.check("--keyring-timeout", seconds)
    }

    public static func check(_ name: String, _ seconds: Double) throws {
        guard seconds.isFinite, seconds >= 1, seconds <= 3600 else {
            throw ValidationError("\(name) must be a number of seconds from 1 to 3600.")
        }
    }
}

/// How long the window and `latchkey token` wait for the provider and for the keyring.
public struct Waits: ParsableArguments {
    @Option(name: .customLong("network-timeout"), help: "Seconds to wait for the provider before giving up.")
    public var networkTimeout: Double = Self.defaultNetworkTimeout

    public static let defaultNetworkTimeout: Double = 30

    @OptionGroup public var keyring: KeyringWait

    public init() {}

    public var keyringTimeout: Double { keyring.seconds }

    /// These waits as a command line gives them: for a program started with the same (the agent, its sign-ins).
    public var arguments: [String] {
        ["--network-timeout", "\(networkTimeout)", "--keyring-timeout", "\(keyringTimeout)"]
    }

    public func validate() throws {
        try KeyringWait.check("--network-timeout", networkTimeout)
    }
}

/// Something stopped the app from starting: printed as "Error: …", without the
/// usage text, because the command line itself was fine.
public struct LaunchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
