import AgentCore
import ArgumentParser
import LatchkeyCore
import LatchkeyServices

/// `latchkey notifications`: which kinds of notice the agent sends (issue 40 §2), each on or off.
struct NotificationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Say which notifications the agent sends: a sign-in that ended, a sign-in that ends within a week.",
        discussion: """
            With no option, prints each kind and whether it is on. Both are on until turned off. The agent reads this \
            at each notice: no restart is needed. Never a token or a code in a notification.
            """)

    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @Option(help: "A sign-in the provider ended (revoked, expired, a password changed): said at once, with Sign in again.")
    var ended: Switch?

    @Option(help: "A sign-in whose known end (`latchkey status` shows it) is within a week: said once a day at most.")
    var ending: Switch?

    func run() throws {
        let file = LatchkeyFiles.notificationSettings
        var settings = NoticeSettings.read(file)
        if let ended { settings.ended = ended == .on }
        if let ending { settings.ending = ending == .on }
        if ended != nil || ending != nil {
            do { try settings.write(file) } catch {
                Descriptor.standardError.write("latchkey: \(error)\n")
                throw ExitCode.failure
            }
        }
        print("ended: \(settings.ended ? "on" : "off")  (a sign-in the provider ended)")
        print("ending: \(settings.ending ? "on" : "off")  (a sign-in that ends within a week)")
    }
}
