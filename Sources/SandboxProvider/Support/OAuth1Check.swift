import Crypto
import CryptoExtras
import Foundation

/// The sandbox's reading of an OAuth 1.0a request (RFC 5849 §3.4–§3.5), written
/// apart from OAuthCore's signer so that a misreading of the RFC shows up as a
/// refused signature rather than agreeing with itself.
struct OAuth1Check {
    /// A refusal, as the OAuth Problem Reporting extension words it.
    struct Problem: Error {
        let problem: String
        let advice: String
        var status: Int = 401
        var extra: [(String, String)] = []
    }

    /// Every parameter the request carries (query, form body, protocol parameters), oauth_signature left out.
    let parameters: [(String, String)]
    /// The protocol parameters, by name.
    let oauth: [String: String]
    let baseString: String

    /// Reads a request: `authorization` is its Authorization header, `query` the raw
    /// query string, `form` the raw body when it is a form.
    init(method: String, baseURI: String, authorization: String?, query: String?, form: String?) throws(Problem) {
        var all: [(String, String)] = []
        guard let fromQuery = FormEncoding.decode(query ?? ""), let fromForm = FormEncoding.decode(form ?? "") else {
            throw Problem(problem: "parameter_rejected", advice: "A percent escape in the request is broken.", status: 400)
        }
        all += fromQuery.map { ($0.name, $0.value) } + fromForm.map { ($0.name, $0.value) }
        if let authorization, authorization.lowercased().hasPrefix("oauth ") {
            guard let header = Self.headerParameters(String(authorization.dropFirst(6))) else {
                throw Problem(problem: "parameter_rejected", advice: "The Authorization header cannot be read.", status: 400)
            }
            all += header.filter { $0.0 != "realm" }
        }
        var oauth: [String: String] = [:]
        for (name, value) in all where name.hasPrefix("oauth_") {
            // §3.5: the protocol parameters are sent once, in one place.
            guard oauth[name] == nil else {
                throw Problem(
                    problem: "parameter_rejected", advice: "\(name) was sent more than once.", status: 400,
                    extra: [("oauth_parameters_rejected", name)])
            }
            oauth[name] = value
        }
        self.oauth = oauth
        parameters = all.filter { $0.0 != "oauth_signature" }
        let normalized = parameters.map { (Self.encode($0.0), Self.encode($0.1)) }
            .sorted { a, b in
                a.0 != b.0
                    ? Array(a.0.utf8).lexicographicallyPrecedes(Array(b.0.utf8))
                    : Array(a.1.utf8).lexicographicallyPrecedes(Array(b.1.utf8))
            }
            .map { $0.0 + "=" + $0.1 }.joined(separator: "&")
        baseString = method.uppercased() + "&" + Self.encode(baseURI) + "&" + Self.encode(normalized)
    }

    /// `name="value", name="value"` (§3.5.1): each name and value percent-encoded, so
    /// holding only unreserved characters and `%XY` escapes, and pairs separated by commas.
    /// Anything looser is refused: a checker that guessed would hide a client's encoding bugs.
    static func headerParameters(_ text: String) -> [(String, String)]? {
        var result: [(String, String)] = []
        var rest = Substring(text)
        func skipSpace() { rest = rest.drop { $0 == " " || $0 == "\t" } }
        while true {
            skipSpace()
            if rest.isEmpty { return result }
            if !result.isEmpty {
                guard rest.first == "," else { return nil }
                rest = rest.dropFirst()
                skipSpace()
            }
            guard let equals = rest.firstIndex(of: "=") else { return nil }
            let name = rest[..<equals]
            rest = rest[rest.index(after: equals)...]
            guard rest.first == "\"" else { return nil }
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: "\"") else { return nil }
            // realm is a quoted string of its own kind (RFC 2617), not a percent-encoded value.
            let value = name == "realm" ? String(rest[..<close]) : percentDecode(rest[..<close])
            guard let value, let plainName = percentDecode(name) else { return nil }
            result.append((plainName, value))
            rest = rest[rest.index(after: close)...]
        }
    }

    /// §3.6's encoding read back, refusing any byte it would have escaped.
    private static func percentDecode(_ text: Substring) -> String? {
        let allowed = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"):
                true
            default: false
            }
        }
        guard allowed else { return nil }
        return FormEncoding.decode("v=" + text)?.first?.value
    }

    /// §3.6.
    static func encode(_ text: String) -> String { FormEncoding.escape(text) }

    /// Checks the signature with the consumer's secret or key and the token's secret.
    func verify(consumer: SandboxConsumer, tokenSecret: String?, overHTTPS: Bool) throws(Problem) {
        guard let method = oauth["oauth_signature_method"], let signature = oauth["oauth_signature"] else {
            throw Problem(
                problem: "parameter_absent", advice: "The request is not signed.", status: 400,
                extra: [("oauth_parameters_absent", "oauth_signature&oauth_signature_method")])
        }
        let key = Self.encode(consumer.secret ?? "") + "&" + Self.encode(tokenSecret ?? "")
        switch method {
        case "HMAC-SHA1":
            guard consumer.secret != nil else {
                throw Problem(
                    problem: "signature_method_rejected", advice: "This consumer signs with RSA-SHA1.", status: 400,
                    extra: [("oauth_acceptable_signature_methods", "RSA-SHA1")])
            }
            let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(baseString.utf8), using: SymmetricKey(data: Data(key.utf8)))
            guard constantTimeEquals(Data(mac).base64EncodedString(), signature) else {
                throw Problem(problem: "signature_invalid", advice: "The signature does not match the request.")
            }
        case "RSA-SHA1":
            guard let pem = consumer.rsaPublicKey, let publicKey = try? _RSA.Signing.PublicKey(unsafePEMRepresentation: pem) else {
                throw Problem(
                    problem: "signature_method_rejected", advice: "This consumer has no RSA key registered.", status: 400,
                    extra: [("oauth_acceptable_signature_methods", "HMAC-SHA1")])
            }
            guard let bytes = Data(base64Encoded: signature),
                publicKey.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: bytes), for: Insecure.SHA1.hash(data: Data(baseString.utf8)),
                    padding: .insecurePKCS1v1_5)
            else { throw Problem(problem: "signature_invalid", advice: "The signature does not match the request.") }
        case "PLAINTEXT":
            // §3.4.4: the secrets themselves, so never over plain http — which is all the sandbox speaks.
            guard overHTTPS else {
                throw Problem(
                    problem: "signature_method_rejected", advice: "PLAINTEXT is accepted only over https.", status: 400,
                    extra: [("oauth_acceptable_signature_methods", "HMAC-SHA1&RSA-SHA1")])
            }
            guard constantTimeEquals(key, signature) else {
                throw Problem(problem: "signature_invalid", advice: "The signature does not match.")
            }
        default:
            throw Problem(
                problem: "signature_method_rejected", advice: "Unknown signature method.", status: 400,
                extra: [("oauth_acceptable_signature_methods", "HMAC-SHA1&RSA-SHA1")])
        }
    }
}
