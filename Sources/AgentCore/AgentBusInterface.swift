/// The agent's D-Bus interface (docs/agent.md#d-bus) as one table: the introspection XML the agent
/// exports is written from it, and calls are dispatched by it (`AgentBusMethod(rawValue:)`, then a
/// switch the compiler holds to every case), so a method cannot be described and not served, or
/// served under another name. A new method is a case here, its arguments, and its case in the
/// agent's `AgentInterface` (Sources/LatchkeyAgent).
public enum AgentBusInterface {
    /// The interface's name carries its version: methods are only ever added to it, and a method's
    /// arguments never change; a change that breaks a caller is `Agent2`, beside this one.
    public static let name = "io.github.latchkey.Agent1"
    public static let busName = "io.github.latchkey.Agent"
    public static let objectPath = "/io/github/latchkey/Agent1"

    /// A refusal's D-Bus error name: `…Agent1.Error.Denied`, with the socket's kind names.
    public static func errorName(_ kind: AgentRefusal.Kind) -> String { name + ".Error." + kind.name }

    /// The introspection XML of the one interface, as GDBus takes it.
    public static var introspection: String {
        let methods = AgentBusMethod.allCases.map { method in
            let arguments = method.arguments.map {
                "      <arg name=\"\($0.name)\" type=\"\($0.type)\" direction=\"\($0.input ? "in" : "out")\"/>\n"
            }
            return "    <method name=\"\(method.rawValue)\">\n" + arguments.joined() + "    </method>\n"
        }
        return "<node>\n  <interface name=\"\(name)\">\n" + methods.joined() + "  </interface>\n</node>\n"
    }
}

/// One method of the agent's D-Bus interface.
public enum AgentBusMethod: String, CaseIterable, Sendable {
    case listProviders = "ListProviders"
    case listAccounts = "ListAccounts"
    case getToken = "GetToken"
    case getTokenForResource = "GetTokenForResource"
    /// GetToken, and a DPoP proof signed for the caller's request (method, URL) to go with the token.
    case getProvedToken = "GetProvedToken"
    case signIn = "SignIn"
    case signOut = "SignOut"
    case listPrograms = "ListPrograms"
    case forgetProgram = "ForgetProgram"

    public struct Argument: Sendable, Equatable {
        public let name: String
        /// Its D-Bus type signature.
        public let type: String
        /// The caller's (in), else the answer's (out).
        public let input: Bool
    }

    private static func into(_ name: String, _ type: String) -> Argument { Argument(name: name, type: type, input: true) }
    private static func out(_ name: String, _ type: String) -> Argument { Argument(name: name, type: type, input: false) }
    private static let token = [out("token", "s"), out("token_type", "s"), out("expires_at", "x"), out("scopes", "as")]

    /// Its arguments, in order, the caller's first.
    public var arguments: [Argument] {
        switch self {
        case .listProviders: [Self.out("providers", "a(sss)")]
        case .listAccounts: [Self.out("accounts", "a(ssss)")]
        case .getToken: [Self.into("provider", "s"), Self.into("options", "a{sv}")] + Self.token
        case .getTokenForResource: [Self.into("resource", "s"), Self.into("options", "a{sv}")] + Self.token
        case .getProvedToken:
            [Self.into("provider", "s"), Self.into("options", "a{sv}"), Self.into("method", "s"), Self.into("url", "s")] + Self.token
                + [Self.out("proof", "s")]
        case .signIn: [Self.into("provider", "s")]
        case .signOut: [Self.into("provider", "s"), Self.out("message", "s")]
        case .listPrograms: [Self.out("programs", "a(sssx)")]
        case .forgetProgram: [Self.into("program", "s"), Self.into("provider", "s")]
        }
    }

    /// Whether an app in a Flatpak sandbox may call it: tokens (which the person is asked about), the
    /// accounts it was always allowed (`ListAccounts` answers it those alone), and nothing that would
    /// tell it, or change, what else the person signed in to.
    public var openToSandboxedApps: Bool {
        self == .getToken || self == .getTokenForResource || self == .getProvedToken || self == .listAccounts
    }
}
