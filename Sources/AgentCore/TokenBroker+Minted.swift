import FoundationEssentials
import OAuthCore

extension TokenBroker {
    /// Whose tokens a provider nobody signs in to gives: the client's own (client credentials), or the
    /// person signed in now at the identity provider it is reached through (a permission given for
    /// one person there is not another's).
    func standIn(_ standIn: ProviderCatalog.QuestionWords.StandIn?) -> String? {
        Self.person(standIn: standIn, accounts: accounts)
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
        if !configuration.scopes.isEmpty { try check(scopes: request.scopes, within: configuration.scopes, configuration) }
        if let resource = narrowing.resource, resource != configuration.resource {
            throw AgentRefusal(
                .invalid,
                "A token for \(Redaction.printable(resource.absoluteString)) was asked of \(configuration.displayName), which gives tokens for \(configuration.resource.map { Redaction.printable($0.absoluteString) } ?? "its own API") alone."
            )
        }
    }
}
