import AgentCore
import FoundationEssentials
import GioKit
import Glibc
import LatchkeyCore
import Logging
import OAuthCore

/// The agent's D-Bus interface, `io.github.latchkey.Agent1` at `/io/github/latchkey/Agent1`
/// on the session bus (docs/agent.md documents it): what each method of `AgentBusMethod`'s table
/// does. Each call is answered off GLib's loop.
struct AgentInterface: Sendable {
    let agent: TokenAgent
    let broker: TokenBroker
    let providers: AgentProviders
    let logger: Logger

    /// Called on GLib's loop; the work runs detached and answers the call when done.
    func handle(_ call: DBusMethodCall) {
        let interface = self
        Task.detached {
            await interface.answer(call)
        }
    }

    /// Calls under way, per bus connection and per program: one flooding the agent is told it is busy
    /// (each call costs threads while its caller is identified), the others are served as ever.
    static let bySender = InFlight(most: 8)
    static let byProgram = InFlight(most: 16)
    static let busy = AgentRefusal(.failed, "Latchkey's agent is busy with this program's other calls; ask again once they are answered.")

    private func answer(_ call: DBusMethodCall) async {
        guard Self.bySender.take(call.sender) else { return fail(call, Self.busy) }
        defer { Self.bySender.release(call.sender) }
        // Who calls, as the bus vouches: this user's programs only, and (but for tokens, where the
        // person is asked) none from a Flatpak sandbox, whose app may not learn or change what the
        // person signed in to.
        guard let (credentials, program) = await Self.whoCalls(call) else {
            return fail(call, AgentRefusal(.denied, "The bus did not say who is calling."))
        }
        guard Self.byProgram.take(program) else { return fail(call, Self.busy) }
        defer { Self.byProgram.release(program) }
        let caller: Caller
        switch await identify(call, credentials, program) {
        case .success(let identified): caller = identified
        case .failure(let refusal): return fail(call, refusal)
        }
        // GDBus answers a method the XML does not name; the table names no other.
        guard let method = AgentBusMethod(rawValue: call.method) else {
            return call.fail("org.freedesktop.DBus.Error.UnknownMethod", "No method \(call.method).")
        }
        if caller.program.flatpakID != nil, !method.openToSandboxedApps {
            return fail(
                call,
                AgentRefusal(.denied, "A Flatpak app may ask for tokens and list the accounts it was allowed, and for nothing else here."))
        }
        await serve(method, call, from: caller)
    }

    /// What each method does, for a caller identified and allowed to call it.
    private func serve(_ method: AgentBusMethod, _ call: DBusMethodCall, from caller: Caller) async {
        let arguments = call.arguments
        switch method {
        case .listProviders:
            let rows = await providers.list()
            call.reply([.array(elementType: "(sss)", rows.map { .tuple([.string($0.id), .string($0.name), .string($0.state)]) })])
        case .listAccounts:
            // A sandboxed app learns of the accounts it was always allowed (for the person signed in under
            // each now), and of no other.
            let rows = await providers.accounts(
                allowed: caller.program.flatpakID.map { _ in
                    agent.grants.all.filter { $0.program.covers(caller.program) }.map { (key: $0.provider, person: $0.person) }
                })
            call.reply([
                .array(
                    elementType: "(ssss)",
                    rows.map {
                        .tuple([.string($0.named), .string($0.label), .string($0.state.kind.rawValue), .string($0.state.sentence)])
                    })
            ])
        case .getToken, .getTokenForResource, .getProvedToken:
            await token(call, method, from: caller)
        case .signIn:
            let id = arguments.first?.string ?? ""
            switch await providers.signIn(id) {
            case nil: call.reply([])
            case let refusal?: fail(call, refusal)
            }
        case .signOut:
            let named = ProviderAccount(arguments.first?.string ?? "")
            do {
                let warning = try await agent.signOut(named.provider, account: named.account)
                logger.info("Signed out over D-Bus", metadata: ["provider": "\(named.provider)"])
                call.reply([.string(warning ?? "Signed out.")])
            } catch {
                fail(call, error)
            }
        case .listPrograms:
            call.reply([
                .array(
                    elementType: "(sssx)",
                    agent.grants.all.map {
                        .tuple([
                            .string($0.program.path), .string($0.program.flatpakID ?? ""), .string($0.provider),
                            .int64(Int64($0.lastUsed ?? 0)),
                        ])
                    })
            ])
        case .forgetProgram:
            forget(call)
        }
    }

