import DesktopOAuth
import GtkKit
import LatchkeyCore
import OAuthCore

/// The main window: which provider, who you are, the buttons, and a status
/// line. It holds no state of its own: `render` shows a ViewModel, and is the
/// one way to change what the window shows (it remembers the last model only
/// to leave alone what did not change: the list, the accounts' rows, pictures).
@MainActor
final class MainWindow {
    let window: Window
    let signIn = Button(label: "Sign in")
    /// RFC 8628, for a provider that offers it: the code shown here, the sign-in done on a phone.
    let onDevice = Button(label: "Sign in on another device")
    /// The model shown last, and the providers listed (the first frame lists the chosen one alone).
    private var shown: ViewModel?
    private var listed: [ProviderEntry] = []
    /// Set as GTK destroys the window (closed). Work begun before may still answer on the turn of the
    /// loop that closes it (the list of providers, read once the first frame is drawn): its render would
    /// fill a list whose model the destroy has released (a Gtk-CRITICAL, closed_at_launch in e2e).
    private var closed = false
    let getProfile = Button(label: "Get my profile")
    let openProfile = Button(label: "Open profile")
    let signOut = Button(label: "Sign out")
    let cancel = Button(label: "Cancel")
    let setUp = Button(label: "Set up…")
    let addProvider = Button(iconName: "list-add-symbolic")
    let programs = Button(iconName: "security-high-symbolic")
    let addAccount = Button(iconName: "contact-new-symbolic")
    /// The accounts' list, made the first time a provider has two (see `showAccounts`); where it goes.
    private(set) var accounts: AccountRows?
    private let accountsSlot = Box(vertical: true, spacing: 0)
    private var accountChosen: (@MainActor (String) -> Void)?
    let provider = ComboBoxText()
    let inWindow = RadioButton(label: "In this window")
    let inBrowser: RadioButton
    private let onlyAgent = Label("")
    private let agentLabel = Label("Sign in")
    private let header: HeaderBar
    private let status = Label("", wrap: true, selectable: true)
    private let spinner = Spinner()
    private let avatar = Image(iconName: "avatar-default-symbolic", pixelSize: 64)
    private let name = Label()
    private let email = Label()
    private let note = Label("", wrap: true)
    /// What the sign-in allows: its scopes.
    private let scopes = Label("", wrap: true, selectable: true)
    private let profileBox = Box(vertical: false, spacing: 16)

    // Layout: every widget of the window, in the order it shows them.
    init(application: Application, providers: [ProviderEntry]) {
        window = Window(application: application, title: "Latchkey")
        window.setDefaultSize(width: 460, height: 500)
        window.setIcon(name: LatchkeyApp.id)
        header = HeaderBar(title: "Latchkey")
        inBrowser = RadioButton(label: "In your browser", joining: inWindow)
        window.setTitlebar(header)
        programs.setAccessible(name: "Allowed programs")
        programs.setTooltip("The programs that get your tokens from Latchkey's agent without asking")
        header.packEnd(programs)
        // Adding, from the header bar: a provider, or another account of the one shown.
        addProvider.setAccessible(name: "Add a provider")
        addProvider.setTooltip("Add a provider from its issuer URL or a provider file")
        header.packStart(addProvider)
        addAccount.setAccessible(name: "Add another account")
        addAccount.setTooltip("Sign in with another account of this provider, beside the one you have")
        header.packStart(addAccount)

        list(providers)
        provider.setAccessible(name: "Provider")
        let providerLabel = Label("Provider")
        providerLabel.addStyleClass("dim-label")
        let providerRow = Box(vertical: false, spacing: 12)
        providerRow.append(providerLabel)
        providerRow.append(provider, expand: true)

        agentLabel.addStyleClass("dim-label")
        inWindow.setAccessible(name: "In this window", description: "Sign in in a window of Latchkey's own")
        inBrowser.setAccessible(name: "In your browser", description: "Sign in in your default web browser")
        onlyAgent.addStyleClass("dim-label")
        let agentRow = Box(vertical: false, spacing: 12)
        agentRow.append(agentLabel)
        agentRow.append(inWindow)
        agentRow.append(inBrowser)
        agentRow.append(onlyAgent)

        avatar.setAccessible(name: "Profile picture")
        name.addStyleClass("title-2")
        let nameAndEmail = Box(vertical: true, spacing: 4)
        nameAndEmail.setAlignment(vertical: .center)
        nameAndEmail.append(name)
        nameAndEmail.append(email)
        profileBox.append(avatar)
        profileBox.append(nameAndEmail, expand: true)
        note.addStyleClass("dim-label")

        signIn.addStyleClass("suggested-action")
        signIn.setAccessible(name: "Sign in")
        onDevice.setAccessible(name: "Sign in on another device", description: "Show a code to enter on your phone or another computer")
        onDevice.setTooltip("Sign in on your phone or another computer, with a code shown here")
        getProfile.setAccessible(name: "Get my profile")
        openProfile.setAccessible(name: "Open profile")
        openProfile.ellipsizeLabel()
        signOut.setAccessible(name: "Sign out")
        cancel.setAccessible(name: "Cancel", description: "Stop waiting for the browser")
        setUp.setAccessible(name: "Set up…", description: "Give this provider the client id it needs")
        setUp.addStyleClass("suggested-action")
        status.setAccessible(name: "", description: "Status")

        let buttons = Box(vertical: true, spacing: 12)
        for button in [setUp, signIn, onDevice, cancel, getProfile, openProfile, signOut] { buttons.append(button) }

        let statusRow = Box(vertical: false, spacing: 8)
        statusRow.append(spinner)
        statusRow.append(status, expand: true)

        let content = Box(vertical: true, spacing: 20)
        content.setMargins(24)
        let choices = Box(vertical: true, spacing: 8)
        choices.append(providerRow)
        choices.append(agentRow)
        content.append(choices)
        content.append(accountsSlot)
        content.append(profileBox)
        content.append(note)
        scopes.addStyleClass("dim-label")
        content.append(scopes)
        content.append(buttons)
        content.appendAtEnd(statusRow)
        window.setChild(content)
        // What the first frame does not show is left out of it, so the window is measured without
        // it: the choice of where to sign in is the first of its kinds GTK would style (~5 ms of a launch).
        // Sign in and the spinner as well: the first render, before `show`, says whether they are shown.
        for widget: Widget in [
            cancel, setUp, onDevice, inWindow, inBrowser, onlyAgent, agentLabel, signOut, openProfile, note, scopes, accountsSlot,
            signIn, spinner,
        ] {
            widget.isLeftOutOfShowAll = true
        }
        window.on("destroy") { [weak self] in self?.closed = true }
    }

