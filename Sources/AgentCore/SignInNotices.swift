import FoundationEssentials
import Glibc
import OAuthCore

/// A desktop notification the agent sends (issue 40 §2): never a token, a code or a secret; the
/// provider's and the account's names, what happened, and, for one that ended, "Sign in again".
public struct Notice: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable, Codable {
        /// A sign-in the provider ended: revoked, expired, a password changed (`invalid_grant` at a renewal).
        case ended
        /// A sign-in whose known lifetime ends within a week.
        case ending
    }

    public var kind: Kind
    /// One per account and kind: a later notice replaces an earlier one on the desktop.
    public var id: String
    public var title: String
    public var body: String
    /// The account "Sign in again" opens the window on; nil: no such button.
    public var signInAgain: Place?

    /// A provider and one of its accounts, as "Sign in again" carries them: `"<provider> <account key>"`
    /// (neither has a space: both are storage keys).
    public struct Place: Sendable, Equatable {
        public var providerID: String
        public var accountKey: String

        public init(providerID: String, accountKey: String) { (self.providerID, self.accountKey) = (providerID, accountKey) }

        public var target: String { "\(providerID) \(accountKey)" }

        public init?(target: String) {
            let words = target.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard words.count == 2, AccountList.isStorageKey(words[0]), AccountList.isStorageKey(words[1]) else { return nil }
            self.init(providerID: words[0], accountKey: words[1])
        }
    }
}

/// Which kinds of notice the person wants (`~/.config/latchkey/notifications`, written by
/// `latchkey notifications`): all of them unless turned off. A file that cannot be read turns
/// nothing off, and is said in the agent's log.
public struct NoticeSettings: Sendable, Equatable, Codable {
    public var ended = true
    public var ending = true

    public init(ended: Bool = true, ending: Bool = true) {
        (self.ended, self.ending) = (ended, ending)
    }

    public func wants(_ kind: Notice.Kind) -> Bool {
        switch kind {
        case .ended: ended
        case .ending: ending
        }
    }

    public static func read(_ file: URL) -> NoticeSettings {
        guard let data = PrivateFile.ownContents(file, in: file.deletingLastPathComponent()) else { return NoticeSettings() }
        return (try? JSONDecoder().decode(NoticeSettings.self, from: data)) ?? NoticeSettings()
    }

    public func write(_ file: URL) throws {
        do {
            try PrivateFile.prepareDirectory(file.deletingLastPathComponent())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try PrivateFile.replace(file, with: try encoder.encode(self))
        } catch let error as PrivateFileError {
            throw OAuthError.storage(error.sentence())
        }
    }
}

/// Where notices go: the desktop's notification service (`DesktopNotifications` in the agent), or a test's record.
public protocol NoticeSender: Sendable {
    func send(_ notice: Notice) async
}

/// What the agent tells the person, and how often (issue 40 §2): a sign-in the provider ended, at
/// once and once; a sign-in whose known end is within a week, at most once a day per account (when
/// it was last said is kept in `stateFile`, so that an agent started again does not say it again).
/// Each kind can be turned off (`NoticeSettings`, read again at each notice).
public actor SignInNotices {
    private let sender: any NoticeSender
    private let settingsFile: URL
    private let stateFile: URL
    private let now: @Sendable () -> Date
    /// The ends already said, by account key: the moment the session found out.
    private var endedSaid: [String: Date] = [:]

    /// How soon an end is worth saying, and how often.
    public static let warnWithin: TimeInterval = 7 * 86_400
    public static let sayAgainAfter: TimeInterval = 86_400

    public init(sender: any NoticeSender, settingsFile: URL, stateFile: URL, now: @escaping @Sendable () -> Date = { Date() }) {
        (self.sender, self.settingsFile, self.stateFile, self.now) = (sender, settingsFile, stateFile, now)
    }

    /// The provider ended `accountKey`'s sign-in (`AuthSession.ended`); said once per ending.
    public func ended(providerID: String, providerName: String, accountKey: String, account: String?, _ ended: AuthSession.Ended) async {
        guard endedSaid[accountKey] != ended.at else { return }
        endedSaid[accountKey] = ended.at
        guard NoticeSettings.read(settingsFile).ended else { return }
        let whose = account.map { " (\($0))" } ?? ""
        await sender.send(
            Notice(
                kind: .ended, id: "ended-\(accountKey)", title: "Your sign-in to \(providerName)\(whose) has ended",
                body: "\(ended.reason) Programs get no token from it until you sign in again.",
                signInAgain: Notice.Place(providerID: providerID, accountKey: accountKey)))
    }

    /// Looks at each account's known future: one whose end is within a week is said, once a day.
    public func sweep(_ accounts: [(providerID: String, providerName: String, accountKey: String, account: String?, future: SignInFuture)])
        async
    {
        guard NoticeSettings.read(settingsFile).ending else { return }
        let now = now()
        var said = readState()
        for entry in accounts {
            guard entry.future.ends(within: Self.warnWithin, now: now), let endsAt = entry.future.endsAt, endsAt > now else { continue }
            if let last = said[entry.accountKey], now.timeIntervalSince(last) < Self.sayAgainAfter { continue }
            said[entry.accountKey] = now
            let whose = entry.account.map { " (\($0))" } ?? ""
            await sender.send(
                Notice(
                    kind: .ending, id: "ending-\(entry.accountKey)",
                    title: "Your sign-in to \(entry.providerName)\(whose) ends in \(SignInFuture.span(endsAt.timeIntervalSince(now)))",
                    body: (entry.future.sentence(now: now) ?? "") + " Sign in again before then, and nothing that uses it stops.",
                    signInAgain: Notice.Place(providerID: entry.providerID, accountKey: entry.accountKey)))
        }
        writeState(said)
    }

    private struct State: Codable {
        var ending: [String: Double]
    }

    private func readState() -> [String: Date] {
        guard let data = PrivateFile.ownContents(stateFile, in: stateFile.deletingLastPathComponent()),
            let state = try? JSONDecoder().decode(State.self, from: data)
        else { return [:] }
        return state.ending.mapValues(Date.init(timeIntervalSince1970:))
    }

    private func writeState(_ said: [String: Date]) {
        guard let data = try? JSONEncoder().encode(State(ending: said.mapValues(\.timeIntervalSince1970))) else { return }
        try? PrivateFile.prepareDirectory(stateFile.deletingLastPathComponent())
        try? PrivateFile.replace(stateFile, with: data, durable: false)
    }
}