    /// ForgetProgram(program, provider): the program (its path, or a Flatpak app id) is asked again.
    private func forget(_ call: DBusMethodCall) {
        let (name, provider) = (call.arguments.first?.string ?? "", call.arguments.dropFirst().first?.string ?? "")
        guard
            let grant = agent.grants.all.first(where: {
                ($0.program.path == name || $0.program.flatpakID == name) && $0.provider == provider
            })
        else { return fail(call, AgentRefusal(.invalid, "No program \(name) is allowed for \(provider).")) }
        do {
            try agent.grants.forget(grant.program, provider: provider)
            call.reply([])
        } catch {
            fail(call, AgentRefusal(.failed, "\(error)"))
        }
    }

    /// The bus daemon's word on who calls (it is the bus's to give, not the caller's to hold up), with
    /// the program it runs, read from the link alone: what a call is counted against before anything costly.
    private static func whoCalls(_ call: DBusMethodCall) async -> (credentials: (pid: Int32, uid: UInt32), program: String)? {
        let bus = await BlockingWork.run(waitingAtMost: Identification.longest) {
            DBusPeer.credentials(of: call.sender, on: call.connection).map { ($0, Identification.key(of: $0.pid, own: .current)) }
        }
        return bus ?? nil
    }

    /// The caller, from the bus's credentials: refused unless it is this user's, and known for sure.
    /// Read on a thread of its own: /proc of a process that is stuck must not hold up the others.
    private func identify(
        _ call: DBusMethodCall, _ credentials: (pid: Int32, uid: UInt32), _ program: String
    ) async -> Result<Caller, AgentRefusal> {
        guard credentials.uid == getuid() else { return .failure(AgentRefusal(.denied, "Latchkey's agent serves its own user only.")) }
        let identified = await Identification.run(for: program) {
            () -> Result<Caller, AgentRefusal> in
            let caller = Caller.identify(pid: credentials.pid, uid: credentials.uid)
            guard case .success(let identified) = caller,
                !Self.stillHoldsItsConnection(credentials.pid, hidden: identified.program.hiddenName != nil)
            else { return caller }
            return .failure(Self.connectionHandedOn)
        }
        return identified ?? .failure(AgentRefusal(.denied, "The program that asked could not be identified in time."))
    }

    /// The session bus's sockets, as this process found the bus.
    static let busAddresses = SocketHolders.sessionBusAddresses(environment: ProcessInfo.processInfo.environment)

    /// Whether the process the bus names (the one that connected) still holds a connection to the bus,
    /// close-on-exec (`SocketHolders.holdsConnection`). Not when it exec'd another program since (D-Bus
    /// libraries open the connection close-on-exec, and a descriptor left open across an exec loses
    /// that flag), and whoever calls is a child it handed the connection to; nor when that cannot be
    /// told — but for a program that hides its descriptors with its executable (non-dumpable), which
    /// is asked about each time as a program that hides.
    static func stillHoldsItsConnection(_ pid: Int32, hidden: Bool) -> Bool {
        switch SocketHolders.holdsConnection(pid: pid, to: busAddresses) {
        case let holds?: holds
        case nil: hidden
        }
    }

    static let connectionHandedOn = AgentRefusal(
        .denied,
        "The process that connected to the bus no longer holds its connection (it became another program, and another process "
            + "calls on its connection); it gets no token.")

