import ArgumentParser
import FoundationEssentials
import LatchkeyServices

/// `--no-interaction`, for every command that may need a person (`latchkey token`, git's helper).
struct InteractionOption: ParsableArguments {
    @Flag(
        name: .customLong("no-interaction"),
        help: ArgumentHelp(
            "Never wait for a person: where one would have to sign in or allow this program (the agent's question), end at once "
                + "(latchkey token: exit status 6; git's helper: no answer). Also when CI is set."))
    var set = false

    /// Whether a person may be asked (this flag, `CI`, and, for git's helper, `gitSaysNo`).
    func decide(gitSaysNo: Bool = false) -> Interaction {
        Interaction.decide(noInteraction: set, environment: ProcessInfo.processInfo.environment, gitSaysNo: gitSaysNo)
    }
}
