import AgentCore
import ArgumentParser
import FoundationEssentials
import LatchkeyCore
import OAuthCore

/// `--dpop-url`, `--dpop-method`, `--dpop-nonce`: the request a DPoP proof is signed for, to go with
/// a token bound to the sign-in's key (RFC 9449 §7). The key never leaves Latchkey; the proof does.
struct ProofOptions: ParsableArguments {
    @Option(
        name: .customLong("dpop-url"),
        help: ArgumentHelp(
            "With a token bound to a DPoP key (token_type DPoP), a proof for a request to this URL as well "
                + "(--format header prints its DPoP line, json its dpop_proof).",
            valueName: "url"))
    var url: String?

    @Option(name: .customLong("dpop-method"), help: ArgumentHelp("The method of that request (default GET).", valueName: "method"))
    var method = "GET"

    @Option(
        name: .customLong("dpop-nonce"), help: ArgumentHelp("The nonce the resource sent in its DPoP-Nonce header.", valueName: "nonce"))
    var nonce: String?

    func validate(format: TokenFormat) throws {
        if url != nil, format != .header, format != .json {
            throw ValidationError("--dpop-url goes with --format header or json, which print the proof beside the token.")
        }
        guard let url else {
            if nonce != nil || method != "GET" { throw ValidationError("--dpop-method and --dpop-nonce go with --dpop-url.") }
            return
        }
        if let problem = (URL(string: url).map { AgentRequest.ProofRequest(method: method, url: $0, nonce: nonce).problem })
            ?? "A DPoP proof's URL is an absolute http or https URL."
        {
            throw ValidationError(problem)
        }
    }

    var value: AgentRequest.ProofRequest? {
        url.flatMap(URL.init(string:)).map { AgentRequest.ProofRequest(method: method, url: $0, nonce: nonce) }
    }
}

extension AgentToken {
    /// `token` as printed, with a DPoP proof for `asked` signed here with `session`'s key (no agent runs),
    /// where the agent would sign one: not for the provider's own endpoints, nor outside the `resource`
    /// the token is for.
    static func proved(
        _ token: Token, of configuration: ProviderConfiguration, session: AuthSession, for asked: AgentRequest.ProofRequest?,
        resource: URL?
    ) throws -> AgentToken {
        var answer = AgentToken(token, of: configuration)
        guard let asked else { return answer }
        if let problem = asked.problem(for: configuration, resource: resource ?? configuration.resource) {
            throw AgentRefusal(.invalid, problem)
        }
        answer.proof = try wait { try await session.proof(for: token, method: asked.method, url: asked.url, nonce: asked.nonce) }
        return answer
    }
}
