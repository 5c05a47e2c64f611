import Foundation

extension SandboxState {
    /// What the sandbox counted, for tests that must know how often a client called.
    struct Statistics: Codable, Sendable {
        var tokenRequests = 0
        var authorizationCodeGrants = 0
        var refreshGrants = 0
        /// RFC 8693 exchanges answered with a token.
        var tokenExchanges = 0
        /// Clients that proved themselves with a JWT (private_key_jwt), and tokens given in a client's own name.
        var clientAssertions = 0
        var clientCredentialsGrants = 0
        /// ID-JAGs given (as an identity provider), and taken for a token (as an MCP server's authorization server).
        var idJAGsIssued = 0
        var idJAGsRedeemed = 0
        var userinfoRequests = 0
        var revocationRequests = 0
        var registrations = 0
        /// Discovery documents sent whole, and conditional requests answered 304 Not Modified.
        var discoveryRequests = 0
        var discoveryNotModified = 0
        /// Client metadata documents fetched (a client whose id is a URL).
        var clientMetadataFetches = 0
        /// Every well-known path asked for, served or not, in order: where a client looked.
        var wellKnownPaths: [String] = []
        /// The `scope` of every authorization request that reached the sign-in page, in order ("" for none).
        var authorizationScopes: [String] = []
        /// The `prompt` and `login_hint` of every authorization request, in order ("" for none).
        var authorizationPrompts: [String] = []
        var authorizationLoginHints: [String] = []
        /// Every client id the second authorization server was asked about (authorization, token, revocation).
        var secondServerClientIDs: [String] = []
        /// The `resource` every token request named, in order ("" for none): RFC 8707 lets a client
        /// leave it out; the MCP authorization specification does not.
        var tokenRequestResources: [String] = []
        /// RFC 8628: codes asked for, and token requests with a device code.
        var deviceAuthorizations = 0
        var devicePolls = 0
        /// RFC 9126: requests pushed; and the names of the parameters each authorization address
        /// carried, sorted, space-separated (`client_id request_uri` for a pushed request).
        var pushedRequests = 0
        var authorizationAddressParameters: [String] = []

        enum CodingKeys: String, CodingKey {
            case tokenRequests = "token_requests"
            case authorizationCodeGrants = "authorization_code_grants"
            case refreshGrants = "refresh_grants"
            case tokenExchanges = "token_exchanges"
            case clientAssertions = "client_assertions"
            case clientCredentialsGrants = "client_credentials_grants"
            case idJAGsIssued = "id_jags_issued"
            case idJAGsRedeemed = "id_jags_redeemed"
            case userinfoRequests = "userinfo_requests"
            case revocationRequests = "revocation_requests"
            case registrations
            case discoveryRequests = "discovery_requests"
            case discoveryNotModified = "discovery_not_modified"
            case clientMetadataFetches = "client_metadata_fetches"
            case wellKnownPaths = "well_known_paths"
            case authorizationScopes = "authorization_scopes"
            case authorizationPrompts = "authorization_prompts"
            case authorizationLoginHints = "authorization_login_hints"
            case secondServerClientIDs = "second_server_client_ids"
            case tokenRequestResources = "token_request_resources"
            case deviceAuthorizations = "device_authorizations"
            case devicePolls = "device_polls"
            case pushedRequests = "pushed_requests"
            case authorizationAddressParameters = "authorization_address_parameters"
        }
    }
}
