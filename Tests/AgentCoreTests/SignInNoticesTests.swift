import AgentCore
import Foundation
import OAuthCore
import Synchronization
import TestSupport
import Testing

/// What the notices sent were, in order.
final class RecordedNotices: NoticeSender, @unchecked Sendable {
    private let sent = Mutex<[Notice]>([])
    var all: [Notice] { sent.withLock { $0 } }
    func send(_ notice: Notice) async { sent.withLock { $0.append(notice) } }
}

/// Issue 40 §2: the agent tells the person when a sign-in ended, at once and once, and when one's
/// known end is within a week, once a day; each kind can be turned off.
@Suite struct SignInNoticesTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notices-\(UUID().uuidString)")
    var settings: URL { directory.appendingPathComponent("config/notifications.json") }
    var state: URL { directory.appendingPathComponent("state/notices.json") }

    /// Against the real sandbox: a refresh token past its life ends the sign-in at the agent's next
    /// renewal; that is said once, with "Sign in again", and never with a token in it.
    @Test func aSignInTheProviderEndedIsSaidOnceAtTheRenewalThatFoundIt() async throws {
        let home = try await AgentHome(sandbox: ["--refresh-token-ttl", "1"])
        let kept = try await home.signIn()
        let recorded = RecordedNotices()
        let notices = SignInNotices(sender: recorded, settingsFile: settings, stateFile: state)
        let broker = home.broker { provider, key, account, ended in
            await notices.ended(providerID: provider.id, providerName: provider.name, accountKey: key, account: account, ended)
        }
        try await Task.sleep(for: .milliseconds(1500))  // past the refresh token's second
        let renewNow = AgentRequest(target: .provider("sandbox"), minimumValidity: AgentRequest.renewNow)
        for _ in 0..<3 {
            guard case .failure(let refusal) = await broker.token(for: renewNow) else { return #expect(Bool(false), "a token") }
            #expect(refusal.kind == .signedOut)
        }
        let said = recorded.all
        #expect(said.count == 1, "\(said)")
        let notice = try #require(said.first)
        #expect(notice.kind == .ended && notice.signInAgain == Notice.Place(providerID: "sandbox", accountKey: "sandbox"))
        #expect(notice.id == "ended-sandbox" && notice.signInAgain?.target == "sandbox sandbox")
        #expect(Notice.Place(target: "sandbox sandbox@1a2b") == Notice.Place(providerID: "sandbox", accountKey: "sandbox@1a2b"))
        for unusable in ["sandbox", "sandbox a b", "../x sandbox", " sandbox", ""] {
            #expect(Notice.Place(target: unusable) == nil, "\(unusable)")
        }
        #expect(notice.title == "Your sign-in to Sandbox provider (offline demo) (ada@sandbox.example) has ended", "\(notice.title)")
        #expect(notice.body.contains("no longer accepts your sign-in"), "\(notice.body)")
        for secret in [kept.accessToken, kept.refreshToken ?? "-"] {
            #expect(!notice.title.contains(secret) && !notice.body.contains(secret))
        }
    }

    @Test func aKindTurnedOffIsNotSaid() async throws {
        try NoticeSettings(ended: false, ending: true).write(settings)
        let recorded = RecordedNotices()
        let notices = SignInNotices(sender: recorded, settingsFile: settings, stateFile: state)
        await notices.ended(
            providerID: "mine", providerName: "Mine", accountKey: "mine", account: nil, AuthSession.Ended(reason: "Gone.", at: Date()))
        #expect(recorded.all.isEmpty)
        #expect(NoticeSettings.read(settings) == NoticeSettings(ended: false, ending: true))
    }

    func ending(in seconds: TimeInterval, from now: Date) -> SignInFuture {
        var token = Token(accessToken: "at", refreshToken: "rt", expiresAt: now.addingTimeInterval(600), receivedAt: now)
        token.refreshExpiresAt = now.addingTimeInterval(seconds)
        return SignInFuture(token: token)
    }

    /// Within a week, once a day per account, kept across an agent started again; further off, nothing.
    @Test func anEndWithinAWeekIsSaidOnceADay() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = Mutex(start)
        let recorded = RecordedNotices()
        func notices() -> SignInNotices {
            SignInNotices(sender: recorded, settingsFile: settings, stateFile: state, now: { clock.withLock { $0 } })
        }
        let accounts = [
            (
                providerID: "mine", providerName: "Mine", accountKey: "mine", account: "ada@example.com" as String?,
                future: ending(in: 3 * 86_400, from: start)
            ),
            (providerID: "far", providerName: "Far", accountKey: "far", account: nil, future: ending(in: 30 * 86_400, from: start)),
        ]
        await notices().sweep(accounts)
        await notices().sweep(accounts)
        #expect(recorded.all.map(\.id) == ["ending-mine"], "\(recorded.all)")
        #expect(recorded.all.first?.title == "Your sign-in to Mine (ada@example.com) ends in 3 days")
        clock.withLock { $0 = start.addingTimeInterval(86_400 + 60) }
        await notices().sweep(accounts)
        #expect(recorded.all.map(\.id) == ["ending-mine", "ending-mine"], "a day later, again")
        try NoticeSettings(ended: true, ending: false).write(settings)
        clock.withLock { $0 = start.addingTimeInterval(2 * 86_400 + 120) }
        await notices().sweep(accounts)
        #expect(recorded.all.count == 2, "turned off")
    }
}
