import ArgumentParser
import Foundation
import DesktopOAuth
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

struct LatchkeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Sign in to an OAuth provider from the Linux desktop, fetch your profile, open it in your browser.",
        discussion: """
            Without --provider or --provider-file, Latchkey shows the provider last chosen in its window; \
            at first its offline sandbox provider (latchkey-sandbox): user ada, password engine. \
            Presets: \(catalog.presetNames.joined(separator: ", ")). \
            Credentials come from ~/.config/latchkey/<provider>.json or LATCHKEY_<PROVIDER>_CLIENT_ID and _CLIENT_SECRET.
            """,
        version: OAuthCoreInfo.version)

    /// Read once per run: for the help text (which ArgumentParser builds at every
    /// parse) and for the provider chosen.
    static let catalog = LatchkeyFiles.catalog()

    @Option(help: "A provider preset, e.g. linkedin or github.")
    var provider: String?

    @Option(name: .customLong("provider-file"), help: "A provider described in a JSON file of the preset shape.")
    var providerFile: String?

    @Flag(name: .customLong("sign-out"), help: "Forget the stored sign-in for the provider (revoking it where possible), then exit.")
    var signOut = false

    @Option(name: .customLong("network-timeout"), help: "Seconds to wait for the provider before giving up.")
    var networkTimeout: Double = 30

    @Option(
        name: .customLong("keyring-timeout"),
        help: "Seconds to wait for the keyring, its password prompt included, before keeping the sign-in in a private file instead.")
    var keyringTimeout: Double = 60

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = ProcessInfo.processInfo.environment["LATCHKEY_LOG_LEVEL"] ?? "info"

    func validate() throws {
        if provider != nil && providerFile != nil {
            throw ValidationError("Name a provider with --provider or --provider-file, not both.")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level \(logLevel).") }
        guard networkTimeout.isFinite, networkTimeout >= 1, networkTimeout <= 3600 else {
            throw ValidationError("--network-timeout must be a number of seconds from 1 to 3600.")
        }
        guard keyringTimeout.isFinite, keyringTimeout >= 1, keyringTimeout <= 3600 else {
            throw ValidationError("--keyring-timeout must be a number of seconds from 1 to 3600.")
        }
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        if !signOut, environment["DISPLAY"]?.isEmpty != false, environment["WAYLAND_DISPLAY"]?.isEmpty != false {
            throw LaunchError(
                "Latchkey is a desktop app and needs a graphical session: neither DISPLAY nor WAYLAND_DISPLAY is set.")
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: level) }
        let logger = Logger(label: "Latchkey")

        let catalog = Self.catalog
        let providers: Providers
        let providerID: String
        /// Named on the command line (or to sign out of), it must be usable: said now rather than in the window.
        var named: (ProviderConfiguration, ready: @Sendable () throws -> Void)?
        // Client secrets typed into the set-up dialog: the keyring when one runs, else a 0600 file.
        let secrets = FallbackClientSecretStore(
            preferred: SecretServiceClientSecretStore(timeout: keyringTimeout),
            fallback: FileClientSecretStore(directory: LatchkeyFiles.clientSecretDirectory),
            preferredIsAvailable: { await SecretServiceTokenStore.isServiceRunning() })
        do {
            providers = try Providers(
                catalog: catalog, secrets: secrets, file: providerFile.map { URL(fileURLWithPath: $0) }, logger: logger)
            // The command line's provider, else the one last chosen in the window (if it is still there), else the sandbox.
            let remembered = LatchkeyFiles.chosenProvider().flatMap { id in providers.exists(id) ? id : nil }
            providerID = providers.file?.id ?? provider ?? remembered ?? Providers.sandboxID
            if signOut, providerFile == nil, let sentence = Self.signOutInRunningInstance(provider: providerID) {
                print(sentence)
                return
            }
            if signOut {
                named = try Self.wait { () async -> Result<(ProviderConfiguration, ready: @Sendable () throws -> Void), any Error> in
                    do { return .success(try await providers.configuration(for: providerID)) } catch { return .failure(error) }
                }.get()
            } else if provider != nil {
                // A provider that only lacks its credentials opens in the window, which offers to set it up.
                _ = try providers.draft(for: providerID)
            }
        } catch let error as OAuthError {
            if case .unknownProvider = error {
                throw LaunchError("\(error) Presets: \(catalog.presetNames.joined(separator: ", ")).")
            }
            throw LaunchError(error.description)
        }
        defer { providers.stop() }

        // The keyring when one runs and answers, else the 0600 file; asked at each use,
        // since a keyring can start (or lock) while Latchkey runs.
        let store = FallbackTokenStore(
            preferred: SecretServiceTokenStore(timeout: keyringTimeout),
            fallback: FileTokenStore(directory: LatchkeyFiles.stateDirectory),
            preferredIsAvailable: { await SecretServiceTokenStore.isServiceRunning() })

        if signOut, let (configuration, ready) = named {
            try ready()
            let session = AuthSession(configuration: configuration, store: store)
            let warning = Self.wait { await session.signOut() }
            print(warning ?? "Signed out of \(configuration.displayName).")
            return
        }

        // ArgumentParser runs a synchronous command on the main thread, which becomes GTK's.
        // The app is held for the whole run: GTK's callbacks reach it through weak references.
        let status = MainActor.assumeIsolated {
            let app = LatchkeyApp(
                providers: providers, providerID: providerID, store: store, networkTimeout: networkTimeout, logger: logger)
            return withExtendedLifetime(app) { app.run() }
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// `--sign-out` while Latchkey runs with the same provider: that instance
    /// signs out (its window shows it, and no second process holds the tokens).
    /// Nil when no instance of that provider runs; the sign-out is then done here.
    static func signOutInRunningInstance(provider: String?) -> String? {
        guard let provider, let running = RunningApplication.find(id: LatchkeyApp.id),
            running.state(of: LatchkeyApp.signOutAction) == provider
        else { return nil }
        // The id goes with the activation: if the window moved to another provider since the state was read,
        // the running instance still signs out this one.
        guard running.activate(LatchkeyApp.signOutAction, parameter: provider) else { return nil }
        return "Latchkey is running with this provider: it signs out there now (its window says when it is done)."
    }

    /// Runs async work from this synchronous command (used before GTK starts, or instead of it).
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Task {
            result.value = await work()
            done.signal()
        }
        done.wait()
        return result.value!
    }
}

/// Something stopped the app from starting: printed as "Error: …", without the
/// usage text, because the command line itself was fine.
struct LaunchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Written by one task before it signals the semaphore `wait` blocks on, read after: never at once.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
