import FoundationEssentials
import OAuthCore

extension TokenBroker {
    /// Whose tokens a provider nobody signs in to gives: the client's own (client credentials), or the
    /// person signed in now at the identity provider it is reached through (a permission given for
    /// one person there is not another's).
    func standIn(_ standIn: ProviderCatalog.QuestionWords.StandIn?) -> String? {
        Self.person(standIn: standIn, accounts: accounts)
    }

    /// Whose tokens a program is allowed: the person signed in here; with none, the stand-in. Reached
    /// through an identity provider, both (a sign-in of the server's own, made where the identity
    /// provider refused, is one person; the one at the identity provider, whose tokens are minted, may
    /// be another): a change of either asks again.
    public static func person(signedIn: String?, standIn: String?, _ kind: ProviderCatalog.QuestionWords.StandIn?) -> String? {
        guard case .identityProvider? = kind, let signedIn, let standIn else { return signedIn ?? standIn }
        return signedIn + " via " + standIn
    }

    /// `standIn(_:)` for a command that reads the files itself (`latchkey agent allow`).
    public static func person(standIn: ProviderCatalog.QuestionWords.StandIn?, accounts: AccountList?) -> String? {
        switch standIn {
        case .client(let digest)?: "client " + digest
        case .identityProvider(let id)?: accounts?.entry(for: id).current?.subject
        case nil: nil
        }
    }

    /// A token had with nobody involved (client credentials, or through the identity provider) is for
    /// what its provider file names: a program asks for no scope beyond those (where the file names
    /// any), and for no other resource, whose server would be asked in the client's or the person's name.
    static func checkMinted(_ narrowing: Narrowing, _ request: AgentRequest, _ configuration: ProviderConfiguration)
        throws(AgentRefusal)
    {
        // A file that names no scopes: the grant's defaults, whatever they are, and nothing asked for by name.
        try check(scopes: request.scopes, within: configuration.scopes, configuration)
        if let resource = narrowing.resource, resource != configuration.resource {
            throw AgentRefusal(
                .invalid,
                "A token for \(Redaction.printable(resource.absoluteString)) was asked of \(configuration.displayName), which gives tokens for \(configuration.resource.map { Redaction.printable($0.absoluteString) } ?? "its own API") alone."
            )
        }
    }
}
