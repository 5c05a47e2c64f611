import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// Who is asking at the token and revocation endpoints.
extension SandboxServer {
    // MARK: Client authentication (RFC 6749 §2.3)

    struct ClientAuthenticationError: Error {
        let error: String
        let description: String
        let basicChallenge: Bool

        var response: Response { SandboxRefusal.oauth(error, description, basicChallenge: basicChallenge).response }
    }

    /// A back-channel request's form and its authenticated client, or the JSON answer that refuses it:
    /// a body that is not a form (400), a client that does not authenticate (401). As the device
    /// authorization and pushed request endpoints take them.
    func authenticatedForm(_ request: Request) async throws -> Checked<(client: SandboxClient, parameters: Parameters)> {
        guard let parameters = try await Self.formBody(request) else {
            return .refused(SandboxRefusal.oauth("invalid_request", "The body must be a form.").response)
        }
        switch await authenticateClient(request, parameters) {
        case .success(let client): return .accepted((client, parameters))
        case .failure(let error):
            return .refused(SandboxRefusal.oauth(error.error, error.description, status: .unauthorized).response)
        }
    }

    func authenticateClient(_ request: Request, _ parameters: Parameters) async -> Result<SandboxClient, ClientAuthenticationError> {
        func failure(_ error: String, _ description: String, basic: Bool = false) -> Result<SandboxClient, ClientAuthenticationError> {
            .failure(.init(error: error, description: description, basicChallenge: basic))
        }
        let header = request.headers[.authorization]
        let bodySecret = parameters["client_secret"]
        if parameters["client_assertion_type"] != nil || parameters["client_assertion"] != nil {
            guard bodySecret == nil, header?.lowercased().hasPrefix("basic ") != true else {
                return failure("invalid_request", "Use one client authentication method, not two.")
            }
            return await authenticateAssertion(parameters)
        }
        if let header, header.lowercased().hasPrefix("basic ") {
            guard likeness.acceptsBasicAuthentication else {
                // As LinkedIn answers: the secret is looked for in the body only.
                return failure("invalid_request", "A required parameter \"client_secret\" is missing.")
            }
            guard bodySecret == nil else {
                return failure("invalid_request", "Use one client authentication method, not two.")
            }
            guard let credentials = Self.basicCredentials(header) else {
                return failure("invalid_client", "The Authorization header is not valid Basic credentials.", basic: true)
            }
            if let bodyID = parameters["client_id"], bodyID != credentials.id {
                return failure("invalid_request", "client_id in the body differs from the authenticated client.")
            }
            guard let client = await lookUpClient(credentials.id), let secret = client.clientSecret,
                constantTimeEquals(secret, credentials.secret)
            else {
                return failure("invalid_client", "Client authentication failed.", basic: true)
            }
            return .success(client)
        }
        guard let clientID = parameters["client_id"], let client = await lookUpClient(clientID) else {
            return failure("invalid_client", "Client authentication failed: unknown or missing client_id.")
        }
        if client.jwks != nil {
            return failure("invalid_client", "This client authenticates with private_key_jwt: send a client_assertion.")
        }
        switch (client.clientSecret, bodySecret) {
        case (nil, nil):
            guard likeness.acceptsPublicClients else {
                return failure("invalid_request", "A required parameter \"client_secret\" is missing.")
            }
            return .success(client)
        case (nil, _?):
            return failure("invalid_client", "This public client has no secret to send.")
        case (_?, nil):
            return failure("invalid_client", "This confidential client must authenticate.")
        case (let secret?, let sent?):
            guard constantTimeEquals(secret, sent) else {
                return failure("invalid_client", "Client authentication failed.")
            }
            return .success(client)
        }
    }

    /// A client of the configuration, one that registered itself, or one whose id is the URL of its metadata document.
    func lookUpClient(_ id: String) async -> SandboxClient? {
        if Self.secondServer { await state.note(id, in: \.secondServerClientIDs) }
        // The built-in clients are the first server's; a registration belongs to the server it was made at.
        if !Self.secondServer, let configured = configuration.client(id) { return configured }
        if let registration = await state.registration(id), (registration.issuer ?? issuer) == issuer { return registration.client }
        return await clientFromMetadataDocument(id)
    }

    /// RFC 6749 §2.3.1: id and secret are form-encoded, then joined by a colon, then base64.
    static func basicCredentials(_ header: String) -> (id: String, secret: String)? {
        let encoded = header.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
        guard let data = Data(base64Encoded: encoded), let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":"),
            let id = FormEncoding.decode("i=" + text[..<colon])?.first?.value,
            let secret = FormEncoding.decode("s=" + text[text.index(after: colon)...])?.first?.value
        else { return nil }
        return (id, secret)
    }
}
