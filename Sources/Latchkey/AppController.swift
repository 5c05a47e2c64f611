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
/// actor's own executor never runs while GTK's loop does.
@MainActor
final class AppController {
    let window: MainWindow
    private let configuration: ProviderConfiguration
    private let store: any TokenStore
    private let session: AuthSession
    private let profileClient: ProfileClient
    private let providerReady: @Sendable () throws -> Void
    private let logger: Logger
    private lazy var agent = WebViewUserAgent(parent: window.window, providerName: configuration.displayName)

    private(set) var state = AppState.starting {
        didSet {
            guard state != oldValue else { return }
            logger.debug("state \(Self.name(of: state))")
            render()
            // Whenever Sign in becomes possible, have the next sign-in window ready.
            if state.accepts(.signInRequested) { prepareSignIn() }
        }
    }

    /// Signed out, a sign-in is the likely next step: load WebKit and start its
    /// web process now, after the window has drawn, so the page appears sooner;
    /// and open libcurl, so the code exchange after the redirect need not wait
    /// for it. Signed in, both wait until they are needed.
    private func prepareSignIn() {
        MainLoop.after(milliseconds: 50) { [weak self] in
            // Still signed out by then (the person may already have clicked): prepare.
            guard let self, self.state.accepts(.signInRequested) else { return }
            self.agent.prepare()
            let logger = self.logger
            Task.detached {
                do { try CurlTransport.load() } catch { logger.warning("\(error)") }
            }
        }
    }

    private var storeName: String { Self.shortened(store.displayName) }

    /// Shows the state. Every sentence in it names paths under the home folder
    /// as `~/…`: the store's notices, and the sentences of its errors.
    private func render() {
        var model = ViewModel(state: state, providerName: configuration.displayName, storeName: storeName)
        model.status = Self.shortened(model.status)
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
        application: Application, configuration: ProviderConfiguration, store: any TokenStore, networkTimeout: Double,
        providerReady: @escaping @Sendable () throws -> Void, logger: Logger
    ) {
        self.providerReady = providerReady
        self.configuration = configuration
        self.store = store
        self.logger = logger
        let tokenClient = TokenClient(
            configuration: configuration, timeout: networkTimeout, logger: Logger(label: "OAuthCore.TokenClient"))
        profileClient = ProfileClient(
            configuration: configuration, timeout: networkTimeout, logger: Logger(label: "OAuthCore.ProfileClient"))
        session = AuthSession(
            configuration: configuration, store: store, tokenClient: tokenClient, logger: Logger(label: "OAuthCore.AuthSession"))
        window = MainWindow(application: application, providerName: configuration.displayName)
        render()
        window.signIn.onClicked { [weak self] in self?.signIn() }
        window.getProfile.onClicked { [weak self] in self?.getProfile() }
        window.openProfile.onClicked { [weak self] in self?.openProfile() }
        window.signOut.onClicked { [weak self] in self?.signOut() }
    }

    private func send(_ event: AppEvent) {
        state = AppState.next(state, event)
    }

    /// Reads the stored sign-in off GTK's thread; renews it quietly if it is about to expire.
    func start() {
        logger.debug("main window shown")
        let (session, providerReady) = (self.session, self.providerReady)
        Task.detached { [weak self] in
            // Sign in stays disabled until this answers: nothing reaches the provider before it listens.
            do {
                // Up to 10 s reading the sandbox's first line: on a thread of its own, not the pool's.
                try await BlockingWork.run { Result { try providerReady() } }.get()
            } catch {
                MainLoop.perform { self?.send(.launched(signedIn: false, notice: "\(error)")) }
                return
            }
            let signedIn = await session.isSignedIn
            let warning = await session.storeWarning
            MainLoop.perform { self?.send(.launched(signedIn: signedIn, notice: warning)) }
            guard signedIn else { return }
            do {
                _ = try await session.freshToken()
            } catch OAuthError.signedOut(let reason) {
                MainLoop.perform { self?.send(.sessionEnded(reason)) }
            } catch {
                // A passing failure: the sign-in is kept, and Get my profile will try again.
                self?.logger.notice("Could not renew the sign-in at launch", metadata: ["error": "\(error)"])
            }
        }
    }

    /// OAuthCore runs the sign-in (present, wait, dismiss, exchange, keep);
    /// this only starts it and shows its steps.
    private func signIn() {
        guard state.accepts(.signInRequested) else { return }
        send(.signInRequested)
        let (session, agent, logger) = (self.session, self.agent, self.logger)
        Task.detached { [weak self] in
            do {
                let outcome = try await session.signIn(using: agent) { step in
                    MainLoop.perform {
                        switch step {
                        case .redirectReceived: self?.send(.redirectReceived)
                        case .tokensReceived: self?.send(.tokensReceived)
                        }
                    }
                }
                logger.debug("signed in")
                MainLoop.perform { self?.send(.signInSucceeded(notice: outcome.storeNotice)) }
            } catch {
                let failure = error as? OAuthError ?? .userAgent("\(error)")
                logger.notice("Sign-in did not complete", metadata: ["error": "\(failure)"])
                MainLoop.perform { self?.send(.signInFailed(failure)) }
            }
        }
    }

    private func getProfile() {
        guard state.accepts(.profileRequested) else { return }
        send(.profileRequested)
        let (session, profileClient) = (self.session, self.profileClient)
        Task.detached { [weak self] in
            do {
                let profile = try await profileClient.fetch(using: session)
                let picture = await Self.picture(at: profile.pictureURL)
                MainLoop.perform {
                    self?.window.showPicture(picture)
                    self?.send(.profileLoaded(profile))
                }
            } catch {
                let failure = error as? OAuthError ?? .network(endpoint: .profile, reason: "\(error)")
                MainLoop.perform { self?.send(.profileFailed(failure)) }
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

    /// `latchkey --sign-out` run while this window is open: signed in, it is
    /// the Sign out button; otherwise whatever the store still holds is cleared.
    func signOutRequestedElsewhere() {
        logger.info("Sign-out requested by another process")
        if state.accepts(.signOutRequested) { return signOut() }
        let session = self.session
        Task.detached { await session.signOut() }
    }

    private func signOut() {
        guard state.accepts(.signOutRequested) else { return }
        send(.signOutRequested)
        let session = self.session
        let name = configuration.displayName
        Task.detached { [weak self] in
            let warning = await session.signOut()
            MainLoop.perform { self?.send(.signedOut(notice: warning ?? "Signed out of \(name).")) }
        }
    }

    private static func name(of state: AppState) -> String {
        String(describing: state).split(separator: "(").first.map(String.init) ?? "?"
    }
}
