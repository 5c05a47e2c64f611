import FoundationEssentials
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore

/// The providers this run can show, and how each becomes a configuration: the
/// presets and the person's own files (from the catalog), the file given with
/// `--provider-file`, and the offline sandbox, started the first time it is
/// chosen and stopped when Latchkey ends. Client secrets typed into the set-up
/// dialog come from `secrets` (the keyring, or a private file).
final class Providers: @unchecked Sendable {
    /// Where sign-ins are kept, and how providers are reached: every provider made here shares them.
    let services: Services
    var catalog: ProviderCatalog { services.catalog }
    var secrets: any ClientSecretStore { services.secrets }
    var store: any TokenStore { services.tokens }
    var network: Network { services.network }
    /// `--provider-file`: its id, and where it is.
    let file: (id: String, url: URL)?
    private let logger: Logger
    // Guarded by `lock`: the sandbox child, once started.
    private let lock = Lock()
    private var sandbox: SandboxChild?

    init(services: Services, file: URL?) throws {
        self.services = services
        logger = services.network.logger
        // The file is read for its id and name; its credentials may still be missing (the set-up dialog gives them).
        self.file = try file.map { (try services.catalog.readableID(file: $0), $0) }
    }

    /// Whether there is a provider `id` to show, found without listing them all.
    func exists(_ id: String) -> Bool {
        id == file?.id || catalog.contains(id)
    }

    /// The name `id` shows, read from its own files alone, as the list of providers shows it: what the
    /// first frame says before the provider is ready (a draft cannot be made of the sandbox, whose
    /// endpoints its child gives, nor of a provider whose discovery document is not fetched yet).
    func displayName(of id: String) -> String {
        if let file, file.id == id { return (try? catalog.displayName(file: file.url)) ?? id }
        return (try? catalog.displayName(named: id)) ?? id
    }

    /// Ids this run owns besides the catalog's: the sandbox's, and the one of `--provider-file`.
    /// No provider added in the window takes one, nor clears what is stored under it.
    var reservedIDs: Set<String> { Set(SandboxProviders.ids + (file.map { [$0.id] } ?? [])) }

    /// The zero-configuration service over this run's catalog, secrets and store.
    var zeroConfiguration: ZeroConfiguration {
        services.zeroConfiguration(reservedIDs: reservedIDs)
    }

    /// Setting up and adding providers, over this run's files and stores.
    var setUp: ProviderSetUp { ProviderSetUp(zeroConfiguration: zeroConfiguration) }

    /// Whether `id` is the provider given with `--provider-file`: no settings are written beside it.
    func isGivenFile(_ id: String) -> Bool { file?.id == id }

    /// Where the person chose to sign in with `id`, kept in their own file for it; a provider given
    /// with --provider-file is not in the list of a later plain launch, so no file is written for it.
    func remember(_ userAgent: ProviderConfiguration.UserAgentKind, for id: String) {
        guard !isGivenFile(id) else { return }
        do { try catalog.updateUserFile(for: id) { $0.userAgent = .value(userAgent) } } catch {
            logger.warning("The choice is kept for this run only", metadata: ["error": "\(error)"])
        }
    }

    /// What the window lists: the sandbox first, then every other provider by name. Read once the
    /// window is up (every preset and file of the person's is opened for its name: not something the
    /// launch should wait for) and again after a provider is added, off GTK's thread; the window's
    /// controller keeps it.
    func readEntries() -> [ProviderEntry] {
        var list = catalog.availableProviders
        if let file, !list.contains(where: { $0.id == file.id }) {
            list.append((file.id, displayName(of: file.id)))
        }
        let ordered =
            SandboxProviders.ids.compactMap { id in list.first { $0.id == id } } + list.filter { !SandboxProviders.contains($0.id) }
        return ordered.map { ProviderEntry(id: $0.id, displayName: $0.displayName) }
    }

    /// The provider `id` as its files describe it, unchecked: what the set-up dialog shows.
    func draft(for id: String) throws -> ProviderConfiguration {
        if let file, file.id == id { return try catalog.draft(file: file.url) }
        return try catalog.draft(named: id)
    }

    /// The provider `id`, ready to use: with the client secret the set-up dialog stored when
    /// no file or variable gives one, and, for the sandbox, its child process to wait for;
    /// throws a sentence when it cannot be used. Asks the keyring, so it runs off GTK's thread.
    /// A provider that names only its issuer has its discovery document brought up to date first.
    func provider(for id: String) async throws -> Provider {
        guard SandboxProviders.contains(id), file?.id != id else {
            let source: DiscoveryCache.Source?
            if let file, file.id == id {
                source = try await catalog.refreshDiscovery(file: file.url, network: network)
            } else {
                source = try await catalog.refreshDiscovery(named: id, network: network)
            }
            if let source { logger.info("Discovery document \(Self.describe(source))") }
            let configuration = try await catalog.completed(draft(for: id), secrets: secrets)
            // A provider given with --provider-file is that file's: never registered anew beside it.
            return Provider(
                configuration: configuration, store: store, network: network, accounts: LatchkeyFiles.accounts,
                registrations: isGivenFile(id) ? nil : zeroConfiguration,
                identityProviders: { [weak self] id in
                    guard let self else { throw OAuthError.unknownProvider(id) }
                    return try await self.provider(for: id)
                })
        }
        let child = try lock.withLock {
            if let sandbox { return sandbox }
            let child = try SandboxChild.prepare(logger: logger)
            sandbox = child
            return child
        }
        let configuration = try catalog.configuration(named: id, overrides: [ProviderFile.key(of: \.issuer): child.baseURL])
        // Up to 10 s reading the child's first line: on a thread of its own, not the pool's.
        return Provider(configuration: configuration, store: store, network: network, accounts: LatchkeyFiles.accounts) {
            try await BlockingWork.run { Result { try child.waitUntilReady() } }.get()
        }
    }

    /// Signs out of `id` (revoking where its provider can), with no window to show it:
    /// `latchkey --sign-out` for a provider the window no longer shows.
    func signOutInBackground(_ id: String) {
        guard exists(id) else { return }
        let logger = self.logger
        Task.detached {
            do {
                if let warning = try await self.provider(for: id).signOutForgettingPrograms() { logger.notice("\(warning)") }
            } catch {
                logger.notice("Could not sign out of \(id)", metadata: ["error": "\(error)"])
            }
        }
    }

    static func describe(_ source: DiscoveryCache.Source) -> String {
        switch source {
        case .fresh: "kept and still fresh"
        case .fetched: "fetched"
        case .revalidated: "confirmed unchanged by the provider"
        case .stale: "kept from before: the provider could not be asked"
        }
    }

    /// Stops the sandbox child if one was started.
    func stop() {
        lock.withLock { sandbox }?.stop()
    }
}
