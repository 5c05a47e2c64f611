import Foundation
import HTTPTypes
import Hummingbird

/// RFC 9126: pushed authorization requests. Offered (`--pushed-requests offered`), a client may
/// push its request; required, the authorization endpoint takes nothing else.
extension SandboxServer {
    static let pushedPath = "/par"
    /// How a `request_uri` begins (§2.2).
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    func addPushedRequests(to router: Router<SandboxRequestContext>) {
        guard configuration.pushedRequests != .off else { return }
        router.post(RouterPath(Self.pushedPath)) { request, _ in try await self.pushAuthorizationRequest(request) }
    }

    /// §2.1–2.3: the client authenticates as at the token endpoint; the request is checked as far
    /// as its client and redirect URI (the rest is checked when the page opens, as for any request)
    /// and kept, once usable, under a new `request_uri` for `pushed_request_ttl` seconds.
    private func pushAuthorizationRequest(_ request: Request) async throws -> Response {
        await state.count(\.pushedRequests)
        let (client, parameters): (SandboxClient, Parameters)
        switch try await authenticatedForm(request) {
        case .refused(let answer): return answer
        case .accepted(let form): (client, parameters) = form
        }
        func invalid(_ description: String) -> Response {
            SandboxRefusal.oauth("invalid_request", description).response
        }
        if parameters["request_uri"] != nil { return invalid("A pushed request cannot itself name a request_uri.") }
        if let name = parameters.repeated.first { return invalid("The parameter \(name) was sent more than once.") }
        guard let redirectURI = parameters["redirect_uri"], client.isRegistered(redirectURI: redirectURI) else {
            return invalid("The redirect_uri is missing or not registered for \(client.name).")
        }
        var kept = parameters.values.filter { $0.key != "client_secret" }
        kept["client_id"] = client.clientID
        let lifetime = configuration.pushedRequestTTL
        let requestURI = Self.requestURIPrefix + Base64URL.randomToken()
        await state.addPushed(
            .init(clientID: client.clientID, parameters: kept, expiresAt: Date().addingTimeInterval(TimeInterval(lifetime))),
            as: requestURI)
        return Self.json(.created, ["request_uri": requestURI, "expires_in": lifetime], headers: Self.noStore)
    }

    /// The parameters an authorization request stands for (§4): a pushed one's, taken once and
    /// only by the client that pushed it; else its own, unless pushed requests are required.
    /// Nil with the page that refuses it.
    func authorizationParameters(_ query: Parameters) async -> SandboxServer.Checked<Parameters> {
        await state.note(query.values.keys.sorted().joined(separator: " "), in: \.authorizationAddressParameters)
        guard let requestURI = query["request_uri"] else {
            guard configuration.pushedRequests == .required else { return .accepted(query) }
            return .refused(
                SandboxRefusal.page(
                    title: "Pushed requests only",
                    message: "This provider takes only authorization requests pushed to it first (RFC 9126); this one came in the address."
                ).response)
        }
        guard let pushed = await state.takePushed(requestURI, by: query["client_id"] ?? "") else {
            return .refused(
                SandboxRefusal.page(
                    title: "Request not known", message: "This sign-in request is not known here, or has expired. Start the sign-in again."
                ).response)
        }
        return .accepted(Parameters(pushed.parameters.map { (name: $0.key, value: $0.value) }))
    }
}

extension SandboxState {
    /// A pushed authorization request, until a page opens it or it expires.
    struct PushedRequest: Sendable {
        let clientID: String
        let parameters: [String: String]
        let expiresAt: Date
    }

    func addPushed(_ request: PushedRequest, as requestURI: String) {
        pushed[requestURI] = request
    }

    /// The request, once, for the client that pushed it: a `request_uri` is used by one page (§4), not
    /// after it expired, and not used up by another client naming it. Expired ones are let go meanwhile.
    func takePushed(_ requestURI: String, by clientID: String, now: Date = Date()) -> PushedRequest? {
        pushed = pushed.filter { $0.value.expiresAt > now }
        guard let request = pushed[requestURI], request.clientID == clientID else { return nil }
        pushed[requestURI] = nil
        return request
    }
}
