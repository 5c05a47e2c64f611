import ArgumentParser
import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore

/// `latchkey status`: each provider, its accounts and their sign-ins' future, never a token.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "List each provider and its accounts: each sign-in's state, when its token and the sign-in itself end, and who used it.",
        discussion: """
            Reads what is kept and asks no provider anything. For each account: the access token's expiry, when it was signed in \
            and last renewed, when the sign-in ends where that is known (the provider said, or its file's idle_lifetime or \
            session_lifetime), where the key its tokens are bound to is kept (DPoP), and the programs that got its tokens last. \
            --format json prints one JSON document (docs/status.md).
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(help: "text (a table, with a line or two under each account) or json (for scripts: docs/status.md).")
    var format: Format = .text

    @OptionGroup var keyring: KeyringWait

    func run() throws {
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: .error) }
        let services = Services(keyringTimeout: keyring.seconds)
        let (catalog, store, secrets) = (services.catalog, services.tokens, services.secrets)
        let accounts = LatchkeyFiles.accounts
        let grants = LatchkeyFiles.allowedPrograms.all
        let listed = wait { () async -> [AccountStatus] in
            var listed: [AccountStatus] = []
            for (id, name) in catalog.availableProviders {
                for account in await SignInStatus.accounts(of: id, in: accounts, store: store) {
                    let (state, token, configuration) = await SignInStatus.read(
                        of: id, key: account.key, catalog: catalog, store: store, secrets: secrets, isSandbox: SandboxProviders.contains(id)
                    )
                    listed.append(
                        AccountStatus(
                            provider: id, providerName: name, account: account.label == "-" ? nil : account.label, inUse: account.inUse,
                            state: state, token: token, configuration: configuration, grants: grants, key: account.key))
                }
            }
            return listed
        }
        switch format {
        case .json: print(AccountStatus.document(listed).text())
        case .text: printTable(listed)
        }
    }

    private func printTable(_ listed: [AccountStatus]) {
        let several = Dictionary(grouping: listed, by: \.provider).mapValues { $0.count > 1 }
        let rows = listed.map { status in
            [
                status.provider, status.providerName,
                (status.account ?? "-") + (several[status.provider] == true && status.inUse ? " (in use)" : ""),
            ]
        }
        let header = ["PROVIDER", "NAME", "ACCOUNT", "STATE"]
        let widths = (0..<3).map { column in max(header[column].count, rows.map { $0[column].count }.max() ?? 0) }
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        print((0..<3).map { pad(header[$0], widths[$0]) }.joined(separator: "  ") + "  " + header[3])
        let indent = String(repeating: " ", count: widths[0] + 2)
        for (row, status) in zip(rows, listed) {
            print((0..<3).map { pad(row[$0], widths[$0]) }.joined(separator: "  ") + "  " + status.state.sentence)
            for line in status.details() { print(indent + line) }
        }
    }
}
