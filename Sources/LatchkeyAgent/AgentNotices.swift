import AgentCore
import CGio
import FoundationEssentials
import GioKit
import Glibc
import InstallLayout
import LatchkeyCore
import Logging
import OAuthCore

/// The agent's notices on the desktop (issue 40 §2): sent through `DesktopNotifications`, logged
/// (their kind and provider, never their words' particulars); "Sign in again" opens the window on
/// the provider and the account. Where no notification can be sent (no session bus), they are logged only.
final class AgentNotices: Sendable {
    private let logger: Logger
    let notices: SignInNotices

    /// How often the agent looks at every sign-in's known end (the first time a minute after it starts).
    static let sweepEvery: UInt32 = 3_600_000

    init(logger: Logger) {
        self.logger = logger
        let desktop = DesktopNotifications(id: AgentBusInterface.busName) { target in
            guard let place = Notice.Place(target: target) else { return logger.warning("A notification's button said nothing usable") }
            logger.info("Sign in again, from a notification", metadata: ["provider": "\(place.providerID)"])
            Self.openWindow(on: place, logger: logger)
        }
        if desktop == nil { logger.warning("Notifications cannot be sent (no session bus): they are logged only") }
        notices = SignInNotices(
            sender: DesktopSender(desktop: desktop, logger: logger), settingsFile: LatchkeyFiles.notificationSettings,
            stateFile: LatchkeyFiles.noticesSaid)
    }

    /// Each notice to the desktop, and a line in the log (its kind and id: never its words).
    private struct DesktopSender: NoticeSender {
        let desktop: DesktopNotifications?
        let logger: Logger

        func send(_ notice: Notice) async {
            logger.notice("Notified", metadata: ["kind": "\(notice.kind.rawValue)", "notice": "\(notice.id)"])
            desktop?.send(
                id: notice.id, title: notice.title, body: notice.body, button: notice.signInAgain.map { ("Sign in again", $0.target) },
                important: notice.kind == .ended)
        }
    }

    /// What the broker calls when a renewal found a sign-in ended.
    var ended: TokenBroker.Ended {
        { [notices] provider, key, account, ended in
            await notices.ended(providerID: provider.id, providerName: provider.name, accountKey: key, account: account, ended)
        }
    }

    /// The known end of every sign-in the agent holds, looked at `first` milliseconds from now and each
    /// `sweepEvery` from then on (`TokenBroker.futures`: from memory, so no keyring prompt comes of it).
    func sweepRegularly(_ broker: TokenBroker, first: UInt32 = 60_000) {
        MainContext.after(milliseconds: first) { [self] in
            Task.detached { await self.notices.sweep(await broker.futures()) }
            sweepRegularly(broker, first: Self.sweepEvery)
        }
    }

    /// `latchkey-app --provider ID --account KEY`, reaped by GLib's loop when it ends (a window already
    /// open is asked to show that account instead).
    static func openWindow(on place: Notice.Place, logger: Logger) {
        let app = InstallLayout.current.beside("latchkey-app").path
        var argv: [UnsafeMutablePointer<CChar>?] = [
            strdup(app), strdup("--provider"), strdup(place.providerID), strdup("--account"), strdup(place.accountKey), nil,
        ]
        defer { for argument in argv { free(argument) } }
        var error: UnsafeMutablePointer<GError>?
        var pid: GPid = 0
        if g_spawn_async(nil, &argv, nil, G_SPAWN_DO_NOT_REAP_CHILD, nil, nil, &pid, &error) == 0 {
            logger.warning("The window could not be opened: \(error.map { String(cString: $0.pointee.message) } ?? "?")")
            if let error { g_error_free(error) }
            return
        }
        // Its end, heard on the agent's loop: a window that ended otherwise than a person closing it
        // (a signal, a failure) is said in the log, where nothing else would say it.
        MainContext.whenEnded(pid) { status in
            let signalled = status & 0x7f
            // Asked to end (SIGTERM, SIGINT, SIGHUP: a logout, a person's kill) is an end like closing it.
            if signalled != 0 && signalled != 0x7f && ![SIGTERM, SIGINT, SIGHUP].contains(signalled) {
                logger.warning("The window opened from a notification ended by a signal", metadata: ["signal": "\(signalled)"])
            } else if (status >> 8) & 0xff != 0 {
                logger.notice("The window opened from a notification ended with a failure", metadata: ["status": "\((status >> 8) & 0xff)"])
            } else {
                // Ended well: closed, or handed to a window already open (which then shows the account).
                logger.info("The window opened from a notification ended", metadata: ["signal": "\(signalled)"])
            }
        }
    }
}
