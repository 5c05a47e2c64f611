import ArgumentParser
import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// `latchkey status`: each provider, its accounts and their sign-ins, never a token.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "List each provider and its accounts, with each sign-in's state and when its access token expires."
    )

    @OptionGroup var keyring: KeyringWait

    func run() throws {
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: .error) }
        let catalog = LatchkeyCommand.catalog
        let store = Stores.tokens(keyringTimeout: keyring.seconds)
        let secrets = Stores.clientSecrets(keyringTimeout: keyring.seconds)
        let accounts = LatchkeyFiles.accounts
        let rows = wait { () async -> [[String]] in
            var rows: [[String]] = []
            for (id, name) in catalog.availableProviders {
                let listed = await Self.accounts(of: id, in: accounts, store: store)
                for account in listed {
                    let shown = account.label + (listed.count > 1 && account.inUse ? " (in use)" : "")
                    rows.append([
                        id, name, shown, await Self.state(of: id, key: account.key, catalog: catalog, store: store, secrets: secrets),
                    ])
                }
            }
            return rows
        }
        let header = ["PROVIDER", "NAME", "ACCOUNT", "STATE"]
        let widths = (0..<3).map { column in max(header[column].count, rows.map { $0[column].count }.max() ?? 0) }
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        for row in [header] + rows { print((0..<3).map { pad(row[$0], widths[$0]) }.joined(separator: "  ") + "  " + row[3]) }
    }

    /// A provider's accounts as its list has them, each with the key its tokens are kept under and
    /// whether it is the one in use; one line without a name ("-") when it lists none (a sign-in an
    /// earlier release made, kept under the provider's id, or none at all).
    static func accounts(of id: String, in list: AccountList, store: any TokenStore) async
        -> [(label: String, key: String, inUse: Bool)]
    {
        let entry = list.entry(for: id)
        var lines = entry.accounts.map { (label: $0.label, key: $0.key, inUse: $0.key == entry.current?.key) }
        // A sign-in under the provider's id that the list does not name yet (the app lists it at its next use).
        if entry.fromEarlierRelease || entry.account(key: id) == nil, (try? await store.load(for: id)) != nil {
            lines.removeAll { $0.key == id }
            lines.insert((entry.account(key: id)?.label ?? "-", id, lines.isEmpty), at: 0)
        }
        return lines.isEmpty ? [("-", id, true)] : lines
    }

    /// One provider's line: what is stored, read without renewing or sending anything.
    static func state(of id: String, key: String, catalog: ProviderCatalog, store: any TokenStore, secrets: any ClientSecretStore) async
        -> String
    {
        let token: Token?
        do {
            token = try await store.load(for: key)
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
