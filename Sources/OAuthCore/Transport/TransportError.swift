import FoundationEssentials

/// Why a request got no whole HTTP response.
public enum TransportError: Error, Equatable, Sendable {
    case timedOut
    case cannotConnect
    case connectionLost
    case other(String)
}
