import AgentCore
import ArgumentParser
import FoundationEssentials
import GioKit
import Glibc
import GtkKit
import LatchkeyCore
import LatchkeyServices
import OAuthCore

/// `latchkey-app agent ask`: one consent question on the desktop, for the agent, which links no
/// GTK (`AgentHelper` says what goes in and out). Shown as the agent's, not as another program's.
struct AgentAskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ask", abstract: "Show the agent's question (the agent starts this).", shouldDisplay: false)

    /// Most bytes of a prompt: its particulars are clipped long before (a command line of 64 KiB).
    static let largestPrompt = 1 << 20

    func run() throws {
        // Read first, whole, before anything slow: the agent writes it and then waits on the answer.
        guard let prompt = ConsentPrompt(line: Self.firstLine()) else {
            Descriptor.standardError.write(
                "latchkey: `agent ask` shows a question the agent writes on its input; it is not for a person.\n")
            throw ExitCode(AgentHelper.Exit.misused.rawValue)
        }
        // The answer goes to the agent's pipe, which nothing this process starts may hold.
        let answerTo = TokenCommand.setStandardOutputAside()
        let answered = MainActor.assumeIsolated { () -> Bool in
            GtkKit.Application.setName("Latchkey agent", programName: "latchkey-agent")
            guard MainLoop.initializeWithoutApplication() else { return false }
            let dialog = ConsentDialog(prompt) { answer in
                answerTo.write(answer.word + "\n")
                MainLoop.quit()
            }
            // More on the input, or its end: the agent took the question back (or ended).
            MainContext.watch(STDIN_FILENO) {
                MainLoop.perform { dialog.dismiss() }
                return false
            }
            MainLoop.runUntilQuit()
            return true
        }
        if !answered { throw ExitCode(AgentHelper.Exit.noDisplay.rawValue) }
    }

    /// The prompt's line, read a byte at a time so that nothing after it is taken from the pipe.
    static func firstLine() -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < largestPrompt {
            let n = read(STDIN_FILENO, &byte, 1)
            if n < 0, errno == EINTR { continue }
            guard n == 1, byte != UInt8(ascii: "\n") else { break }
            line.append(byte)
        }
        return line
    }
}

/// `latchkey-app agent sign-in PROVIDER`: the provider's sign-in (its window, or the browser) for
/// the agent, kept where the window keeps it; the sentence on standard output when it did not end signed in.
struct AgentSignInCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-in", abstract: "Show a sign-in for the agent (the agent starts this).", shouldDisplay: false)

    @Argument(help: "The provider's id.")
    var provider: String

    @OptionGroup var waits: Waits

    func run() throws {
        // What is said goes to the agent's pipe, which the browser this may start must not hold: the
        // agent waits for the pipe's end.
        let say = TokenCommand.setStandardOutputAside()
        let services = Services(waits)
        let id = provider
        let configuration: ProviderConfiguration
        do { configuration = try wait { try await services.configuration(of: id) } } catch {
            say.write("\(error)\n")
            throw ExitCode(AgentHelper.Exit.failed.rawValue)
        }
        let provider = Provider(
            configuration: configuration, store: services.tokens, network: services.network, accounts: LatchkeyFiles.accounts)
        let outcome = MainActor.assumeIsolated { () -> Result<Void, OAuthError>? in
            GtkKit.Application.setName("Latchkey agent", programName: "latchkey-agent")
            // The display first, told apart from every other way a sign-in can end.
            guard MainLoop.initializeWithoutApplication() else { return nil }
            return TokenCommand.signInInteractively(provider) { .success(()) }
        }
        switch outcome {
        case nil: throw ExitCode(AgentHelper.Exit.noDisplay.rawValue)
        case .success?: return
        case .failure(let error) where TokenCommand.exit(for: error) == .signInUnfinished:
            throw ExitCode(AgentHelper.Exit.cancelled.rawValue)
        case .failure(let error):
            say.write("\(error)\n")
            throw ExitCode(AgentHelper.Exit.failed.rawValue)
        }
    }
}
