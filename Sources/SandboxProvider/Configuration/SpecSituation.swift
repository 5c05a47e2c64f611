/// How the sandbox departs from its usual self to put a client in one of the situations the
/// MCP authorization specification (revision 2026-07-28) names: where its metadata is found,
/// what it says of `iss` (RFC 9207), what its resources ask for. Each is chosen on the command line.
public struct SpecSituation: Sendable, Equatable {
    /// What the authorization response says of `iss`, and what the metadata advertises.
    public enum Iss: String, Sendable, CaseIterable {
        /// Advertised and sent, exactly the issuer: the usual (for the RFC-strict sandbox).
        case sent
        /// Advertised, but left out of the answer: a client must refuse it.
        case absent
        /// Advertised, and another server's: refused.
        case wrong
        /// Advertised, and the issuer with one slash more: refused (no normalisation).
        case slash
        /// Not advertised, not sent: a client proceeds.
        case unadvertised
        /// Not advertised, but sent, and another server's: refused all the same.
        case unadvertisedWrong = "unadvertised-wrong"

        var advertised: Bool { [.sent, .absent, .wrong, .slash].contains(self) }

        func value(issuer: String) -> String? {
            switch self {
            case .sent: issuer
            case .absent, .unadvertised: nil
            case .wrong, .unadvertisedWrong: "https://mix-up.invalid"
            case .slash: issuer + "/"
            }
        }
    }

    /// Where the authorization server's metadata is served (RFC 8414 §3, OpenID Connect Discovery §4).
    public enum MetadataLocation: String, Sendable, CaseIterable {
        /// Every well-known location that fits the issuer.
        case all
        /// RFC 8414's, inserted before the issuer's path: `/.well-known/oauth-authorization-server/tenant`.
        case oauth
        /// OpenID Connect's name, inserted the same way: `/.well-known/openid-configuration/tenant`.
        case oidcInserted = "oidc-inserted"
        /// OpenID Connect's own, appended to the issuer: `/tenant/.well-known/openid-configuration`.
        case oidcAppended = "oidc-appended"
    }

    /// Where a protected resource's metadata is served (RFC 9728 §3, §5.1).
    public enum ResourceMetadataLocation: String, Sendable, CaseIterable {
        /// Named in the 401's `resource_metadata`, and at the well-known location with the resource's path.
        case named
        /// Only at the well-known location with the resource's path; the 401 names none.
        case path
        /// Only at the well-known location of the origin, about the origin; the 401 names none.
        case root
        /// Only at a location of the resource's own choosing, which the 401 names.
        case custom
    }

    public var iss: Iss?
    /// A path the issuer has beyond the base URL (`/tenant1`, or `/` for a trailing slash alone);
    /// endpoints stay where they are.
    public var issuerPath: String
    public var metadata: MetadataLocation
    public var resourceMetadata: ResourceMetadataLocation

    public init(
        iss: Iss? = nil, issuerPath: String = "", metadata: MetadataLocation = .all, resourceMetadata: ResourceMetadataLocation = .named
    ) {
        self.iss = iss
        self.issuerPath = issuerPath
        self.metadata = metadata
        self.resourceMetadata = resourceMetadata
    }

    public static let usual = SpecSituation()

    /// Every well-known location a client may look for the metadata of an issuer with `path`,
    /// and whether this situation serves it there.
    func metadataLocations(defaults: [String]) -> [(path: String, served: Bool)] {
        // `/` alone makes the issuer the base URL with a trailing slash, whose metadata is at the root.
        let path = issuerPath == "/" ? "" : issuerPath
        guard !path.isEmpty else {
            let oauth = "/.well-known/oauth-authorization-server"
            let oidc = "/.well-known/openid-configuration"
            switch metadata {
            case .all: return defaults.map { ($0, true) } + [oauth, oidc].filter { !defaults.contains($0) }.map { ($0, false) }
            case .oauth: return [(oauth, true), (oidc, false)]
            case .oidcInserted, .oidcAppended: return [(oauth, false), (oidc, true)]
            }
        }
        return [
            ("/.well-known/oauth-authorization-server" + path, metadata == .all || metadata == .oauth),
            ("/.well-known/openid-configuration" + path, metadata == .all || metadata == .oidcInserted),
            (path + "/.well-known/openid-configuration", metadata == .all || metadata == .oidcAppended),
            // Where a client that ignores the issuer's path would look: never served.
            ("/.well-known/oauth-authorization-server", false), ("/.well-known/openid-configuration", false),
        ]
    }
}
