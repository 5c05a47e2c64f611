import DesktopOAuth
import FoundationEssentials
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// The GtkApplication: one instance per desktop session; a second launch
/// brings the running window forward.
@MainActor
final class LatchkeyApp {
    nonisolated static let id = "io.github.latchkey.Latchkey"

    private let providers: Providers
    private let providerID: String
    private let logger: Logger
    private let application = Application(id: LatchkeyApp.id)
    private var controller: AppController?

    init(providers: Providers, providerID: String, logger: Logger) {
        self.providers = providers
        self.providerID = providerID
        self.logger = logger
        Application.setName("Latchkey", programName: "latchkey")
    }

    /// The action `latchkey --sign-out` activates in a running instance, with
    /// the provider's id as its parameter; its state is the id of the provider
    /// shown, so a command for another provider is not sent here.
    nonisolated static let signOutAction = "sign-out"

    /// The action `latchkey window --provider ID` activates in a running instance: show provider ID
    /// (its account in use already chosen by the launch that asks, with `--account`).
    nonisolated static let showAction = "show"

    func run() -> Int32 {
        application.onActivate { [weak self] in self?.activate() }
        application.addAction(Self.signOutAction, state: providerID) { [weak self] id in
            self?.controller?.signOutRequestedElsewhere(provider: id)
        }
        application.addAction(Self.showAction, state: "") { [weak self] id in
            guard let controller = self?.controller else { return }
            controller.choose(id, remember: true)
            controller.window.window.present()
        }
        return application.run(arguments: CommandLine.arguments)
    }

    private func activate() {
        if let controller {
            controller.window.window.present()
            return
        }
        if let icons = LatchkeyFiles.iconDirectory() { Toolkit.appendIconSearchPath(icons.path) }
        let controller = AppController(application: application, providers: providers, providerID: providerID, logger: logger)
        self.controller = controller
        controller.start()
    }
}