    /// Shows the window once the first render has set what it shows. Shown before, its labels were laid
    /// out again between the map and the first frame, and GTK animated each change of the first render
    /// as a change of style: Sign in faded out and back in at every launch (docs/performance.md).
    func show() {
        window.showAll()
    }

    /// `body`, once, on the turn of the loop after the window's first frame is drawn.
    func afterFirstFrame(_ body: @escaping @MainActor @Sendable () -> Void) {
        var waiting = true
        window.onBool("draw") {
            if waiting {
                waiting = false
                MainLoop.perform(body)
            }
            return false  // drawn as ever
        }
    }

    /// What the person does in the window, told as it happens.
    struct Handlers {
        /// A button of the state machine's: Sign in, Cancel, Get my profile, Open profile, Sign out.
        var event: @MainActor (AppEvent) -> Void
        var providerChosen: @MainActor (String) -> Void
        var userAgentChosen: @MainActor (ProviderConfiguration.UserAgentKind) -> Void
        var setUp: @MainActor () -> Void
        var addProvider: @MainActor () -> Void
        var addAccount: @MainActor () -> Void
        /// The person chose another account's row: its key.
        var accountChosen: @MainActor (String) -> Void
        var programs: @MainActor () -> Void
    }

    func connect(_ handlers: Handlers) {
        let clicks: [(Button, AppEvent)] = [
            (signIn, .signInRequested), (onDevice, .deviceSignInRequested), (cancel, .cancelRequested), (getProfile, .profileRequested),
            (openProfile, .openProfileRequested), (signOut, .signOutRequested),
        ]
        for (button, event) in clicks { button.onClicked { handlers.event(event) } }
        provider.onChanged { [weak self] in
            if let id = self?.provider.activeID { handlers.providerChosen(id) }
        }
        for radio in [inWindow, inBrowser] {
            radio.onToggled { [weak self] in
                guard let self else { return }
                handlers.userAgentChosen(self.inBrowser.isActive ? .browser : .embedded)
            }
        }
        setUp.onClicked { handlers.setUp() }
        addProvider.onClicked { handlers.addProvider() }
        addAccount.onClicked { handlers.addAccount() }
        accountChosen = handlers.accountChosen
        programs.onClicked { handlers.programs() }
    }

    /// The providers in the list, in order (after one was added, the whole list again).
    private func list(_ entries: [ProviderEntry]) {
        listed = entries
        provider.removeAll()
        for entry in entries { provider.append(id: entry.id, text: entry.displayName) }
    }

    /// The chosen provider, in the list and under the title. The list's choice is set whenever it
    /// differs from the model's (the person's pick may not have been taken); the names only when they
    /// changed (each set is a relayout and an accessibility notice).
    private func showProvider(id: String, name: String, nameChanged: Bool) {
        if provider.activeID != id { provider.activeID = id }
        guard nameChanged else { return }
        header.subtitle = name
        signIn.setAccessible(name: "Sign in", description: "Sign in with \(name)")
    }

