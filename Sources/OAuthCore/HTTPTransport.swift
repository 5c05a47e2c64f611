import Foundation

public struct HTTPRequest: Sendable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// Seconds the whole exchange may take, connecting included.
    public var timeout: TimeInterval

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a request got no whole HTTP response.
public enum TransportError: Error, Equatable, Sendable {
    case timedOut
    case cannotConnect
    case connectionLost
    case other(String)
}

/// How OAuthCore speaks HTTP. `CurlTransport` by default; a program with its
/// own HTTP stack plugs it in here.
public protocol HTTPTransport: Sendable {
    /// Sends the request without following redirects. Throws `TransportError`
    /// when no whole response arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
