/// A configuration file the sandbox cannot start with, said in one sentence.
public struct SandboxConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
