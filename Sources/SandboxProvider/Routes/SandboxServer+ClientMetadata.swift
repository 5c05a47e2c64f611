import Foundation
import Hummingbird

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Clients known by the URL of their metadata document
// (draft-ietf-oauth-client-id-metadata-document, as MCP uses it): no registration,
// the document is fetched when the client shows up.
extension SandboxServer {
    /// Only the RFC-strict sandbox, like dynamic registration.
    var acceptsClientMetadataDocuments: Bool { likeness.name == .standard }

    /// A client id that names a metadata document: https with a path, no fragment, no
    /// credentials, no dot segments; plain http only on loopback, so tests stay offline.
    static func metadataDocumentURL(_ clientID: String) -> URL? {
        guard let parts = URLComponents(string: clientID), let scheme = parts.scheme?.lowercased(), parts.fragment == nil,
            parts.user == nil, parts.password == nil, let host = parts.host, !host.isEmpty, parts.path.count > 1,
            !parts.path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }),
            scheme == "https" || (scheme == "http" && SandboxClient.isLoopbackHTTP(clientID))
        else { return nil }
        return parts.url
    }

    /// The client its metadata document describes, fetched now (at most 5 KB, 5 s); nil
    /// when the id names no document or the document does not hold: its `client_id` must
    /// be the URL itself, it must list redirect URIs, and it must not use a shared secret.
    func clientFromMetadataDocument(_ clientID: String) async -> SandboxClient? {
        guard acceptsClientMetadataDocuments, let url = Self.metadataDocumentURL(clientID) else { return nil }
        await state.count(\.clientMetadataFetches)
        func refuse(_ reason: String) -> SandboxClient? {
            logger.notice("client metadata document refused: \(reason)")
            return nil
        }
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        guard let (data, response) = try? await URLSession.shared.data(for: request) else { return refuse("not reachable") }
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { return refuse("not 200") }
        guard data.count <= 5120 else { return refuse("larger than 5 KB") }
        guard let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            return refuse("not a JSON object")
        }
        guard document["client_id"] as? String == clientID else { return refuse("its client_id is not its own URL") }
        guard let redirectURIs = document["redirect_uris"] as? [String], !redirectURIs.isEmpty,
            redirectURIs.allSatisfy({ Self.unacceptableRedirectURI($0) == nil })
        else { return refuse("no acceptable redirect_uris") }
        guard document["client_secret"] == nil, (document["token_endpoint_auth_method"] as? String ?? "none") == "none" else {
            return refuse("a shared secret")
        }
        return SandboxClient(
            clientID: clientID, name: document["client_name"] as? String ?? url.host ?? clientID, redirectURIs: redirectURIs)
    }
}
