import Foundation
import DesktopOAuth
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// Turns clicks into OAuthCore calls and their answers into AppEvents.
///
/// Lives on GTK's thread (the main actor); network and keyring work runs in
/// detached tasks and comes back through `MainLoop.perform`, since the main
/// actor's own executor never runs while GTK's loop does. Answers carry the
/// generation of the provider they were asked for: one that arrives after the
/// person chose another provider is dropped.
@MainActor
final class AppController {
    let window: MainWindow
    private let application: Application
    private let providers: Providers
    private let store: any TokenStore
    private let networkTimeout: Double
    private let logger: Logger
    /// The chosen provider's id and name; `current` is nil while it cannot be used.
    private(set) var providerID: String
    private var providerName: String
    private var current: ActiveProvider?
    private var generation = 0
    /// What the shown provider's sign-in allows (its scopes), shown while signed in.
    private var grantedScopes: [String] = []
    private var signInTask: Task<Void, Never>?
    /// The set-up or add-provider dialog, while one is open.
    private var dialog: FormDialog?
    /// A provider just added: its set-up dialog opens if it lacks credentials.
    private var setUpWhenUnavailable: String?
    /// Said once the provider just set up is ready: where its credentials went.
    private var setUpNotice: (id: String, sentence: String)?
    private lazy var browser = BrowserUserAgent(parent: window.window)

    /// The provider in use, and the OAuthCore objects that serve it.
    private final class ActiveProvider {
        let configuration: ProviderConfiguration
        let session: AuthSession
        let profileClient: ProfileClient
        let ready: @Sendable () throws -> Void
        var userAgent: ProviderConfiguration.UserAgentKind
        /// The embedded view's agent, made when first needed (its title names the provider).
        var web: WebViewUserAgent?

        init(configuration: ProviderConfiguration, ready: @escaping @Sendable () throws -> Void, store: any TokenStore, timeout: Double) {
            self.configuration = configuration
            self.ready = ready
            userAgent = configuration.userAgent
            profileClient = ProfileClient(configuration: configuration, timeout: timeout, logger: Logger(label: "OAuthCore.ProfileClient"))
            session = Self.session(for: configuration, store: store, timeout: timeout)
        }

        /// The session of a provider: its token client with the app's network timeout, and the app's store.
        nonisolated static func session(for configuration: ProviderConfiguration, store: any TokenStore, timeout: Double) -> AuthSession {
            let tokenClient = TokenClient(configuration: configuration, timeout: timeout, logger: Logger(label: "OAuthCore.TokenClient"))
            return AuthSession(
                configuration: configuration, store: store, tokenClient: tokenClient, logger: Logger(label: "OAuthCore.AuthSession"),
                accounts: LatchkeyFiles.accounts)
        }
    }

    private(set) var state = AppState.starting {
        didSet {
            guard state != oldValue else { return }
            logger.debug("state \(Self.name(of: state))")
            render()
            // Whenever Sign in becomes possible, have the next sign-in ready.
            if state.accepts(.signInRequested) { prepareSignIn() }
        }
    }

    /// Signed out, a sign-in is the likely next step: for the embedded view,
    /// load WebKit and start its web process now, after the window has drawn,
    /// so the page appears sooner; and open libcurl, so the code exchange after
    /// the redirect need not wait for it. Signed in, both wait until needed.
    private func prepareSignIn() {
        let generation = self.generation
        MainLoop.after(milliseconds: 50) { [weak self] in
            // Still signed out with the same provider by then (the person may already have clicked): prepare.
            guard let self, self.generation == generation, self.state.accepts(.signInRequested), let current = self.current
            else { return }
            if current.userAgent == .embedded { self.webAgent(of: current).prepare() }
            let logger = self.logger
            Task.detached {
                do { try CurlTransport.load() } catch { logger.warning("\(error)") }
            }
        }
    }

    private func webAgent(of provider: ActiveProvider) -> WebViewUserAgent {
        if let web = provider.web { return web }
        let web = WebViewUserAgent(parent: window.window, providerName: provider.configuration.displayName)
        provider.web = web
        return web
    }

    private var storeName: String { Self.shortened(store.displayName) }

    /// A provider given with --provider-file is that file's business: no set-up writes beside it.
    private var canSetUp: Bool { !providers.isGivenFile(providerID) }

