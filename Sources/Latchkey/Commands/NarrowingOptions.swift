import AgentCore
import ArgumentParser
import FoundationEssentials
import OAuthCore

/// `--scope` and `--audience`: less than the whole sign-in, for `latchkey token` (the token) and
/// `latchkey agent allow` (what a program is allowed).
struct NarrowingOptions: ParsableArguments {
    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp(
            "This scope alone (repeat it, or name several in one, space-separated): the token carries no more where the "
                + "provider can narrow one. Default: whatever the sign-in allows.",
            valueName: "scope"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("This resource alone (RFC 8707; https://…), where the provider can narrow a token.", valueName: "url"))
    var audience: String?

    func validate() throws {
        if let problem = AgentRequest(target: .provider(""), scopes: value.scopes).scopesProblem { throw ValidationError(problem) }
        if let audience, AgentRequest.resourceURL(audience) == nil {
            throw ValidationError("--audience must be a resource's URL (https://… without a fragment), not “\(audience)”.")
        }
    }

    var value: Narrowing {
        Narrowing(
            scopes: scopes.flatMap { $0.split(separator: " ").map(String.init) }, resource: audience.flatMap(AgentRequest.resourceURL))
    }
}
