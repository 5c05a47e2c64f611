import FoundationEssentials

/// What a protected resource says about itself (RFC 9728 §2), once checked:
/// which authorization servers issue tokens for it, and what a token must allow.
public struct ProtectedResourceMetadata: Sendable, Equatable {
    /// Its resource identifier: the value sent as `resource` (RFC 8707).
    public let resource: URL
    /// Issuer identifiers, in the resource's order of preference.
    public let authorizationServers: [URL]
    /// The scopes to ask for: the challenge's `scope`, else the metadata's `scopes_supported`.
    public let scopes: [String]
    /// A name to show (`resource_name`), when it gives one.
    public let name: String?
}

/// From a URL to the authorization server that guards it (RFC 9728 §5): ask
/// for the URL without a token; a 401's `WWW-Authenticate: Bearer resource_metadata="…"`
/// names the metadata, else the resource's well-known location has it.
public enum ResourceDiscovery {
    /// The metadata for `resource`, checked, from the first place that has it, in the order
    /// the MCP authorization specification (2026-07-28) gives: the `resource_metadata` the 401's
    /// challenge names, else the well-known location with the resource's path inserted (RFC 9728
    /// §3.1), else the well-known location of its origin. Its `resource` must be the URL asked
    /// about, or — found at the origin's location — that URL's origin or a path above it on the
    /// same origin (§3.3: a resource cannot send a client to another one's server). Its servers
    /// must be https (plain http only for a resource on this computer). The resource itself is
    /// always asked: a challenge handed on by someone else does not say where its metadata is.
    public static func metadata(
        for resource: URL, network: Network = Network()
    ) async throws -> ProtectedResourceMetadata {
        let identifier = try identifier(of: resource)
        let probe = try await ProviderDiscovery.getJSON(identifier, endpoint: .resource, network: network)
        var bearer: AuthenticateChallenge?
        if probe.status == 401 || probe.status == 403, let header = probe.header("www-authenticate") {
            // A resource that takes DPoP-bound tokens alone challenges with DPoP (RFC 9449 §7.1), with the same parameters.
            let challenges = (try? AuthenticateChallenge.parse(header)) ?? []
            bearer = challenges.first(where: { $0.is("Bearer") }) ?? challenges.first(where: { $0.is("DPoP") })
        }
        if probe.status < 400, bearer?["resource_metadata"] == nil {
            throw OAuthError.invalidConfiguration(
                "\(identifier.absoluteString) answered without asking for a sign-in (HTTP \(probe.status)), so there is no token to get for it."
            )
        }
        let challengeScopes = bearer?["scope"].map { $0.split(separator: " ").map(String.init) }
        var places: [(url: URL, exact: Bool)] = []
        if let named = bearer?["resource_metadata"] {
            guard let url = URL(string: named), url.host?.isEmpty == false, allowed(url, beside: identifier) else {
                throw OAuthError.invalidConfiguration(
                    "\(identifier.absoluteString) names its metadata at \(Redaction.clip(named)), which is not an https URL.")
            }
            // Named by the challenge, it is about exactly this resource (RFC 9728 §3.3); only the
            // origin's own well-known document may be about something above it.
            places.append((url, true))
        } else {
            places.append((wellKnownLocation(of: identifier), true))
            let root = wellKnownLocation(of: origin(of: identifier))
            if root != places[0].url { places.append((root, false)) }
        }
        for place in places {
            let answer = try await ProviderDiscovery.getJSON(place.url, endpoint: .resourceMetadata, network: network)
            if answer.status == 404 || answer.status == 410 { continue }
            let document = try ProviderDiscovery.jsonObject(answer, endpoint: .resourceMetadata)
            return try metadata(from: document, for: identifier, challengeScopes: challengeScopes, mayBeAbove: !place.exact)
        }
        throw OAuthError.invalidConfiguration(
            "\(identifier.absoluteString) does not say where to sign in: it names no resource_metadata, and neither "
                + "\(places.map(\.url.absoluteString).joined(separator: " nor ")) is there (RFC 9728).")
    }