    /// Where this provider's sign-in happens: a choice when it allows both,
    /// otherwise a sentence; nothing when the provider cannot be used.
    private func showUserAgents(_ allowed: [ProviderConfiguration.UserAgentKind], chosen: ProviderConfiguration.UserAgentKind?) {
        let both = allowed.count > 1
        inWindow.isVisible = both
        inBrowser.isVisible = both
        if both, let chosen {
            (chosen == .browser ? inBrowser : inWindow).isActive = true
        }
        onlyAgent.isVisible = !both && !allowed.isEmpty
        agentLabel.isVisible = !allowed.isEmpty
        onlyAgent.text = allowed == [.browser] ? "In your browser (the only way this provider allows)" : "In this window"
        onlyAgent.setAccessible(name: onlyAgent.text)
    }

    func render(_ model: ViewModel) {
        guard !closed else { return }
        renderSurroundings(model)
        signIn.isSensitive = model.signInEnabled
        getProfile.isSensitive = model.getProfileEnabled
        signOut.isVisible = model.signOutVisible
        signOut.isSensitive = model.signOutEnabled
        cancel.isVisible = model.cancelVisible
        setUp.isVisible = model.setUpVisible
        signIn.isVisible = !model.setUpVisible
        onDevice.isVisible = model.offersDeviceSignIn && !model.setUpVisible
        onDevice.isSensitive = model.signInEnabled
        provider.isSensitive = model.providerChoiceEnabled
        addProvider.isSensitive = model.providerChoiceEnabled
        addAccount.isSensitive = model.addAccountEnabled
        accounts?.isSensitive = model.providerChoiceEnabled
        inWindow.isSensitive = model.providerChoiceEnabled
        inBrowser.isSensitive = model.providerChoiceEnabled
        if let url = model.openProfileURL {
            openProfile.label = url
            openProfile.setAccessible(name: "Open profile", description: url)
            openProfile.setTooltip("Open \(url) in your web browser")
            openProfile.isVisible = true
        } else {
            openProfile.isVisible = false
        }
        status.text = model.status
        status.setAccessible(name: model.status, description: "Status")
        model.isError ? status.addStyleClass("error") : status.removeStyleClass("error")
        spinner.isVisible = model.busy
        spinner.setSpinning(model.busy)

        name.text = model.headline
        email.text = model.subline
        note.text = model.profile?.note ?? ""
        note.isVisible = model.profile?.note != nil
        scopes.text = model.scopesLine ?? ""
        scopes.setAccessible(name: model.scopesLine ?? "", description: "Scopes")
        scopes.isVisible = model.scopesLine != nil
        shown = model
    }

    /// What the window shows around the state: the list and the provider chosen in it, where to sign
    /// in, the accounts, the pictures. What did not change since the last model is left alone, but
    /// for what the person can change by hand (the provider and account chosen), shown as the model says.
    private func renderSurroundings(_ model: ViewModel) {
        if model.providers != listed { list(model.providers) }
        if let chosen = model.shownProvider {
            showProvider(id: chosen.id, name: chosen.displayName, nameChanged: chosen.displayName != shown?.shownProvider?.displayName)
        }
        if model.userAgents != shown?.userAgents || model.chosenUserAgent != shown?.chosenUserAgent {
            showUserAgents(model.userAgents, chosen: model.chosenUserAgent)
        }
        let anew = showAccounts(model.accounts, inUse: model.accountInUse, providerName: model.shownProvider?.displayName ?? "")
        for (key, bytes) in model.accountPictures where anew || shown?.accountPictures[key] != bytes {
            accounts?.showPicture(bytes, of: key)
        }
        if shown == nil || model.avatar != shown?.avatar { showPicture(model.avatar) }
    }

    /// Shows a provider's accounts, `inUse` chosen: a list once there are two, made then (the first
    /// frame, and a window with one account, never pay for it). Returns whether the rows were made anew.
    private func showAccounts(_ list: [Account], inUse: String?, providerName: String) -> Bool {
        accountsSlot.isVisible = list.count > 1
        if accounts == nil {
            guard list.count > 1 else { return false }
            let rows = AccountRows()
            rows.list.onSelected { [weak self] key in self?.accountChosen?(key) }
            accountsSlot.append(rows.frame)
            accounts = rows
        }
        return accounts?.show(list, inUse: inUse, providerName: providerName) ?? false
    }

    /// The profile picture, or the generic one when there is none or it cannot be read.
    private func showPicture(_ bytes: [UInt8]?) {
        if let bytes, avatar.setPicture(bytes, size: 64) { return }
        avatar.setIcon("avatar-default-symbolic")
    }
}
