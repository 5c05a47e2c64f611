import Foundation

/// Does with the sandbox's sign-in page what a person in a browser would:
/// open it, fill in the form, press a button.
public enum SandboxPages {
    /// The hidden request id of the sign-in form on a page.
    public static func requestID(in page: String) -> String? {
        guard let range = page.range(of: #"name="request_id" value="([^"]+)""#, options: .regularExpression) else { return nil }
        return page[range].split(separator: "\"").dropFirst(3).first.map(String.init)
    }

    /// Where the sign-in form posts to.
    public static func formAction(in page: String) -> String? {
        guard let range = page.range(of: #"<form method="post" action="([^"]+)""#, options: .regularExpression) else { return nil }
        return page[range].split(separator: "\"").dropFirst(3).first.map(String.init)
    }

    /// Opens `authorizationURL` and answers its form; returns the sandbox's answer
    /// (a 302 to the redirect URI, or the page again).
    public static func answer(
        _ authorizationURL: String, action: String = "allow", username: String = "ada", password: String = "engine",
        http: HTTPClient = HTTPClient()
    ) async throws -> Reply {
        let page = try await http.get(authorizationURL)
        guard page.status == 200, let id = requestID(in: page.text), let url = URLComponents(string: authorizationURL)
        else {
            throw SandboxTestError("No sign-in form at the authorization URL: HTTP \(page.status) \(page.text.prefix(200))")
        }
        // The form posts back to its own path, which differs from provider to provider (--behave-like).
        let path = formAction(in: page.text) ?? "/authorize"
        let formAction = "\(url.scheme ?? "http")://\(url.host ?? "127.0.0.1"):\(url.port ?? 80)\(path)"
        return try await http.postForm(
            formAction, [("request_id", id), ("username", username), ("password", password), ("action", action)])
    }
}

extension RunningSandbox {
    /// Makes the next answers of an endpoint misbehave, e.g. `setFault("token", "500")`.
    public func setFault(_ endpoint: String, _ kind: String, count: Int = 1, delaySeconds: Double? = nil) async throws {
        var json = #"{"endpoint": "\#(endpoint)", "kind": "\#(kind)", "count": \#(count)"#
        if let delaySeconds { json += #", "delay_seconds": \#(delaySeconds)"# }
        json += "}"
        let reply = try await HTTPClient().send(
            method: "POST", "\(baseURL)/_admin/faults", headers: ["Content-Type": "application/json"], body: Data(json.utf8))
        guard reply.status == 204 else { throw SandboxTestError("Fault not set: HTTP \(reply.status) \(reply.text)") }
    }

    /// What the sandbox counted: token_requests, refresh_grants, userinfo_requests, ….
    public func statistics() async throws -> [String: Int] {
        let reply = try await HTTPClient().get("\(baseURL)/_admin/stats")
        return reply.json.compactMapValues { $0 as? Int }
    }
}