    /// Shows the state. Every sentence in it names paths under the home folder
    /// as `~/…`: the store's notices, and the sentences of its errors.
    private func render() {
        var model = ViewModel(
            state: state, providerName: providerName, storeName: storeName, userAgent: current?.userAgent ?? .embedded,
            scopes: grantedScopes)
        model.status = Self.shortened(model.status)
        model.setUpVisible = model.setUpVisible && canSetUp
        window.render(model)
    }

    /// Paths under the home folder as `~/…`. The home is `$HOME`, as the file
    /// store's own directory is, not the account's home from the password file.
    private nonisolated static func shortened(_ text: String) -> String {
        text.replacingOccurrences(of: home, with: "~")
    }

    private nonisolated static let home =
        ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()

    init(
        application: Application, providers: Providers, providerID: String, store: any TokenStore, networkTimeout: Double,
        logger: Logger
    ) {
        self.application = application
        self.providers = providers
        self.providerID = providerID
        providerName = providers.displayName(of: providerID)
        self.store = store
        self.networkTimeout = networkTimeout
        self.logger = logger
        // The list holds the chosen provider alone until the window is up (see `start`).
        window = MainWindow(application: application, providers: [(providerID, providerName)])
        window.signIn.onClicked { [weak self] in self?.signIn() }
        window.cancel.onClicked { [weak self] in self?.cancelSignIn() }
        window.getProfile.onClicked { [weak self] in self?.getProfile() }
        window.openProfile.onClicked { [weak self] in self?.openProfile() }
        window.signOut.onClicked { [weak self] in self?.signOut() }
        window.provider.onChanged { [weak self] in
            guard let self, let id = self.window.provider.activeID, id != self.providerID else { return }
            self.choose(id, remember: true)
        }
        window.inWindow.onToggled { [weak self] in self?.userAgentToggled() }
        window.setUp.onClicked { [weak self] in self?.openSetUp() }
        window.addProvider.onClicked { [weak self] in self?.openAddProvider() }
        window.inBrowser.onToggled { [weak self] in self?.userAgentToggled() }
    }

    private func send(_ event: AppEvent) {
        state = AppState.next(state, event)
    }

    /// `event` for the provider of `generation`, if it is still the one shown.
    private func deliver(_ generation: Int, _ event: AppEvent) {
        guard generation == self.generation else { return }
        send(event)
    }

    /// Shows the provider chosen at launch and reads its stored sign-in.
    func start() {
        logger.debug("main window shown")
        choose(providerID, remember: false)
        // The whole list once the window is up, read off GTK's thread: every provider's file is opened for its name.
        listProviders()
    }

    /// Reads the provider list in the background and shows it, the chosen provider still chosen.
    private func listProviders(then next: (@MainActor () -> Void)? = nil) {
        let providers = self.providers
        Task.detached { [weak self] in
            let entries = providers.readEntries()
            MainLoop.perform {
                guard let self else { return }
                self.providers.entries = entries
                self.window.list(entries)
                self.window.showProvider(id: self.providerID, name: self.providerName)
                next?()
            }
        }
    }

    /// Makes `id` the provider shown: its own sign-in, read from the store.
    /// `remember`: the person chose it in the window, so the next launch starts with it.
    private func choose(_ id: String, remember: Bool) {
        guard state.allowsChoosingProvider else {
            window.showProvider(id: providerID, name: providerName)
            return
        }
        generation += 1
        signInTask = nil
        current = nil
        grantedScopes = []
        providerID = id
        providerName = providers.entries.first { $0.id == id }?.displayName ?? providers.displayName(of: id)
        application.setActionState(LatchkeyApp.signOutAction, id)
        if remember { LatchkeyFiles.rememberChosenProvider(id) }
        window.showProvider(id: id, name: providerName)
        window.showUserAgents([], chosen: nil)
        send(.providerChosen)
        render()
        // Off GTK's thread: the provider's client secret may be asked of the keyring.
        let (providers, generation) = (self.providers, self.generation)
        Task.detached { [weak self] in
            let outcome: Result<(ProviderConfiguration, ready: @Sendable () throws -> Void), any Error>
            do { outcome = .success(try await providers.configuration(for: id)) } catch { outcome = .failure(error) }
            MainLoop.perform { self?.adopt(outcome, id: id, generation: generation) }
        }
    }

