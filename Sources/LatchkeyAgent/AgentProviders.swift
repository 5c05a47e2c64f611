import AgentCore
import FoundationEssentials
import LatchkeyCore
import OAuthCore

/// What the agent says of providers (their state, never a secret) and the
/// sign-ins it shows when a program asks for one.
final class AgentProviders: Sendable {
    let catalog: ProviderCatalog
    let store: any TokenStore
    let secrets: any ClientSecretStore
    let broker: TokenBroker
    /// Whether there is a display to show a sign-in on: the questions' word on it (`ConsentChildren`).
    let display: ConsentChildren
    /// What the sign-in's process is told of waits, as the agent was (`--network-timeout`, `--keyring-timeout`).
    let waitArguments: [String]

    init(
        catalog: ProviderCatalog, store: any TokenStore, secrets: any ClientSecretStore, broker: TokenBroker, waitArguments: [String],
        display: ConsentChildren
    ) {
        self.waitArguments = waitArguments
        self.display = display
        self.catalog = catalog
        self.store = store
        self.secrets = secrets
        self.broker = broker
    }

    /// Each account of each provider: what GetToken takes for it (the provider's id, or
    /// `provider/account` when it has several), the provider's name, the account's label ("-" when
    /// none is known) and its state.
    /// `allowed`: the accounts answered, by key and the person signed in under it (all when nil).
    func accounts(allowed: [(key: String, person: String?)]? = nil) async -> [(
        named: String, name: String, label: String, state: SignInState
    )] {
        var rows: [(named: String, name: String, label: String, state: SignInState)] = []
        for (id, name) in catalog.availableProviders where !SandboxProviders.contains(id) {
            let accounts = await SignInStatus.accounts(of: id, in: LatchkeyFiles.accounts, store: store)
            let people = LatchkeyFiles.accounts.entry(for: id)
            for account in accounts
            where allowed.map({
                $0.contains { $0.key == account.key && $0.person != nil && $0.person == people.account(key: account.key)?.subject }
            })
                ?? true
            {
                let state = await SignInStatus.state(
                    of: id, key: account.key, catalog: catalog, store: store, secrets: secrets, isSandbox: false)
                rows.append((accounts.count > 1 ? "\(id)/\(account.label)" : id, name, account.label, state))
            }
        }
        return rows
    }

    /// ListProviders' rows, as version 1 has always given them: id (or `provider/account`), name, and
    /// the state's sentence, with the account's label after it when the provider has one account.
    func list() async -> [(id: String, name: String, state: String)] {
        await accounts().map { row in
            let oneAccount = !row.named.contains("/")
            return (row.named, row.name, oneAccount && row.label != "-" ? "\(row.state.sentence) (\(row.label))" : row.state.sentence)
        }
    }

    /// A sign-in to `id`, shown where this session's display is (the provider's choice of window or
    /// browser) by a `latchkey-app agent sign-in` of its own; nil once signed in, else why not.
    func signIn(_ id: String) async -> AgentRefusal? {
        let configuration: ProviderConfiguration
        do { configuration = try await broker.provider(id: id).configuration } catch { return error }
        let noDisplay = AgentRefusal(
            .denied, "Latchkey's agent has no display to show a sign-in on. Sign in where there is one: latchkey --provider \(id)")
        guard await display.canAsk else { return noDisplay }
        let child: AppChild
        do { child = try AppChild(AgentHelper.signIn + waitArguments + ["--", configuration.id]) } catch {
            return AgentRefusal(.failed, "\(error)")
        }
        child.closeInput()
        let (output, exit) = await BlockingWork.run { child.finish() }
        // What the window keeps, the agent reads at its next use of the account.
        await broker.storeChangedElsewhere()
        let sentence = output.split(separator: "\n").first.map(String.init) ?? ""
        switch exit {
        case .done: return nil
        case .noDisplay:
            display.foundNoDisplay()
            return noDisplay
        case .cancelled: return AgentRefusal(.denied, "The sign-in to \(configuration.displayName) was cancelled.")
        case .failed, .misused:
            return AgentRefusal(.failed, sentence.isEmpty ? "The sign-in to \(configuration.displayName) ended unfinished." : sentence)
        }
    }
}
