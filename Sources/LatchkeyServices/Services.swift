import Keyring
import LatchkeyCore
import Logging
import OAuthCore

/// What a run keeps sign-ins with and reaches providers through, built once from its options and
/// handed to whatever needs it (the window's providers, `latchkey token`, the agent, `status`):
/// the catalog; sign-ins and client secrets in the keyring when one runs and answers, else in 0600
/// files, asked at each use since a keyring can start (or lock) while Latchkey runs, with the
/// refresh lock beside the files; and the network (libcurl, `--network-timeout`).
public struct Services: Sendable {
    /// Read once per run: for the help text (which ArgumentParser builds at every parse) and for the provider chosen.
    public static let catalog = LatchkeyFiles.catalog()

    public let catalog: ProviderCatalog
    public let tokens: FallbackTokenStore
    /// Client secrets typed into the set-up dialog, and registration access tokens.
    public let secrets: FallbackClientSecretStore
    public let network: Network

    public init(keyringTimeout: Double, networkTimeout: Double = Waits.defaultNetworkTimeout) {
        catalog = Self.catalog
        tokens = FallbackTokenStore(
            preferred: SecretServiceTokenStore(timeout: keyringTimeout),
            fallback: FileTokenStore(directory: LatchkeyFiles.stateDirectory),
            preferredIsAvailable: { await SecretServiceTokenStore.isServiceRunning() })
        secrets = FallbackClientSecretStore(
            preferred: SecretServiceClientSecretStore(timeout: keyringTimeout),
            fallback: FileClientSecretStore(directory: LatchkeyFiles.clientSecretDirectory),
            preferredIsAvailable: { await SecretServiceTokenStore.isServiceRunning() })
        network = Network(timeout: networkTimeout, logger: Logger(label: "OAuthCore"))
    }

    public init(_ waits: Waits) {
        self.init(keyringTimeout: waits.keyringTimeout, networkTimeout: waits.networkTimeout)
    }

    /// Latchkey's way of making a provider from a resource or an issuer (see `ZeroConfiguration.latchkey`).
    public func zeroConfiguration(reservedIDs: Set<String> = Set(SandboxProviders.ids)) -> ZeroConfiguration {
        ZeroConfiguration.latchkey(catalog: catalog, secrets: secrets, tokens: tokens, reservedIDs: reservedIDs, network: network)
    }

    /// A real provider's configuration, its secret and discovery document read as a sign-in reads
    /// them; never the sandbox's, which lives only inside the window.
    public func configuration(of id: String) async throws -> ProviderConfiguration {
        guard !SandboxProviders.contains(id) else {
            throw OAuthError.invalidConfiguration(
                "the sandbox runs only inside the window, on a port of its own each time; ask for a token of a real provider, or of a resource."
            )
        }
        return try await catalog.configuration(named: id, secrets: secrets, network: network)
    }
}

extension ZeroConfiguration {
    /// Latchkey's way of making a provider from a resource or an issuer: its client
    /// metadata document, if the environment names one.
    /// `tokens`: where sign-ins are kept, cleared under an id nobody owns before it is used anew;
    /// `reservedIDs`: ids the run owns besides the catalog's (the sandbox's, a `--provider-file`'s).
    public static func latchkey(
        catalog: ProviderCatalog, secrets: any ClientSecretStore, tokens: any TokenStore,
        reservedIDs: Set<String> = Set(SandboxProviders.ids), network: Network
    ) -> ZeroConfiguration {
        ZeroConfiguration(
            catalog: catalog, secrets: secrets, network: network,
            clientName: "Latchkey",
            clientIDMetadataDocument: LatchkeyFiles.clientIDMetadataDocument(),
            tokens: tokens, reservedIDs: reservedIDs)
    }
}