    /// The checks of §3.3 and the choice of scopes, on a document already read. `mayBeAbove`: the
    /// document was not found at the location made from `identifier` itself, so it may be about
    /// the origin, or a path above, on the same origin.
    static func metadata(from document: JSONValue, for identifier: URL, challengeScopes: [String]?, mayBeAbove: Bool = false) throws
        -> ProtectedResourceMetadata
    {
        func fail(_ reason: String) -> OAuthError { .malformedResponse(endpoint: .resourceMetadata, reason: reason) }
        guard let named = document["resource"]?.string else { throw fail("it names no resource") }
        guard let namedURL = URL(string: named), let normalised = try? self.identifier(of: namedURL),
            normalised == identifier || (mayBeAbove && contains(normalised, identifier))
        else {
            throw OAuthError.invalidConfiguration(
                "the metadata of \(identifier.absoluteString) is about another resource (\(Redaction.clip(named))), so it cannot be trusted (RFC 9728 §3.3)."
            )
        }
        guard let servers = document["authorization_servers"]?.strings, !servers.isEmpty else {
            throw OAuthError.invalidConfiguration(
                "\(identifier.absoluteString) names no authorization server in its metadata, so there is nowhere to sign in.")
        }
        let urls = try servers.map { text in
            guard let url = URL(string: text), url.host?.isEmpty == false, allowed(url, beside: identifier) else {
                throw OAuthError.invalidConfiguration(
                    "the metadata of \(identifier.absoluteString) names an authorization server that is not an https URL: \(Redaction.clip(text))"
                )
            }
            return url
        }
        let supported = document["scopes_supported"]?.strings ?? []
        let name = document["resource_name"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        // The scopes to ask for: the challenge's, else all the metadata lists, else none at all.
        return ProtectedResourceMetadata(resource: normalised, authorizationServers: urls, scopes: challengeScopes ?? supported, name: name)
    }

    /// The resource identifier for `url` (RFC 9728 §1.2, RFC 8707 §2): absolute,
    /// https or this computer's http, no fragment; scheme and host in lower case.
    public static func identifier(of url: URL) throws -> URL {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: true), let scheme = parts.scheme?.lowercased(),
            let host = parts.host, !host.isEmpty, parts.user == nil, parts.password == nil,
            ProviderConfiguration.isSecureOrLoopback(url)
        else {
            throw OAuthError.invalidConfiguration(
                "“\(url.absoluteString)” is not a protected resource's URL: it must be https://… (http only on this computer).")
        }
        guard parts.fragment == nil else {
            throw OAuthError.invalidConfiguration("a resource's URL has no fragment (#…): \(url.absoluteString)")
        }
        parts.scheme = scheme
        parts.host = host.lowercased()
        if (scheme == "https" && parts.port == 443) || (scheme == "http" && parts.port == 80) { parts.port = nil }
        guard let normalised = parts.url else {
            throw OAuthError.invalidConfiguration("“\(url.absoluteString)” is not a usable URL.")
        }
        return normalised
    }

    /// RFC 9728 §3.1: the well-known suffix goes between the host and the path (a query stays after it).
    static func wellKnownLocation(of identifier: URL) -> URL {
        var parts = URLComponents(url: identifier, resolvingAgainstBaseURL: false)!
        let path = parts.percentEncodedPath == "/" ? "" : parts.percentEncodedPath
        parts.percentEncodedPath = "/.well-known/oauth-protected-resource" + path
        return parts.url!
    }

    /// `url` with no path, query or fragment: its origin, as a resource identifier.
    static func origin(of url: URL) -> URL {
        var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        parts.percentEncodedPath = ""
        parts.percentEncodedQuery = nil
        parts.fragment = nil
        return parts.url!
    }

    /// Whether `inner` is `outer` or under it: the same origin, and `outer`'s path a whole-segment prefix of `inner`'s.
    static func contains(_ outer: URL, _ inner: URL) -> Bool {
        guard origin(of: outer) == origin(of: inner), outer.query == nil else { return false }
        let outerPath = outer.path.hasSuffix("/") ? String(outer.path.dropLast()) : outer.path
        return outerPath.isEmpty || inner.path == outerPath || inner.path.hasPrefix(outerPath + "/")
    }

    /// https anywhere; plain http only when the resource itself is on this computer.
    static func allowed(_ url: URL, beside resource: URL) -> Bool {
        url.scheme?.lowercased() == "https"
            || (ProviderConfiguration.isLoopback(resource) && ProviderConfiguration.isSecureOrLoopback(url))
    }
}
