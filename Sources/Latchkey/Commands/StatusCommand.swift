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

/// `latchkey status`: each provider, its accounts and their sign-ins, never a token.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "List each provider and its accounts, with each sign-in's state and when its access token expires."
    )

    @OptionGroup var keyring: KeyringWait

    func run() throws {
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: .error) }
        let services = Services(keyringTimeout: keyring.seconds)
        let (catalog, store, secrets) = (services.catalog, services.tokens, services.secrets)
        let accounts = LatchkeyFiles.accounts
        let rows = wait { () async -> [[String]] in
            var rows: [[String]] = []
            for (id, name) in catalog.availableProviders {
                let listed = await SignInStatus.accounts(of: id, in: accounts, store: store)
                for account in listed {
                    let shown = account.label + (listed.count > 1 && account.inUse ? " (in use)" : "")
                    rows.append([
                        id, name, shown,
                        await SignInStatus.state(
                            of: id, key: account.key, catalog: catalog, store: store, secrets: secrets,
                            isSandbox: SandboxProviders.contains(id)
                        ).sentence,
                    ])
                }
            }
            return rows
        }
        let header = ["PROVIDER", "NAME", "ACCOUNT", "STATE"]
        let widths = (0..<3).map { column in max(header[column].count, rows.map { $0[column].count }.max() ?? 0) }
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        for row in [header] + rows { print((0..<3).map { pad(row[$0], widths[$0]) }.joined(separator: "  ") + "  " + row[3]) }
    }
}
