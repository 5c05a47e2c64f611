import FoundationEssentials
import OAuthCore

extension TokenBroker {
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
