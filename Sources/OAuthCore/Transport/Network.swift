import Logging

/// How OAuthCore reaches providers: through which transport, how long a whole
/// request may take, and where it says what it does. One value, handed to
/// everything that talks to a provider, so that one program's requests all wait
/// as long as it chose.
public struct Network: Sendable {
    public var transport: any HTTPTransport
    /// Seconds a whole request may take.
    public var timeout: Double
    public var logger: Logger

    /// Seconds a request may take unless a program says otherwise: the one default OAuthCore has.
    public static let defaultTimeout: Double = 30

    /// OAuthCore's defaults: libcurl, `defaultTimeout`, the `OAuthCore` log label.
    public init(
        transport: any HTTPTransport = CurlTransport.shared, timeout: Double = defaultTimeout, logger: Logger = Logger(label: "OAuthCore")
    ) {
        self.transport = transport
        self.timeout = timeout
        self.logger = logger
    }
}
