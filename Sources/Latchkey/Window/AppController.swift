import DesktopOAuth
import FoundationEssentials
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// Runs what the state machine decides: clicks and OAuthCore's answers go in as
/// `AppEvent`s, `AppState.next` returns the next state and its `AppEffect`s,
/// and each effect is carried out here.
///
/// Lives on GTK's thread (the main actor). Work off it goes through `work`,
/// which detaches it and brings its answer back through GLib's loop: the main
/// actor's own executor never runs while GTK's loop does. Each provider shown
/// is a new generation; an answer for an earlier one is dropped. Which provider
/// is shown, and what the person picks around it, is `AppController+Choosing`.
@MainActor
final class AppController {
    // Internal rather than private where AppController+Choosing.swift uses them too.
    let window: MainWindow
    let application: Application
    let providers: Providers
    let logger: Logger
    let dialogs: ProviderDialogs
    /// The chosen provider's id and name; `current` is nil while it cannot be used.
    var providerID: String
    var providerName: String
    var current: Provider?
    /// Where the shown provider's sign-in happens.
    let agents: SignInAgents
    var generation = 0
    /// What the shown provider's sign-in allows (its scopes), shown while signed in.
    var grantedScopes: [String] = []
    /// Where the key the sign-in's tokens are bound to is kept (`DPoPKey.whereKept`); nil: bearer tokens.
    var keyKept: String?
    /// When the sign-in itself ends, where that is known (`SignInFuture.sentence`).
    var futureLine: String?
    var signInTask: Task<Void, Never>?
    /// After a dialog: its sentence once the provider is ready, or the set-up of one added without credentials.
    var followUp = SetUpFollowUp()
    /// The allowed programs, while shown.
    var programsDialog: ProgramsDialog?
    /// The shown provider's accounts, as last listed (see `AppController+Accounts`), and their pictures once fetched.
    var accountEntry = AccountList.Entry()
    var accountPictures: [String: [UInt8]] = [:]
    /// The profile's picture, once fetched.
    var picture: [UInt8]?
    /// The providers listed, once read (see `listProviders`); until then, the list holds the one shown.
    var providerEntries: [ProviderEntry] = []
    /// Where the window is in drawing its first frame, and what waits for it (see `FirstFrame`).
    private var firstFrame = FirstFrame.composing(work: [])

