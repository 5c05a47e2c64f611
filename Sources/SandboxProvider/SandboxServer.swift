import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// An offline OAuth 2.0 / OpenID Connect authorization server on loopback.
///
/// Strict by the RFCs, so that a client that works here has done the protocol
/// right: exact redirect URIs, single-use short-lived codes bound to client,
/// redirect URI, PKCE challenge, scope and nonce, rotating refresh tokens, and
/// RFC 6749 §5.2 errors.
public final class SandboxServer: Sendable {
    public let configuration: SandboxConfiguration
    /// Which provider's quirks it reproduces; `.standard` is RFC-strict.
    public let likeness: ProviderLikeness
    let state: SandboxState
    let signer: IDTokenSigner
    let logger: Logger
    /// Which of the MCP authorization specification's situations it plays (usually none).
    public let situation: SpecSituation
    private let baseURL = Mutex<String>("http://127.0.0.1")

    public init(
        configuration: SandboxConfiguration = .defaults, likeness: ProviderLikeness = .standard, faults: [Fault] = [],
        stateFile: URL? = nil, idTokenAlgorithm: String? = nil, situation: SpecSituation = .usual, logger: Logger
    ) throws {
        self.situation = situation
        // The imitated provider's algorithm unless told otherwise.
        let idTokenAlgorithm = idTokenAlgorithm ?? likeness.idTokenAlgorithm
        guard let algorithm = IDTokenSigner.Algorithm(rawValue: idTokenAlgorithm) else {
            throw SandboxConfigurationError("ID tokens are signed with ES256 or RS256, not \(idTokenAlgorithm).")
        }
        self.signer = try IDTokenSigner(algorithm: algorithm)
        self.configuration = configuration
        self.likeness = likeness
        self.state = try SandboxState(faults: faults, stateFile: stateFile)
        self.logger = logger
    }

    /// The base URL the server listens on.
    var base: String { baseURL.withLock { $0 } }

    /// The issuer identifier: the base URL, under the path the imitated provider uses
    /// (with `{tenantid}` left in, as Microsoft's `/common` discovery document has it).
    var issuer: String { Self.secondServer ? base + Self.secondServerPath : likeness.issuer(base: base) + situation.issuerPath }

    /// The issuer an ID token names: for a tenant-specific provider, the user's tenant.
    var tokenIssuer: String {
        Self.secondServer ? issuer : likeness.issuer(base: base, tenant: likeness.tenantID) + situation.issuerPath
    }

    /// Binds to `127.0.0.1:port` (0 picks a free port), calls `onListening`
    /// with the base URL once connections are accepted, and serves until cancelled.
    public func run(port: Int, onListening: @escaping @Sendable (String) -> Void) async throws {
        let app = Application(
            router: makeRouter(),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "latchkey-sandbox"),
            onServerRunning: { [self] channel in
                let url = "http://127.0.0.1:\(channel.localAddress?.port ?? port)"
                self.baseURL.withLock { $0 = url }
                onListening(url)
            },
            logger: logger
        )
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    func makeRouter() -> Router<SandboxRequestContext> {
        let router = Router(context: SandboxRequestContext.self)
        router.middlewares.add(RequestLogMiddleware(logger: logger))
        // The imitated provider's own paths, so a preset pointed here differs only in its host.
        // Each endpoint's file registers its routes.
        addDiscovery(to: router)
        addAuthorization(to: router)
        addToken(to: router)
        addDevice(to: router)
        addPushedRequests(to: router)
        addRevocation(to: router)
        addIntrospection(to: router)
        addUserInfo(to: router)
        addRegistration(to: router)
        addSecondServer(to: router)
        addEnterpriseGrants(to: router)
        addProtectedResources(to: router)
        addOAuth1(to: router)
        addAdministration(to: router)
        // Last: GitHub's and GitLab's profile pages sit right under the root.
        addPages(to: router)
        return router
    }

    // MARK: Helpers

    /// A well-known location: every request to it noted (where a client looked, in order), and
    /// answered by `answer` where the situation serves it, else 404.
    func addWellKnown(
        _ path: String, served: Bool, to router: Router<SandboxRequestContext>,
        answer: @escaping @Sendable (Request, SandboxRequestContext) async throws -> Response
    ) {
        router.get(RouterPath(path)) { request, context in
            await self.state.note(path, in: \.wellKnownPaths)
            guard served else { return SandboxRefusal.oauth("not_found", nil, status: .notFound).response }
            return try await answer(request, context)
        }
    }

    static let noStore: HTTPFields = [.cacheControl: "no-store", HTTPField.Name("Pragma")!: "no-cache"]

    static func json(_ status: HTTPResponse.Status, _ object: Any, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func form(_ status: HTTPResponse.Status, _ fields: [(String, Any)]) -> Response {
        var headers = noStore
        headers[.contentType] = "application/x-www-form-urlencoded; charset=utf-8"
        let body = FormEncoding.encode(fields.map { ($0.0, "\($0.1)") })
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func html(_ status: HTTPResponse.Status, _ page: String) -> Response {
        var headers = noStore
        headers[.contentType] = "text/html; charset=utf-8"
        // No form-action: browsers apply it to the redirect after the form too,
        // which would block the way back to the app.
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    func redirect(to redirectURI: String, parameters: [(String, String)]) -> Response {
        let separator = redirectURI.contains("?") ? "&" : "?"
        // RFC 9207: the issuer rides along so a client can tell which server answered.
        let iss = situation.iss.map { $0.value(issuer: issuer) } ?? (likeness.sendsIssuerInRedirect ? issuer : nil)
        let query = FormEncoding.encode(parameters + (iss.map { [("iss", $0)] } ?? []))
        return Response(status: .found, headers: [.location: redirectURI + separator + query, .cacheControl: "no-store"])
    }

    func redirect(to redirectURI: String, error: String, description: String, state: String?) -> Response {
        var parameters = [("error", error), ("error_description", description)]
        if let state { parameters.append(("state", state)) }
        return redirect(to: redirectURI, parameters: parameters)
    }

    static func formBody(_ request: Request) async throws -> Parameters? {
        guard let type = request.headers[.contentType]?.lowercased(),
            type.hasPrefix("application/x-www-form-urlencoded")
        else { return nil }
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        return FormEncoding.decode(String(buffer: buffer)).map(Parameters.init)
    }

    static func isBase64URLCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_")
    }

    /// RFC 7636 §4.1: unreserved characters only.
    static func isVerifierCharacter(_ c: Character) -> Bool {
        isBase64URLCharacter(c) || c == "." || c == "~"
    }
}
