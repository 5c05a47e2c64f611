import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import LatchkeyCore
import Logging
import OAuthCore

extension ZeroConfiguration {
    /// Latchkey's way of making a provider from a resource or an issuer: its client
    /// metadata document, if the environment names one.
    /// `tokens`: where sign-ins are kept, cleared under an id nobody owns before it is used anew;
    /// `reservedIDs`: ids the run owns besides the catalog's (the sandbox's, a `--provider-file`'s).
    static func latchkey(
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

/// Runs async work from a synchronous command (before GTK starts, or instead of it).
func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    SyncBridge.wait(work)
}

/// `wait` for work that throws: its error is thrown here.
func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    try wait { () async -> Result<T, any Error> in
        do { return .success(try await work()) } catch { return .failure(error) }
    }.get()
}

/// A value handed from a task to GTK's thread, written once before the loop is told to quit and
/// read after it returned: never at once.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
