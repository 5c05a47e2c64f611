import HTTPTypes
import Hummingbird

/// Every way the sandbox says no to a request, as one type that renders itself (`response`): the
/// JSON error object a client reads (RFC 6749 §5.2 at the token and revocation endpoints, RFC 7591
/// §3.2.2 at registration, RFC 8628 and RFC 9126 at the device and pushed-request endpoints), and
/// the page a person reads when a request cannot go back to its client. (A refusal that goes back
/// to the client is a redirect with `error=`; a protected resource's is a `WWW-Authenticate`
/// challenge: each is written where it is decided.)
enum SandboxRefusal: Error {
    /// An OAuth error object, never cached: 400, or 401 for a client that failed to authenticate
    /// (`invalid_client`, with a Basic challenge when it tried Basic), unless `status` says otherwise.
    case oauth(_ error: String, _ description: String?, status: HTTPResponse.Status? = nil, basicChallenge: Bool = false)
    /// A page for the person.
    case page(title: String, message: String, status: HTTPResponse.Status = .badRequest)

    var response: Response {
        switch self {
        case .oauth(let error, let description, let status, let basicChallenge):
            var headers = SandboxServer.noStore
            if basicChallenge { headers[.wwwAuthenticate] = #"Basic realm="latchkey-sandbox""# }
            var body: [String: Any] = ["error": error]
            if let description { body["error_description"] = description }
            return SandboxServer.json(status ?? (error == "invalid_client" ? .unauthorized : .badRequest), body, headers: headers)
        case .page(let title, let message, let status):
            return SandboxServer.html(status, Pages.error(title: title, message: message))
        }
    }
}
