import FoundationEssentials
import GtkKit
import LatchkeyCore
import OAuthCore

/// Which provider the window shows, and what the person picks around it: another provider
/// from the list, where to sign in, a set-up or an added provider from the dialogs, and a
/// sign-out asked for by another process. Each choice ends as an event for the runner.
extension AppController {

    /// Makes `id` the provider shown: its own sign-in, read from the store.
    /// `remember`: the person chose it in the window, so the next launch starts with it.
    /// `name`: its name, when just read (at launch: reading its files a second time was 0.25 % of the
    /// instructions to the window's map, docs/performance.md).
    func choose(_ id: String, remember: Bool, name: String? = nil) {
        // Not now: the list shows the provider still shown.
        guard state.allowsChoosingProvider else { return render() }
        // A sign-out asked for while the provider shown was read is for that provider, not this one: told
        // while `providerID` and `current` are still that provider's, which `.forgetSignIn` clears.
        if id != providerID { send(.leavingProvider) }
        generation += 1
        (signInTask, current, grantedScopes, accountEntry, accountPictures, picture) = (nil, nil, [], AccountList.Entry(), [:], nil)
        (keyKept, futureLine) = (nil, nil)
        providerID = id
        providerName = name ?? providerEntries.first { $0.id == id }?.displayName ?? providers.displayName(of: id)
        agents.reset(for: providerName)
        application.setActionState(LatchkeyApp.signOutAction, id)
        if remember { LatchkeyFiles.rememberChosenProvider(id) }
        send(.providerChosen)
        render()
    }

    /// Reads the provider list off GTK's thread (every provider's file is opened for its name)
    /// and shows it, the chosen provider still chosen.
    func listProviders(then next: (@MainActor @Sendable (AppController) -> Void)? = nil) {
        let providers = self.providers
        whenDrawn {
            MainLoop.work {
                providers.readEntries()
            } then: { [weak self] entries in
                guard let self else { return }
                self.providerEntries = entries
                self.render()
                next?(self)
            }
        }
    }

    /// The person picked where to sign in: kept in their own file for this provider.
    func userAgentChosen(_ chosen: ProviderConfiguration.UserAgentKind) {
        guard let provider = current, provider.configuration.usableUserAgents.count > 1 else { return }
        guard chosen != agents.chosen, state.allowsChoosingProvider else { return }
        agents.chosen = chosen
        logger.info("Signing in \(chosen == .browser ? "in the browser" : "in this window") from now on")
        providers.remember(chosen, for: providerID)
        render()
        send(.userAgentChosen)
    }

    /// A provider given with --provider-file is that file's business: no set-up writes beside it.
    var canSetUp: Bool { !providers.isGivenFile(providerID) }

    /// The set-up dialog for the provider shown, which lacks what it needs.
    func openSetUp() {
        guard !dialogs.isOpen, case .unavailable = state, canSetUp else { return }
        do {
            dialogs.openSetUp(for: try providers.draft(for: providerID))
        } catch {
            // A file that cannot be read at all: the status already says so; there is nothing to fill in.
            send(.providerUnavailable("\(error)"))
        }
    }

    /// A provider set up or added in a dialog is shown; one added lacking credentials is set up next.
    func providerSetUp(_ done: ProviderDialogs.Done) {
        followUp.done(id: done.id, notice: done.notice, added: done.added)
        guard done.added else { return choose(done.id, remember: true) }
        listProviders { $0.choose(done.id, remember: true) }
    }

    /// `latchkey --sign-out` for `id`, sent here because this window showed it. Still shown and
    /// signed in, it is the Sign out button; still being read, it is done once that is read
    /// (`AppState.starting`); otherwise whatever the store holds is cleared. The window moved on
    /// to another provider since the command looked: that provider's sign-in is cleared (and
    /// revoked) in the background, and the one shown is left alone.
    func signOutRequestedElsewhere(provider id: String) {
        logger.info("Sign-out requested by another process", metadata: ["provider": "\(id)"])
        guard id == providerID else { return providers.signOutInBackground(id) }
        if state.carriesOutSignOut { return send(.signOutRequestedElsewhere) }
        forgetSignIn()
    }

    /// Whatever the store holds for the provider shown, cleared (and revoked) beside the window.
    func forgetSignIn() {
        guard let provider = current else { return providers.signOutInBackground(providerID) }
        MainLoop.work { _ = await provider.signOutForgettingPrograms() }
    }

    /// The programs always allowed to get tokens from the agent, each revocable.
    func openPrograms() {
        guard programsDialog == nil else { return }
        let names = Dictionary(providerEntries.map { ($0.id, $0.displayName) }, uniquingKeysWith: { first, _ in first })
        let dialog = ProgramsDialog(parent: window.window, grants: LatchkeyFiles.allowedPrograms, providerNames: names)
        dialog.onDismiss = { [weak self] in self?.programsDialog = nil }
        programsDialog = dialog
    }
}
