/// What a faulty endpoint does instead of answering properly.
public enum FaultKind: String, Codable, Sendable, CaseIterable {
    /// `500 Internal Server Error` with a plain-text body.
    case serverError = "500"
    /// `200 OK` with an HTML page, as a captive portal or a misrouted proxy sends.
    case html
    /// `200 OK` with an empty body.
    case empty
    /// A JSON body cut off halfway, then the connection closes.
    case truncated
    /// The proper answer, after a delay longer than any client's patience.
    case delay
    /// The connection closes without a byte of response.
    case close
}

/// Endpoints that can be told to misbehave.
public enum FaultEndpoint: String, Codable, Sendable, CaseIterable {
    case token, userinfo, revoke, discovery
}

/// "The next `count` answers of `endpoint` are `kind`."
public struct Fault: Codable, Sendable, Equatable {
    public var endpoint: FaultEndpoint
    public var kind: FaultKind
    public var count: Int
    /// Seconds a `delay` fault waits before answering.
    public var delaySeconds: Double

    public init(endpoint: FaultEndpoint, kind: FaultKind, count: Int = 1, delaySeconds: Double = 30) {
        self.endpoint = endpoint
        self.kind = kind
        self.count = count
        self.delaySeconds = delaySeconds
    }

    enum CodingKeys: String, CodingKey {
        case endpoint, kind, count
        case delaySeconds = "delay_seconds"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        endpoint = try c.decode(FaultEndpoint.self, forKey: .endpoint)
        kind = try c.decode(FaultKind.self, forKey: .kind)
        count = try c.decodeIfPresent(Int.self, forKey: .count) ?? 1
        delaySeconds = try c.decodeIfPresent(Double.self, forKey: .delaySeconds) ?? 30
    }

    /// Parses the command-line form `ENDPOINT:KIND[:COUNT]`, e.g. `token:500:2`.
    public init?(argument: String, delaySeconds: Double = 30) {
        let parts = argument.split(separator: ":").map(String.init)
        guard (2...3).contains(parts.count),
            let endpoint = FaultEndpoint(rawValue: parts[0]),
            let kind = FaultKind(rawValue: parts[1])
        else { return nil }
        let count = parts.count == 3 ? Int(parts[2]) : 1
        guard let count, count > 0 else { return nil }
        self.init(endpoint: endpoint, kind: kind, count: count, delaySeconds: delaySeconds)
    }
}
