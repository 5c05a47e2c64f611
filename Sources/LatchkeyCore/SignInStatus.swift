import FoundationEssentials
import OAuthCore

/// What `latchkey status` and the agent's `ListProviders` say of a provider's sign-ins: read from
/// the account list and the store alone, never renewing or asking a provider anything.
public enum SignInStatus {
    /// A provider's accounts as its list has them, each with the key its tokens are kept under and
    /// whether it is the one in use; one line without a name ("-") when it lists none (a sign-in an
    /// earlier release made, kept under the provider's id, or none at all).
    public static func accounts(of id: String, in list: AccountList, store: any TokenStore) async
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
    public static func state(
        of id: String, key: String, catalog: ProviderCatalog, store: any TokenStore, secrets: any ClientSecretStore, isSandbox: Bool
    ) async
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
            isSandbox ? nil : try? await catalog.completed(catalog.draft(named: id), secrets: secrets)
        guard let token else {
            if isSandbox || configuration != nil { return "signed out" }
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
