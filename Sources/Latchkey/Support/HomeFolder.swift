import FoundationEssentials
import OAuthCore

/// The person's home folder, as every sentence the window shows names it: `~`.
enum HomeFolder {
    /// Paths under the home folder as `~/…`. The home is `$HOME`, as the file
    /// store's own directory is, not the account's home from the password file.
    static func shortened(_ text: String) -> String {
        text.replacing(path, with: "~")
    }

    static let path = PathText.home
}
