import AgentCore
import ArgumentParser
import FoundationEssentials
import Glibc
import LatchkeyCore
import LatchkeyServices
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
            (github.com, gitlab.com in the presets), of the account LATCHKEY_ACCOUNT names, else the one the provider's \
            "git_accounts" rules name for the remote or the repository's directory, else the one in use. store: nothing (the sign-in is Latchkey's). erase: the token was \
            refused; the next get renews it, or says to sign in again. A sign-in is never removed.
            """)

    @Argument(help: "get, store or erase (as git calls it).")
    var operation: String

    @OptionGroup var interactionOption: InteractionOption

    @OptionGroup var waits: Waits

    /// What a token should still be good for when git gets it: a push of a large repository takes a
    /// while. At most half of what the provider's tokens live (`AgentRequest.minimumWithinLifetime`).
    static let minimumValidity = 300

    func run() throws {
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: .error) }
        let credential = GitCredential(parsing: String(decoding: Descriptor.standardInput.readAll(limit: 65536), as: UTF8.self))
        let catalog = LatchkeyCommand.catalog
        let providers = catalog.availableProviders.compactMap { entry in
            (try? catalog.draft(named: entry.id)).map {
                (id: entry.id, gitHosts: $0.gitHosts, username: $0.gitUsername, accounts: $0.gitAccounts)
            }
        }
        guard let id = credential.provider(among: providers.map { ($0.id, $0.gitHosts) }),
            let chosen = providers.first(where: { $0.id == id })
        else { return }
        // Which account: LATCHKEY_ACCOUNT, else the provider's rules (the remote, the repository's directory), else the one in use.
        let environment = ProcessInfo.processInfo.environment
        let account =
            environment["LATCHKEY_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
            ?? credential.account(
                rules: chosen.accounts, directory: FileManager.default.currentDirectoryPath, home: environment["HOME"] ?? PathText.home)
        let refused = RefusedTokens(directory: LatchkeyFiles.stateDirectory.appendingPathComponent("refused"))
        let refusedKey = account.map { "\(id)/\($0)" } ?? id
        switch operation {
        case "get":
            switch token(for: id, account: account, refused: refused, refusedKey: refusedKey) {
            case .success(let token):
                Descriptor.standardOutput.write(GitCredential.answer(username: chosen.username ?? "oauth2", token: token))
            case .failure(let refusal):
                // Nothing on stdout: git asks its next helper, or the person.
                Descriptor.standardError.write("latchkey: \(refusal.sentence)\n")
            }
        case "erase":
            if let password = credential.attributes["password"], !password.isEmpty { refused.refuse(password, provider: refusedKey) }
        default:
            return  // store, and whatever a later git asks: nothing to do (git-credential(1) says to ignore them)
        }
    }

    /// The token for `id`'s `account` (nil: the one in use), renewed when due or when the server refused
    /// it: from the agent when one runs. Refused tokens are noted under `refusedKey`.
    private func token(for id: String, account: String?, refused: RefusedTokens, refusedKey: String) -> Result<AgentToken, AgentRefusal> {
        let mayAsk = Self.mayAsk(interactionOption)
        var answer = ask(id, account: account, minimum: Self.minimumValidity, mayAsk: mayAsk)
        if case .success(let token) = answer, refused.isRefused(token.accessToken, provider: refusedKey) {
            answer = ask(id, account: account, minimum: AgentRequest.renewNow, mayAsk: mayAsk)
            if case .success(let renewed) = answer, refused.isRefused(renewed.accessToken, provider: refusedKey) {
                return .failure(
                    AgentRefusal(
                        .signedOut, "The server refused your \(id) token and it cannot be renewed. Sign in again: latchkey --provider \(id)"
                    ))
            }
            refused.clear(provider: refusedKey)
        }
        return answer
    }

    /// Whether the agent may ask the person about git: not with `--no-interaction`, `CI`, or git's
    /// `credential.interactive=false` (read only when the others did not say: git config is a program to start).
    static func mayAsk(_ option: InteractionOption) -> Bool {
        guard option.decide().mayAsk else { return false }
        return !Interaction.gitCredentialInteractiveIsFalse(environment: ProcessInfo.processInfo.environment)
    }

    private func ask(_ id: String, account: String?, minimum: Int, mayAsk: Bool) -> Result<AgentToken, AgentRefusal> {
        // What git needs, where the provider file says: git's token carries no more (where the provider can narrow one).
        let scopes = (try? LatchkeyCommand.catalog.draft(named: id))?.gitScopes ?? []
        var request = AgentRequest(
            target: .provider(id), account: account, minimumValidity: minimum, scopes: scopes, applicationHint: "git")
        // A wish: a provider whose tokens live five minutes or less gives what it can, renewed once per half of it.
        request.minimumWithinLifetime = true
        request.interactive = mayAsk
        if let answer = AgentClient.ask(request) { return answer }
        // No agent: the work is done here, as `latchkey token` does it.
        let tokens = TokenRequest(resource: nil, provider: id, account: account, minimumValidity: max(minimum, 0), waits: waits)
        do {
            let provider = try tokens.providerQuietly()
            let renewNow = minimum == AgentRequest.renewNow
            let token = try wait {
                try await provider.waitUntilReachable()
                let session = try await provider.session(forAccount: account)
                if !scopes.isEmpty, provider.configuration.narrowing != .none {
                    return try await session.narrowedToken(Narrowing(scopes: scopes), validFor: TimeInterval(max(minimum, 0)))
                }
                return renewNow
                    ? try await session.renewedToken() : try await session.freshToken(validFor: TimeInterval(minimum), withinLifetime: true)
            }
            return .success(AgentToken(token, of: provider.configuration))
        } catch {
            return .failure(AgentRefusal(error))
        }
    }
}