    private(set) var state = AppState.starting() {
        didSet {
            guard state != oldValue else { return }
            logger.debug("state \(String(describing: state).prefix { $0 != "(" })")
            render()
        }
    }

    init(application: Application, providers: Providers, providerID: String, logger: Logger) {
        self.application = application
        self.providers = providers
        self.providerID = providerID
        providerName = providers.displayName(of: providerID)
        self.logger = logger
        // The list holds the chosen provider alone until the window is up (see `start`).
        window = MainWindow(application: application, providers: [ProviderEntry(id: providerID, displayName: providerName)])
        dialogs = ProviderDialogs(parent: window.window, setUp: providers.setUp, logger: logger)
        agents = SignInAgents(parent: window.window, logger: logger)
        dialogs.onDone = { [weak self] done in self?.providerSetUp(done) }
        window.connect(
            .init(
                event: { [weak self] in self?.clicked($0) },
                providerChosen: { [weak self] id in
                    guard let self, id != self.providerID else { return }
                    self.choose(id, remember: true)
                },
                userAgentChosen: { [weak self] in self?.userAgentChosen($0) }, setUp: { [weak self] in self?.openSetUp() },
                addProvider: { [weak self] in
                    guard let self, self.state.allowsChoosingProvider else { return }
                    self.dialogs.openAddProvider()
                }, addAccount: { [weak self] in self?.clicked(.addAccountRequested) },
                accountChosen: { [weak self] key in self?.accountChosen(key) }, programs: { [weak self] in self?.openPrograms() }))
    }

    /// Shows the provider chosen at launch; then, once the window is up, the whole list.
    func start() {
        window.afterFirstFrame { [weak self] in self?.firstFrameDone() }
        // A window the window manager keeps unmapped (started minimised) draws nothing: what it shows
        // is brought up to date all the same, for a screen reader and for when it is shown. Behind a
        // frame due by then, so that on a launch slower than that the frame still comes first.
        MainLoop.after(milliseconds: 250, yielding: true) { [weak self] in self?.firstFrameDone() }
        // Rendered, then shown (`MainWindow.show`).
        choose(providerID, remember: false, name: providerName)
        window.show()
        logger.debug("main window shown")
        listProviders()
        if case .composing(let work) = firstFrame { firstFrame = .waiting(renderDue: false, work: work) }
    }

    /// A window's first frame: what `start` renders. What comes between `start` and that frame (the
    /// provider ready, with where to sign in shown for the first time: ~5 ms of GTK's styling) waits
    /// until the frame is drawn; rendered at once, it came before the window was even mapped in about
    /// half the launches, and held it back by as much (docs/performance.md).
    ///
    /// The work `start` begins (the provider read, the list of providers) waits for the frame as well
    /// (`whenDrawn`): begun before it, its threads (~1.5 ms of CPU) shared the machine's cores with the
    /// X server drawing that frame, and its answers waited for the frame all the same.
    private enum FirstFrame {
        /// In `start`: renders are shown at once (they make the first frame); work waits.
        case composing(work: [@MainActor () -> Void])
        /// `start` has returned, the frame is not drawn yet: renders wait too (`renderDue`: one is owed).
        case waiting(renderDue: Bool, work: [@MainActor () -> Void])
        case drawn
    }

    private func firstFrameDone() {
        let (renderDue, work) =
            switch firstFrame {
            case .composing(let work): (false, work)
            case .waiting(let renderDue, let work): (renderDue, work)
            case .drawn: (false, [])
            }
        firstFrame = .drawn
        if renderDue { render() }
        for begin in work { begin() }
    }

    /// `begin` once the window's first frame is drawn: now if it is (see `FirstFrame`).
    func whenDrawn(_ begin: @escaping @MainActor () -> Void) {
        switch firstFrame {
        case .composing(let work): firstFrame = .composing(work: work + [begin])
        case .waiting(let renderDue, let work): firstFrame = .waiting(renderDue: renderDue, work: work + [begin])
        case .drawn: begin()
        }
    }

    // MARK: The runner

    /// A click is an event for the provider shown, once it can be used: with none, nothing
    /// would answer the work it starts, and the window would wait for good.
    func clicked(_ event: AppEvent) {
        guard current != nil else { return }
        send(event)
    }

    func send(_ event: AppEvent) {
        let transition = AppState.next(state, event)
        state = transition.state
        for effect in transition.effects { run(effect) }
    }

    private func run(_ effect: AppEffect) {
        let (logger, agent, post) = (self.logger, agents.agent, self.post)
        switch effect {
        case .loadProvider: loadProvider()
        // Sign in stays disabled until this answers: nothing reaches the provider before it listens.
        case .readStoredSignIn(let notice): withProvider { await Self.signedIn($0.storedSignIn(notice: notice), $0) }
        case .renewIfDue: withProvider { .event(await $0.renewal(logger: logger)) }
        case .prepareSignIn: prepareSignIn()
        // OAuthCore runs the sign-in (present, wait, dismiss, exchange, keep); its steps come back as events.
        case .signIn(let choice):
            signInTask = withProvider { await Self.signedIn($0.signIn(using: agent, for: choice, logger: logger, step: post), $0) }
        case .signInOnDevice: signInOnDevice()
        case .useAccount(let key): withProvider { .event(await $0.useAccountEvent(key)) }
        case .listAccounts: withProvider { .accounts(await $0.accounts()) }
        case .cancelSignIn:
            logger.info("Sign-in cancelled in the window")
            signInTask?.cancel()
        case .fetchProfile: withProvider { .profile(await $0.profileEvent()) }
        case .openProfile(let url): openProfile(url)
        case .signOut: withProvider { .event(await $0.signOutEvent()) }
        case .forgetSignIn: forgetSignIn()
        }
    }

    /// What the work for an effect answers: the next event, with what the window shows beside it.
    private enum Answer: Sendable {
        case event(AppEvent?)
        case signedIn((event: AppEvent, scopes: [String]), keyKept: String?, future: String?)
        case profile((event: AppEvent, picture: [UInt8]?))
        case accounts(AccountList.Entry)
    }

    /// A sign-in's answer, with where the key its tokens are bound to is kept (RFC 9449), if they are, and when the sign-in ends, if known.
    private nonisolated static func signedIn(_ answer: (event: AppEvent, scopes: [String]), _ provider: Provider) async -> Answer {
        let token = await provider.session.currentToken()
        let future = token.flatMap { SignInFuture(token: $0, configuration: provider.configuration).sentence() }
        return .signedIn(answer, keyKept: DPoPKey.whereKept(token?.dpopKey), future: future)
    }

    private func apply(_ answer: Answer) {
        switch answer {
        case .event(let event): event.map(send)
        case .signedIn(let answer, let kept, let future):
            // What the sign-in allows, where the key its tokens are bound to is, and when it ends, shown from the next render on.
            (grantedScopes, keyKept, futureLine) = (answer.scopes, kept, future)
            send(answer.event)
        case .profile(let answer):
            if case .profileLoaded = answer.event { picture = answer.picture }
            send(answer.event)
        case .accounts(let entry): showAccounts(entry)
        }
    }

    /// `job` off GTK's thread; `answer` back on it with the result, unless another provider is shown by then.
    @discardableResult
    private func work<T: Sendable>(
        _ job: @escaping @Sendable () async -> T, then answer: @escaping @MainActor @Sendable (AppController, T) -> Void
    ) -> Task<Void, Never> {
        let generation = self.generation
        return MainLoop.work(job) { [weak self] result in
            guard let self, self.generation == generation else { return }
            answer(self, result)
        }
    }

    /// `job` with the provider shown, as `work` runs it, its answer applied; nothing while no provider can be used.
    @discardableResult
    private func withProvider(_ job: @escaping @Sendable (Provider) async -> Answer) -> Task<Void, Never>? {
        guard let provider = current else { return nil }
        return work {
            await job(provider)
        } then: {
            $0.apply($1)
        }
    }

    /// An event from work still under way (a sign-in's steps), for the provider shown now.
    private var post: @Sendable (AppEvent) -> Void {
        let generation = self.generation
        return { [weak self] event in
            MainLoop.perform {
                guard let self, self.generation == generation else { return }
                self.send(event)
            }
        }
    }

    // MARK: Effects

    /// The code and where to type it in a dialog of their own, while the provider is asked whether the
    /// person has answered on the other device; the dialog goes when the wait ends, however it ends.
    private func signInOnDevice() {
        let (logger, parent, name) = (logger, window.window, providerName)
        let shown = DeviceDialogSlot()
        let show: @Sendable (DeviceAuthorization) async -> Void = { [weak self] authorization in
            await MainLoop.run {
                shown.dialog = DeviceDialog(parent: parent, providerName: name, authorization: authorization) {
                    self?.send(.cancelRequested)
                }
            }
        }
        signInTask = withProvider { provider in
            let answer = await provider.signInOnDevice(show: show, logger: logger)
            // Closed and let go on GTK's thread: a widget released on a worker's would trap.
            await MainLoop.run {
                shown.dialog?.close()
                shown.dialog = nil
            }
            return await Self.signedIn(answer, provider)
        }
    }

    /// Off GTK's thread: the provider's client secret may be asked of the keyring.
    private func loadProvider() {
        let (providers, id, generation) = (self.providers, providerID, self.generation)
        whenDrawn { [weak self] in
            guard let self, self.generation == generation else { return }
            self.work {
                await Result.catching { try await providers.provider(for: id) }
            } then: {
                $0.adopt($1)
            }
        }
    }

    /// The chosen provider can be used, or says what it lacks.
    private func adopt(_ outcome: Result<Provider, any Error>) {
        let id = providerID
        guard case .success(let provider) = outcome else {
            if case .failure(let error) = outcome {
                logger.notice("Provider \(id) cannot be used", metadata: ["error": "\(error)"])
                send(.providerUnavailable("\(error)"))
            }
            if followUp.loaded(id, usable: false).openSetUp { openSetUp() }
            return
        }
        let configuration = provider.configuration
        (current, providerName) = (provider, configuration.displayName)
        agents.reset(for: providerName, chosen: configuration.userAgent)
        logger.info("Provider \(configuration.displayName)")
        render()
        send(.providerReady(notice: followUp.loaded(id, usable: true).notice))
    }

    /// A sign-in is the likely next step: its agent is made ready once the window has drawn.
    private func prepareSignIn() {
        MainLoop.after(milliseconds: 50) { [weak self, generation] in
            // Still signed out with the same provider by then (the person may already have clicked).
            guard let self, self.generation == generation, self.state.accepts(.signInRequested), self.current != nil else { return }
            self.agents.prepare()
        }
    }

    private func openProfile(_ url: URL) {
        do {
            try window.window.showURI(url.absoluteString)
            logger.info("Opened the profile in the default browser")
            send(.profileOpened)
        } catch {
            send(.profileOpenFailed("Could not open your web browser: \(error)"))
        }
    }

    /// Shows the state, with every path under the home folder as `~/…`.
    func render() {
        if case .waiting(_, let work) = firstFrame {
            firstFrame = .waiting(renderDue: true, work: work)
            return
        }
        var model = ViewModel(
            state: state, providerName: providerName, storeName: HomeFolder.shortened(providers.store.displayName),
            userAgent: agents.chosen, scopes: grantedScopes, keyKept: keyKept, future: futureLine, account: accountEntry.current)
        model.status = HomeFolder.shortened(model.status)
        model.setUpVisible = model.setUpVisible && canSetUp
        let shown = ProviderEntry(id: providerID, displayName: providerName)
        // Until the whole list is read (see `start`), it holds the provider shown alone.
        model.providers = providerEntries.isEmpty ? [shown] : providerEntries
        model.shownProvider = shown
        // Where to sign in, and whether on another device: the ready provider's, none before.
        if let configuration = current?.configuration {
            (model.userAgents, model.chosenUserAgent) = (configuration.usableUserAgents, agents.chosen)
            model.offersDeviceSignIn = configuration.deviceAuthorizationEndpoint != nil
        }
        (model.accounts, model.accountInUse) = (accountEntry.accounts, accountEntry.current?.key)
        (model.picture, model.accountPictures) = (picture, accountPictures)
        window.render(model)
    }
}
