import Foundation

/// An application registered at the sandbox's OAuth 1.0a provider (a consumer,
/// RFC 5849 §1.1): it signs with its secret (HMAC-SHA1) or with the private half
/// of the RSA key registered here (RSA-SHA1).
public struct SandboxConsumer: Codable, Sendable, Equatable {
    public var key: String
    public var secret: String?
    /// The consumer's RSA public key, PEM: RSA-SHA1 signatures are checked with it.
    public var rsaPublicKey: String?
    public var name: String
    /// Callbacks it may name (`oauth_callback`): exactly, or a loopback one with any port.
    public var callbacks: [String]

    public init(key: String, secret: String? = nil, rsaPublicKey: String? = nil, name: String, callbacks: [String]) {
        self.key = key
        self.secret = secret
        self.rsaPublicKey = rsaPublicKey
        self.name = name
        self.callbacks = callbacks
    }

    enum CodingKeys: String, CodingKey {
        case key, secret, name, callbacks
        case rsaPublicKey = "rsa_public_key"
    }

    /// The same rule as OAuth 2 redirect URIs here: exact, or loopback with any port.
    func accepts(callback: String) -> Bool {
        SandboxClient(clientID: key, name: name, redirectURIs: callbacks).isRegistered(redirectURI: callback)
    }
}
