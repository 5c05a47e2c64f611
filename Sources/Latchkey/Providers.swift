import Foundation
import LatchkeyCore
import Logging
import OAuthCore

/// The providers this run can show, and how each becomes a configuration: the
/// presets and the person's own files (from the catalog), the file given with
/// `--provider-file`, and the offline sandbox, started the first time it is
/// chosen and stopped when Latchkey ends. Client secrets typed into the set-up
/// dialog come from `secrets` (the keyring, or a private file).
final class Providers: @unchecked Sendable {
    let catalog: ProviderCatalog
    let secrets: any ClientSecretStore
    /// `--provider-file`: its id, and where it is.
    let file: (id: String, url: URL)?
    /// What the window lists: the sandbox first, then every other provider by name.
    /// Read once the window is up (every preset and file of the person's is
    /// opened for its name: not something the launch should wait for) and again
    /// after a provider is added; read (`readEntries`) off GTK's thread, kept and used on it only.
    var entries: [(id: String, displayName: String)] = []
    private let logger: Logger
    /// Seconds to wait for a provider's discovery document.
    private let networkTimeout: Double
    // Guarded by `lock`: the sandbox child, once started.
    private let lock = NSLock()
    private var sandbox: SandboxChild?

    static let sandboxID = "sandbox"
    /// The sandbox's providers, as the list shows them first: OAuth 2.0, then OAuth 1.0a, both served by the one child.
    static let sandboxIDs = [sandboxID, "sandbox-oauth1"]

    init(catalog: ProviderCatalog, secrets: any ClientSecretStore, file: URL?, networkTimeout: Double = 30, logger: Logger) throws {
        self.catalog = catalog
        self.networkTimeout = networkTimeout
        self.secrets = secrets
        self.logger = logger
        // The file is read for its id and name; its credentials may still be missing (the set-up dialog gives them).
        self.file = try file.map { (try catalog.readableID(file: $0), $0) }
    }

    /// Whether there is a provider `id` to show, found without listing them all.
    func exists(_ id: String) -> Bool {
        id == file?.id || catalog.contains(id)
    }

    /// The name `id` shows, read from its own files alone.
    func displayName(of id: String) -> String {
        (try? draft(for: id).displayName) ?? id
    }

    /// Ids this run owns besides the catalog's: the sandbox's, and the one of `--provider-file`.
    /// No provider added in the window takes one, nor clears what is stored under it.
    var reservedIDs: Set<String> { Set(Self.sandboxIDs + (file.map { [$0.id] } ?? [])) }

    /// The zero-configuration service over this run's catalog, secrets and `store`.
    func zeroConfiguration(store: any TokenStore, timeout: Double) -> ZeroConfiguration {
        ZeroConfiguration.latchkey(catalog: catalog, secrets: secrets, tokens: store, reservedIDs: reservedIDs, timeout: timeout)
    }

    /// Whether `id` is the provider given with `--provider-file`: no settings are written beside it.
    func isGivenFile(_ id: String) -> Bool { file?.id == id }

    /// Reads the list: once the window is up, and after a provider was added.
    func readEntries() -> [(id: String, displayName: String)] {
        var list = catalog.availableProviders
        if let file, !list.contains(where: { $0.id == file.id }), let draft = try? catalog.draft(file: file.url) {
            list.append((draft.id, draft.displayName))
        }
        return Self.sandboxIDs.compactMap { id in list.first { $0.id == id } } + list.filter { !Self.sandboxIDs.contains($0.id) }
    }

    /// The provider `id` as its files describe it, unchecked: what the set-up dialog shows.
    func draft(for id: String) throws -> ProviderConfiguration {
        if let file, file.id == id { return try catalog.draft(file: file.url) }
        return try catalog.draft(named: id)
    }

    /// Whether `id` is one of the person's own providers (no preset of that name):
    /// its client secret is theirs to give or leave out.
    func isOwn(_ id: String) -> Bool {
        catalog.presetFile(named: id) == nil
    }

    /// The provider `id`, with the client secret the set-up dialog stored when
    /// no file or variable gives one, and what must happen before it is first
    /// spoken to (the sandbox child starting); throws a sentence when it cannot be used.
    /// Asks the keyring, so it runs off GTK's thread.
    /// A provider that names only its issuer has its discovery document brought up to date first.
    func configuration(for id: String) async throws -> (ProviderConfiguration, ready: @Sendable () throws -> Void) {
        guard Self.sandboxIDs.contains(id), file?.id != id else {
            let source: DiscoveryCache.Source?
            if let file, file.id == id {
                source = try await catalog.refreshDiscovery(file: file.url, timeout: networkTimeout)
            } else {
                source = try await catalog.refreshDiscovery(named: id, timeout: networkTimeout)
            }
            if let source { logger.info("Discovery document \(Self.describe(source))") }
            return (try await catalog.completed(draft(for: id), secrets: secrets), {})
        }
        let child = try lock.withLock {
            if let sandbox { return sandbox }
            let child = try SandboxChild.prepare(logger: logger)
            sandbox = child
            return child
        }
        let configuration = try catalog.configuration(named: id, overrides: ["issuer": child.baseURL])
        return (configuration, { try child.waitUntilReady() })
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
