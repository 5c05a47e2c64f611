import FoundationEssentials

/// How OAuthCore speaks HTTP. `CurlTransport` by default; a program with its
/// own HTTP stack plugs it in here.
public protocol HTTPTransport: Sendable {
    /// Sends the request without following redirects. Throws `TransportError`
    /// when no whole response arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
