import AgentCore
import ArgumentParser
import FoundationEssentials
import Glibc
import LatchkeyCore
import Logging
import OAuthCore

/// `latchkey git-credential get|store|erase`: git's credential helper, installed as
/// `git-credential-latchkey` (so `git config credential.helper latchkey` finds it).
/// `get` answers for the hosts a provider declares (`git_hosts`) with a token renewed
/// when due; `store` changes nothing (the sign-in is Latchkey's); `erase` notes the
/// refused token so that the next `get` renews it, and never removes a sign-in.
struct GitCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "git's credential helper: a token for the hosts a provider declares (git config credential.helper latchkey).",
        discussion: """
            get: a user name and a token renewed when due, for a remote on a host a provider file names in "git_hosts" \
            (github.com, gitlab.com in the presets). store: nothing (the sign-in is Latchkey's). erase: the token was \
            refused; the next get renews it, or says to sign in again. A sign-in is never removed.
            """)

    @Argument(help: "get, store or erase (as git calls it).")
    var operation: String

    @OptionGroup var waits: Waits

    /// What a token must still be good for when git gets it: a push of a large repository takes a while.
    static let minimumValidity = 300

    func run() throws {
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: .error) }
        let credential = GitCredential(parsing: String(decoding: Descriptor.standardInput.readAll(limit: 65536), as: UTF8.self))
        let catalog = LatchkeyCommand.catalog
        let providers = catalog.availableProviders.compactMap { entry in
            (try? catalog.draft(named: entry.id)).map { (id: entry.id, gitHosts: $0.gitHosts, username: $0.gitUsername) }
        }
        guard let id = credential.provider(among: providers.map { ($0.id, $0.gitHosts) }) else { return }
        let refused = RefusedTokens(directory: LatchkeyFiles.stateDirectory.appendingPathComponent("refused"))
        switch operation {
        case "get":
            let username = providers.first { $0.id == id }?.username ?? "oauth2"
            switch token(for: id, refused: refused) {
            case .success(let token):
                Descriptor.standardOutput.write(GitCredential.answer(username: username, token: token))
            case .failure(let refusal):
                // Nothing on stdout: git asks its next helper, or the person.
                Descriptor.standardError.write("latchkey: \(refusal.sentence)\n")
            }
        case "erase":
            if let password = credential.attributes["password"], !password.isEmpty { refused.refuse(password, provider: id) }
        default:
            return  // store, and whatever a later git asks: nothing to do (git-credential(1) says to ignore them)
        }
    }

    /// The token for `id`, renewed when due or when the server refused it: from the agent when one runs.
    private func token(for id: String, refused: RefusedTokens) -> Result<AgentToken, AgentRefusal> {
        var answer = ask(id, minimum: Self.minimumValidity)
        if case .success(let token) = answer, refused.isRefused(token.accessToken, provider: id) {
            answer = ask(id, minimum: AgentRequest.renewNow)
            if case .success(let renewed) = answer, refused.isRefused(renewed.accessToken, provider: id) {
                return .failure(
                    AgentRefusal(
                        .signedOut, "The server refused your \(id) token and it cannot be renewed. Sign in again: latchkey --provider \(id)"
                    ))
            }
            refused.clear(provider: id)
        }
        return answer
    }

    private func ask(_ id: String, minimum: Int) -> Result<AgentToken, AgentRefusal> {
        let request = AgentRequest(target: .provider(id), minimumValidity: minimum, applicationHint: "git")
        if let answer = AgentClient.ask(request) { return answer }
        // No agent: the work is done here, as `latchkey token` does it.
        let tokens = TokenRequest(resource: nil, provider: id, minimumValidity: max(minimum, 0), waits: waits)
        do {
            let provider = try tokens.providerQuietly()
            let renewNow = minimum == AgentRequest.renewNow
            let token = try wait {
                renewNow ? try await provider.session.renewedToken() : try await provider.freshToken(validFor: TimeInterval(minimum))
            }
            return .success(AgentToken(token, of: provider.configuration))
        } catch {
            return .failure(AgentRefusal(error))
        }
    }
}
