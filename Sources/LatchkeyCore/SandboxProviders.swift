/// The offline sandbox's providers, which live only while the window runs (a child process on a
/// port of its own each launch): the window lists them first and starts with the first; `status`
/// says what they hold; the agent and `latchkey token` serve no token of theirs; no provider added
/// or discovered takes their ids.
public enum SandboxProviders {
    /// OAuth 2.0 and OpenID Connect.
    public static let id = "sandbox"
    /// Both, as the list shows them: OAuth 2.0, then OAuth 1.0a, served by the one child.
    public static let ids = [id, "sandbox-oauth1"]

    public static func contains(_ id: String) -> Bool { ids.contains(id) }
}
