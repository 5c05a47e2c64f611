import FoundationEssentials
import OAuthCore

/// How `latchkey token` prints a token, for what reads it.
public enum TokenFormat: String, Sendable, CaseIterable {
    /// The token and a newline, as `gh auth token` prints it.
    case token
    /// An HTTP header line: `Authorization: Bearer …`.
    case header
    /// `{"token": …, "token_type": …, "expires_at": …, "expires_in": …, "scopes": […]}`.
    case json
    /// kubectl's ExecCredential, for a kubeconfig's exec plugin entry.
    case execCredential = "exec-credential"

    /// The text to print. `environment`: kubectl's `KUBERNETES_EXEC_INFO` names the apiVersion it speaks.
    public func text(_ token: AgentToken, now: Date = Date(), environment: [String: String] = [:]) -> String {
        let expiry = token.expiresAt.map { JSONValue.string($0.ISO8601Format()) } ?? .null
        switch self {
        case .token:
            return token.accessToken + "\n"
        case .header:
            // A DPoP-bound token's proof is a header of its own (RFC 9449 §7.1).
            return "Authorization: \(Self.scheme(token.tokenType)) \(token.accessToken)\n" + (token.proof.map { "DPoP: \($0)\n" } ?? "")
        case .json:
            let remaining = token.expiresAt.map { JSONValue.number(String(max(0, Int($0.timeIntervalSince(now))))) } ?? .null
            return JSONValue.object(
                [
                    .init("token", .string(token.accessToken)), .init("token_type", .string(Self.scheme(token.tokenType))),
                    .init("expires_at", expiry), .init("expires_in", remaining),
                    .init("scopes", .array(token.scopes.map(JSONValue.string))),
                ] + (token.proof.map { [.init("dpop_proof", .string($0))] } ?? [])
            ).text() + "\n"
        case .execCredential:
            var status: [JSONValue.Member] = [.init("token", .string(token.accessToken))]
            if expiry != .null { status.append(.init("expirationTimestamp", expiry)) }
            return JSONValue.object([
                .init("apiVersion", .string(Self.apiVersion(environment))), .init("kind", .string("ExecCredential")),
                .init("status", .object(status)),
            ]).text() + "\n"
        }
    }

    /// `Bearer`, whatever case the provider wrote it in (GitHub: "bearer"); other schemes as given.
    static func scheme(_ type: String) -> String { type.lowercased() == "bearer" ? "Bearer" : type }

    /// The apiVersion kubectl asked in `KUBERNETES_EXEC_INFO`, else v1.
    static func apiVersion(_ environment: [String: String]) -> String {
        let asked = environment["KUBERNETES_EXEC_INFO"].flatMap { try? JSONValue(parsing: Array($0.utf8)) }?["apiVersion"]?.string
        return asked.flatMap { $0.hasPrefix("client.authentication.k8s.io/") ? $0 : nil } ?? "client.authentication.k8s.io/v1"
    }
}
