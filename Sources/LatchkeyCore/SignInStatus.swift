import FoundationEssentials
import OAuthCore

/// An account's state, as a program acts on it (`kind`) and as a person reads it (`sentence`).
public struct SignInState: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A token is kept, good or renewable: a program asking gets one (if the person allows it).
        case signedIn = "signed-in"
        /// Nothing kept: sign in.
        case signedOut = "signed-out"
        /// What is kept cannot be used (expired and not renewable, or from an earlier set-up): sign in again.
        case needsSignIn = "needs-sign-in"
        /// No client id or secret yet: set the provider up first.
        case notSetUp = "not-set-up"
        /// The store could not be read (the keyring locked, a damaged file): its sentence says what.
        case storeTrouble = "store-trouble"
    }

    public let kind: Kind
    public let sentence: String

    public init(_ kind: Kind, _ sentence: String) {
        self.kind = kind
        self.sentence = sentence
    }
}

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
        -> SignInState
    {
        await read(of: id, key: key, catalog: catalog, store: store, secrets: secrets, isSandbox: isSandbox).state
    }

    /// The account's state, with its token and its provider as kept (both nil when there is none to read).
    public static func read(
        of id: String, key: String, catalog: ProviderCatalog, store: any TokenStore, secrets: any ClientSecretStore, isSandbox: Bool
    ) async
        -> (state: SignInState, token: Token?, configuration: ProviderConfiguration?)
    {
        let token: Token?
        do {
            token = try await store.load(for: key)
        } catch {
            return (SignInState(.storeTrouble, "\(error)"), nil, nil)  // OAuthError's sentence: "Trouble with the saved sign-in: …"
        }
        // As its files and kept documents describe it: a status asks no provider anything.
        let configuration =
            isSandbox ? nil : try? await catalog.completed(catalog.draft(named: id), secrets: secrets)
        return (state(of: token, configuration: configuration, isSandbox: isSandbox), token, configuration)
    }

    private static func state(of token: Token?, configuration: ProviderConfiguration?, isSandbox: Bool) -> SignInState {
        guard let token else {
            if isSandbox || configuration != nil { return SignInState(.signedOut, "signed out") }
            return SignInState(.notSetUp, "not set up (no client id or secret yet)")
        }
        if let configuration, token.issuedBy != nil, token.issuedBy != configuration.tokenBinding {
            return SignInState(.needsSignIn, "signed in with an earlier set-up (not used; sign in again)")
        }
        // RFC 9449: where the key its tokens are bound to is, and so what a copy of the keyring is worth.
        let renews =
            (token.canRefresh ? ", renewed when due" : "") + (DPoPKey.whereKept(token.dpopKey).map { "; bound to a key kept \($0)" } ?? "")
        guard let expiresAt = token.expiresAt else { return SignInState(.signedIn, "signed in (no expiry given)\(renews)") }
        let when = expiresAt.ISO8601Format()
        if expiresAt <= Date() {
            return token.canRefresh
                ? SignInState(.signedIn, "signed in; access token expired at \(when)\(renews)")
                : SignInState(.needsSignIn, "expired at \(when); sign in again")
        }
        return SignInState(.signedIn, "signed in; access token expires \(when)\(renews)")
    }
}
