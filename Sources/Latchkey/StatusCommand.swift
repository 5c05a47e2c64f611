import ArgumentParser
import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// `latchkey status`: each provider and its sign-in, never a token.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "List each provider with its sign-in state and when its access token expires.")

    @Option(name: .customLong("keyring-timeout"), help: "Seconds to wait for the keyring before using the private files.")
    var keyringTimeout: Double = 60

    func run() throws {
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: .error) }
        let catalog = LatchkeyCommand.catalog
        let store = Stores.tokens(keyringTimeout: keyringTimeout)
        let secrets = Stores.clientSecrets(keyringTimeout: keyringTimeout)
        let rows = wait { () async -> [(String, String, String)] in
            var rows: [(String, String, String)] = []
            for (id, name) in catalog.availableProviders {
                rows.append((id, name, await Self.state(of: id, catalog: catalog, store: store, secrets: secrets)))
            }
            return rows
        }
        let idWidth = max(8, rows.map(\.0.count).max() ?? 0)
        let nameWidth = max(4, rows.map(\.1.count).max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        print(pad("PROVIDER", idWidth) + "  " + pad("NAME", nameWidth) + "  STATE")
        for (id, name, state) in rows { print(pad(id, idWidth) + "  " + pad(name, nameWidth) + "  " + state) }
    }

    /// One provider's line: what is stored, read without renewing or sending anything.
    static func state(of id: String, catalog: ProviderCatalog, store: any TokenStore, secrets: any ClientSecretStore) async -> String {
        let token: Token?
        do {
            token = try await store.load(for: id)
        } catch {
            return "\(error)"  // OAuthError's sentence: "Trouble with the saved sign-in: …"
        }
        // As its files and kept documents describe it: a status asks no provider anything.
        let configuration =
            Providers.sandboxIDs.contains(id) ? nil : try? await catalog.completed(catalog.draft(named: id), secrets: secrets)
        guard let token else {
            if Providers.sandboxIDs.contains(id) || configuration != nil { return "signed out" }
            return "not set up (no client id or secret yet)"
        }
        if let configuration, token.issuedBy != nil, token.issuedBy != configuration.tokenBinding {
            return "signed in with an earlier set-up (not used; sign in again)"
        }
        let renews = token.canRefresh ? ", renewed when due" : ""
        guard let expiresAt = token.expiresAt else { return "signed in (no expiry given)\(renews)" }
        let when = expiresAt.ISO8601Format()
        if expiresAt <= Date() {
            return token.canRefresh ? "signed in; access token expired at \(when)\(renews)" : "expired at \(when); sign in again"
        }
        return "signed in; access token expires \(when)\(renews)"
    }
}