    private func token(_ call: DBusMethodCall, _ method: AgentBusMethod, from caller: Caller) async {
        let request: AgentRequest
        do { request = try Self.request(call, method) } catch { return fail(call, error) }
        let connected = caller.asker?.pid ?? caller.pid
        let hidden = caller.program.hiddenName != nil
        let stillTheSame = { @Sendable in
            await Identification.run(forProcess: caller.pid, own: .current) {
                caller.isStillTheSame() && Self.stillHoldsItsConnection(connected, hidden: hidden)
            } ?? false
        }
        // A question still on the screen (or a refusal waiting its turn) is taken back once the caller
        // has left the bus: the bus's own signal says so, nothing polls.
        let hangUp = HangUp()
        let watch = await BlockingWork.run { BusNameWatch(call.sender, on: call.connection) { hangUp.signal() } }
        let answer = await agent.answer(request, from: caller, stillTheSame: stillTheSame, hangUp: hangUp)
        withExtendedLifetime(watch) {}
        switch answer {
        case .success(let token):
            call.reply(
                [
                    .string(token.accessToken), .string(token.tokenType), .int64(Int64(token.expiresAt?.timeIntervalSince1970 ?? 0)),
                    .strings(token.scopes),
                ] + (method == .getProvedToken ? [.string(token.proof ?? "")] : []))
        case .failure(let refusal):
            fail(call, refusal)
        }
    }

    /// What a GetToken, GetTokenForResource or GetProvedToken call asks for, from its arguments and options.
    private static func request(_ call: DBusMethodCall, _ method: AgentBusMethod) throws(AgentRefusal) -> AgentRequest {
        let arguments = call.arguments
        let name = arguments.first?.string ?? ""
        let options = arguments.dropFirst().first ?? .array(elementType: "{sv}", [])
        var target: AgentRequest.Target
        var account: String?
        if method == .getTokenForResource {
            guard let url = URL(string: name), (try? ResourceDiscovery.identifier(of: url)) != nil else {
                throw AgentRefusal(.invalid, "The resource must be an https URL without a fragment (http only on this computer).")
            }
            target = .resource(url)
        } else {
            let named = ProviderAccount(name)
            (target, account) = (.provider(named.provider), named.account)
        }
        // `scope` as OAuth spells it (space-separated), or `scopes` as a list; `resource`: a token for it alone.
        let scopes = (options["scopes"]?.strings ?? []) + (options["scope"]?.string?.split(separator: " ").map(String.init) ?? [])
        var request = AgentRequest(target: target, account: account, scopes: scopes)
        if let resource = options["resource"] {
            guard let text = resource.string, let url = AgentRequest.resourceURL(text) else {
                throw AgentRefusal(.invalid, "\"resource\" must be a resource's URL (https://… without a fragment).")
            }
            request.resource = url
        }
        if method == .getProvedToken {
            // The request the proof goes with (RFC 9449 §7): its method and URL, and the resource's nonce.
            let url = arguments.count > 3 ? URL(string: arguments[3].string ?? "") : nil
            let proof = url.map {
                AgentRequest.ProofRequest(method: arguments[2].string ?? "", url: $0, nonce: options["dpop-nonce"]?.string)
            }
            guard let proof, proof.problem == nil else {
                throw AgentRefusal(.invalid, proof?.problem ?? "A DPoP proof's URL is an absolute http or https URL.")
            }
            request.proof = proof
        }
        if let interactive = options["interactive"] {
            guard case .bool(let value) = interactive else { throw AgentRefusal(.invalid, "\"interactive\" must be a boolean.") }
            request.interactive = value
        }
        if let minimum = options["min-valid"] {
            guard let seconds = minimum.integer, seconds >= Int64(AgentRequest.renewNow), seconds <= Int64(AgentRequest.longestValidity)
            else {
                throw AgentRefusal(.invalid, "\"min-valid\" must be a whole number of seconds from -1 to 86400.")
            }
            request.minimumValidity = Int(seconds)
        }
        return request
    }

    private func fail(_ call: DBusMethodCall, _ error: any Error) {
        let refusal = error as? AgentRefusal ?? AgentRefusal(.failed, "\(error)")
        call.fail(AgentBusInterface.errorName(refusal.kind), refusal.sentence)
    }
}