    /// The chosen provider's configuration arrived: it becomes the one in use, or says what it lacks.
    private func adopt(
        _ outcome: Result<(ProviderConfiguration, ready: @Sendable () throws -> Void), any Error>, id: String, generation: Int
    ) {
        guard generation == self.generation else { return }
        switch outcome {
        case .success(let (configuration, ready)):
            let provider = ActiveProvider(configuration: configuration, ready: ready, store: store, timeout: networkTimeout)
            current = provider
            providerName = configuration.displayName
            logger.info("Provider \(configuration.displayName)")
            window.showProvider(id: id, name: configuration.displayName)
            window.showUserAgents(configuration.usableUserAgents, chosen: provider.userAgent)
            render()
            let notice = setUpNotice.flatMap { $0.id == id ? $0.sentence : nil }
            setUpNotice = nil
            readStoredSignIn(of: provider, notice: notice)
        case .failure(let error):
            logger.notice("Provider \(id) cannot be used", metadata: ["error": "\(error)"])
            send(.providerUnavailable("\(error)"))
            if setUpWhenUnavailable == id { openSetUp() }
        }
        setUpWhenUnavailable = nil
    }

    /// Reads the stored sign-in off GTK's thread; renews it quietly if it is about to expire.
    /// `notice`: what to say once it is read, in place of the usual sentence.
    private func readStoredSignIn(of provider: ActiveProvider, notice: String? = nil) {
        let (session, ready, generation) = (provider.session, provider.ready, self.generation)
        Task.detached { [weak self] in
            // Sign in stays disabled until this answers: nothing reaches the provider before it listens.
            do {
                // Up to 10 s reading the sandbox's first line: on a thread of its own, not the pool's.
                try await BlockingWork.run { Result { try ready() } }.get()
            } catch {
                MainLoop.perform { self?.deliver(generation, .launched(signedIn: false, notice: "\(error)")) }
                return
            }
            let signedIn = await session.isSignedIn
            let warning = await session.storeWarning ?? notice
            let scopes = await session.currentToken()?.allowedScopes(asked: session.configuration.scopes) ?? []
            MainLoop.perform {
                self?.showScopes(scopes, generation: generation)
                self?.deliver(generation, .launched(signedIn: signedIn, notice: warning))
            }
            guard signedIn else { return }
            do {
                _ = try await session.freshToken()
            } catch OAuthError.signedOut(let reason) {
                MainLoop.perform { self?.deliver(generation, .sessionEnded(reason)) }
            } catch {
                // A passing failure: the sign-in is kept, and Get my profile will try again.
                self?.logger.notice("Could not renew the sign-in at launch", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The person picked where to sign in: kept in their own file for this provider.
    private func userAgentToggled() {
        guard let current, current.configuration.usableUserAgents.count > 1 else { return }
        let chosen: ProviderConfiguration.UserAgentKind = window.inBrowser.isActive ? .browser : .embedded
        guard chosen != current.userAgent, state.allowsChoosingProvider else { return }
        current.userAgent = chosen
        logger.info("Signing in \(chosen == .browser ? "in the browser" : "in this window") from now on")
        do {
            // A provider given with --provider-file is not in the list of a later plain launch: no file for it.
            if !providers.isGivenFile(current.configuration.id) {
                try providers.catalog.saveUserSettings(["user_agent": chosen.rawValue], for: current.configuration.id)
            }
        } catch {
            logger.warning("The choice is kept for this run only", metadata: ["error": "\(error)"])
        }
        render()
        if state.accepts(.signInRequested) { prepareSignIn() }
    }

    // MARK: Setting up and adding providers

    /// The set-up dialog for the provider shown, which lacks what it needs.
    private func openSetUp() {
        guard dialog == nil, case .unavailable = state, canSetUp else { return }
        let id = providerID
        let draft: ProviderConfiguration
        do {
            draft = try providers.draft(for: id)
        } catch {
            // A file that cannot be read at all: the status already says so; there is nothing to fill in.
            return send(.providerUnavailable("\(error)"))
        }
        // A provider that authenticates needs its secret; a public one takes none, unless it is the
        // person's own, whose registration may have one after all.
        let need: SetUpForm.SecretNeed =
            draft.needsClientSecret
            ? .required(stored: !(draft.clientSecret ?? "").isEmpty) : providers.isOwn(id) ? .optional : .none
        let dialog = SetUpDialog(parent: window.window, draft: draft, need: need)
        dialog.onDismiss = { [weak self] in self?.dialog = nil }
        dialog.action.onClicked { [weak self, weak dialog] in
            guard let self, let dialog else { return }
            self.saveSetUp(from: dialog, id: id, draft: draft, need: need)
        }
        self.dialog = dialog
        dialog.present(focus: draft.clientID.isEmpty ? dialog.clientID : dialog.secret)
    }

    /// Keeps what the dialog was given: the secret in the keyring (or the
    /// private file when none runs) first, then the client id in the person's
    /// file, from which a secret kept there in clear is removed.
    private func saveSetUp(from dialog: SetUpDialog, id: String, draft: ProviderConfiguration, need: SetUpForm.SecretNeed) {
        guard !dialog.isBusy, let answer = dialog.answer() else { return }
        dialog.setBusy(true)
        var settings: [String: String?] = ["client_id": answer.clientID]
        if answer.secret != nil {
            settings["client_secret"] = .some(nil)
            // The person's own provider, registered with a secret after all: it is sent as RFC 6749 §2.3.1 requires every server to accept.
            if need == .optional, draft.authProtocol == .oauth2, draft.clientAuthentication == .none { settings["client_authentication"] = "client_secret_basic" }
        }
        let (providers, logger, name) = (self.providers, self.logger, draft.displayName)
        let file = Self.shortened(providers.catalog.userFile(for: id).path)
        Task.detached { [weak self, weak dialog] in
            do {
                var place: String?
                if let secret = answer.secret { place = try await providers.secrets.save(secret, for: id) }
                try providers.catalog.saveUserSettings(settings, for: id)
                logger.info("Provider \(id) set up", metadata: ["secret": "\(place.map { "in \($0)" } ?? "not given")"])
                let sentence = "\(name) is set up: its client id is in \(file)"
                    + (place.map { ", its secret in \(Self.shortened($0))." } ?? ".") + " Sign in to begin."
                MainLoop.perform { self?.setUpDone(id: id, notice: sentence) }
            } catch {
                logger.notice("Setting up \(id) failed", metadata: ["error": "\(error)"])
                MainLoop.perform {
                    dialog?.setBusy(false)
                    dialog?.show(problem: Self.sentence(for: error))
                }
            }
        }
    }

    private func setUpDone(id: String, notice: String) {
        dialog?.close()
        dialog = nil
        setUpNotice = (id, notice)
        choose(id, remember: true)
    }

    private func openAddProvider() {
        guard dialog == nil, state.allowsChoosingProvider else { return }
        let dialog = AddProviderDialog(parent: window.window)
        dialog.onDismiss = { [weak self] in self?.dialog = nil }
        dialog.action.onClicked { [weak self, weak dialog] in
            guard let self, let dialog else { return }
            self.addProvider(from: dialog)
        }
        self.dialog = dialog
        dialog.present(focus: dialog.issuer)
    }

    /// Writes the new provider's file (its secret, if it had one, to the
    /// keyring), then lists and chooses it; lacking credentials, its set-up dialog follows.
    private func addProvider(from dialog: AddProviderDialog) {
        guard !dialog.isBusy, let source = dialog.source() else { return }
        dialog.setBusy(true)
        let (providers, store, logger, timeout) = (self.providers, self.store, self.logger, networkTimeout)
        Task.detached { [weak self, weak dialog] in
            do {
                // Every check that can refuse an id runs before anything stored under it is cleared
                // (see ZeroConfiguration.claim): a name that belongs to another provider loses nothing.
                let zeroConfiguration = providers.zeroConfiguration(store: store, timeout: timeout)
                let id: String
                var notice: String?
                switch source {
                case .issuer(let issuer):
                    // A file naming the issuer alone, registered where the server allows.
                    id = try await zeroConfiguration.prepare(issuer: issuer).id
                case .resource(let text):
                    guard let url = URL(string: text) else { throw OAuthError.invalidConfiguration("“\(text)” is not a URL.") }
                    let prepared = try await zeroConfiguration.prepare(resource: url)
                    id = prepared.id
                    // Kept without a client id (the server lets no app register): listed, with Set up… and the reason.
                    notice = prepared.problem.map(Self.sentence)
                case .file(let path):
                    let file = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
                    // A file that names only its issuer is checked against the issuer's discovery document.
                    try await providers.catalog.refreshDiscovery(file: file, timeout: timeout)
                    let added = try providers.catalog.addProvider(file: file, reservedIDs: providers.reservedIDs)
                    id = added.id
                    // No provider had this id (addProvider refuses one that is taken), so whatever is stored
                    // under it was left by one removed by hand: it must not reach this provider's endpoints.
                    await zeroConfiguration.clearLeftBehind(id)
                    if let secret = added.clientSecret {
                        do {
                            try await providers.secrets.save(secret, for: id)
                        } catch {
                            notice = "\(error) Choose Set up… to give the secret again."
                        }
                    }
                }
                logger.info("Provider \(id) added")
                MainLoop.perform { self?.providerAdded(id, notice: notice) }
            } catch {
                logger.notice("Adding a provider failed", metadata: ["error": "\(error)"])
                MainLoop.perform {
                    dialog?.setBusy(false)
                    dialog?.show(problem: Self.sentence(for: error))
                }
            }
        }
    }

    /// An error for the dialog's problem line, which needs no "the provider configuration is not usable" before it.
    private nonisolated static func sentence(for error: any Error) -> String {
        guard case OAuthError.invalidConfiguration(let reason) = error else { return shortened("\(error)") }
        return shortened(OAuthError.sentence(reason))
    }

    private func providerAdded(_ id: String, notice: String?) {
        dialog?.close()
        dialog = nil
        setUpWhenUnavailable = id
        if let notice { setUpNotice = (id, notice) }
        listProviders { [weak self] in self?.choose(id, remember: true) }
    }

    /// OAuthCore runs the sign-in (present, wait, dismiss, exchange, keep);
    /// this only starts it and shows its steps.
    private func signIn() {
        guard let current, state.accepts(.signInRequested) else { return }
        send(.signInRequested)
        let (logger, generation, store, timeout) = (self.logger, self.generation, self.store, networkTimeout)
        let agent: any ExternalUserAgent = current.userAgent == .browser ? browser : webAgent(of: current)
        let id = current.configuration.id
        // A provider Latchkey registered itself with: the server may have forgotten it since.
        let registration = providers.isGivenFile(id) ? nil : providers.zeroConfiguration(store: store, timeout: timeout)
        let registered = current.session
        signInTask = Task.detached { [weak self] in
            var session = registered
            do {
                if let renewed = try await registration?.checkedRegistration(of: id, forBrowser: agent is BrowserUserAgent) {
                    logger.notice("\(renewed.displayName) had forgotten Latchkey: registered again")
                    session = ActiveProvider.session(for: renewed, store: store, timeout: timeout)
                    MainLoop.perform { self?.reregistered(renewed, generation: generation) }
                }
                let outcome = try await session.signIn(using: agent) { step in
                    MainLoop.perform {
                        switch step {
                        case .redirectReceived: self?.deliver(generation, .redirectReceived)
                        case .tokensReceived: self?.deliver(generation, .tokensReceived)
                        }
                    }
                }
                logger.debug("signed in")
                // Another person than before is said first: someone else may have completed this sign-in.
                let notice = [outcome.accountChange?.description, outcome.storeNotice].compactMap { $0 }.joined(separator: " ")
                if let change = outcome.accountChange { logger.notice("\(change)") }
                let scopes = outcome.token.allowedScopes(asked: session.configuration.scopes)
                MainLoop.perform {
                    self?.showScopes(scopes, generation: generation)
                    self?.deliver(generation, .signInSucceeded(notice: notice.isEmpty ? nil : notice))
                }
            } catch {
                let failure = error as? OAuthError ?? .userAgent("\(error)")
                logger.notice("Sign-in did not complete", metadata: ["error": "\(failure)"])
                MainLoop.perform { self?.deliver(generation, .signInFailed(failure)) }
            }
        }
    }

    /// What the sign-in of the provider of `generation` allows, shown from the next render on.
    private func showScopes(_ scopes: [String], generation: Int) {
        guard generation == self.generation else { return }
        grantedScopes = scopes
    }

    /// The provider in use registered anew just before its sign-in: the rest of the window
    /// (Get my profile, Sign out) speaks as the new client, whose sign-in this is.
    private func reregistered(_ configuration: ProviderConfiguration, generation: Int) {
        guard generation == self.generation, let old = current else { return }
        let renewed = ActiveProvider(configuration: configuration, ready: old.ready, store: store, timeout: networkTimeout)
        renewed.userAgent = old.userAgent
        renewed.web = old.web
        current = renewed
    }

    /// Cancel while the browser has the sign-in: the flow ends as cancelled and the listener closes.
    private func cancelSignIn() {
        guard state == .signingIn else { return }
        logger.info("Sign-in cancelled in the window")
        signInTask?.cancel()
    }

    private func getProfile() {
        guard let current, state.accepts(.profileRequested) else { return }
        send(.profileRequested)
        let (session, profileClient, generation) = (current.session, current.profileClient, self.generation)
        Task.detached { [weak self] in
            do {
                let profile = try await profileClient.fetch(using: session)
                let picture = await Self.picture(at: profile.pictureURL)
                MainLoop.perform {
                    guard let self, generation == self.generation else { return }
                    self.window.showPicture(picture)
                    self.send(.profileLoaded(profile))
                }
            } catch {
                let failure = error as? OAuthError ?? .network(endpoint: .profile, reason: "\(error)")
                MainLoop.perform { self?.deliver(generation, .profileFailed(failure)) }
            }
        }
    }

    /// The picture's bytes, or nil: a missing picture is not worth an error.
    private nonisolated static func picture(at url: URL?) async -> [UInt8]? {
        guard let url else { return nil }
        let response = try? await CurlTransport.shared.send(
            HTTPRequest(method: "GET", url: url, headers: ["User-Agent": OAuthCoreInfo.userAgent], timeout: 10))
        guard let response, response.status == 200, response.body.count < 5_000_000 else { return nil }
        return [UInt8](response.body)
    }

    private func openProfile() {
        guard case .profileLoaded(let profile, _) = state, let url = profile.profileURL else { return }
        do {
            try window.window.showURI(url.absoluteString)
            logger.info("Opened the profile in the default browser")
            send(.profileOpened)
        } catch {
            send(.profileOpenFailed("Could not open your web browser: \(error)"))
        }
    }

    /// `latchkey --sign-out` for `id`, sent here because this window showed it.
    /// Still shown: signed in, it is the Sign out button; otherwise whatever the
    /// store holds is cleared. The window moved on to another provider since
    /// the command looked: that provider's sign-in is cleared (and revoked) in
    /// the background, and the one shown is left alone.
    func signOutRequestedElsewhere(provider id: String) {
        logger.info("Sign-out requested by another process", metadata: ["provider": "\(id)"])
        if id == providerID, let session = current?.session {
            if state.accepts(.signOutRequested) { return signOut() }
            Task.detached { await session.signOut() }
            return
        }
        guard providers.exists(id) else { return }
        let (providers, store, logger, timeout) = (self.providers, self.store, self.logger, networkTimeout)
        Task.detached {
            do {
                let (configuration, ready) = try await providers.configuration(for: id)
                try await BlockingWork.run { Result { try ready() } }.get()
                let session = ActiveProvider.session(for: configuration, store: store, timeout: timeout)
                if let warning = await session.signOut() { logger.notice("\(warning)") }
            } catch {
                logger.notice("Could not sign out of \(id)", metadata: ["error": "\(error)"])
            }
        }
    }

    private func signOut() {
        guard let current, state.accepts(.signOutRequested) else { return }
        send(.signOutRequested)
        let (session, name, generation) = (current.session, current.configuration.displayName, self.generation)
        Task.detached { [weak self] in
            let warning = await session.signOut()
            MainLoop.perform { self?.deliver(generation, .signedOut(notice: warning ?? "Signed out of \(name).")) }
        }
    }

    private static func name(of state: AppState) -> String {
        String(describing: state).split(separator: "(").first.map(String.init) ?? "?"
    }
}
