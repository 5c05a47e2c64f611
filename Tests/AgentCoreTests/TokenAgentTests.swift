import AgentCore
import Foundation
import Logging
import OAuthCore
import TestSupport
import Testing

/// The person's say, against a real sandbox: a program is asked about once, kept
/// when always allowed, refused when denied or when nobody can be asked.
@Suite struct TokenAgentTests {
    func agent(_ home: AgentHome, _ person: ScriptedPerson, timeout: Duration = .seconds(120)) -> TokenAgent {
        TokenAgent(broker: home.broker(), grants: home.grants, asker: person, logger: home.logger, consentTimeout: timeout)
    }

    let request = AgentRequest(target: .provider("sandbox"), applicationHint: "a test")

    @Test func alwaysAllowIsAskedOnceAndKept() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        let first = try await agent.answer(request, from: .thisProcess).get()
        let second = try await agent.answer(request, from: .thisProcess).get()
        #expect(first.accessToken == second.accessToken && !first.accessToken.isEmpty)
        #expect(person.questions.count == 1, "asked the first time only")
        let question = try #require(person.questions.first)
        #expect(question.providerID == "sandbox" && question.providerName == "Sandbox provider (offline demo)")
        #expect(question.caller.program == Caller.thisProcess.program && question.applicationHint == "a test" && !question.changed)
        let grant = try #require(home.grants.all.first)
        #expect(grant.program == Caller.thisProcess.program && grant.provider == "sandbox" && grant.lastUsed != nil)
    }

    /// Issue 27: a program is allowed for one account; another account of the same provider is asked about afresh.
    @Test func aProgramAllowedForOneAccountIsAskedAboutAnother() async throws {
        let home = try await AgentHome()
        let ada = try await home.signIn()
        let grace = try await home.signIn(username: "grace", password: "compiler", another: true)
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        let first = await agent.answer(AgentRequest(target: .provider("sandbox"), account: "ada@sandbox.example"), from: .thisProcess)
        #expect(try first.get().accessToken == ada.accessToken)
        #expect(person.questions.map(\.providerID) == ["sandbox"], "Ada's account is the provider's first: its key is the provider's id")
        // Grace's account is in use: asking without an account is asking for hers, and asks again.
        let second = try await agent.answer(request, from: .thisProcess).get()
        #expect(second.accessToken == grace.accessToken && person.questions.count == 2)
        let question = try #require(person.questions.last)
        #expect(
            question.providerID.hasPrefix("sandbox@") && question.providerName == "Sandbox provider (offline demo) (grace@sandbox.example)")
        #expect(Set(home.grants.all.map(\.provider)) == ["sandbox", question.providerID])
        _ = try await agent.answer(request, from: .thisProcess).get()
        #expect(person.questions.count == 2, "each allowed always, neither asked again")
    }

    /// Ada allowed a program always; she signs out and Grace signs in under the same account key. The
    /// program is asked about again before it gets Grace's token: by the agent's sign-out, which forgets
    /// the account's grants, and, signed out elsewhere, by the grant naming Ada.
    @Test(arguments: [true, false])
    func aGrantDoesNotMoveToTheNextPersonUnderTheSameKey(signedOutThroughTheAgent: Bool) async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        _ = try await agent.answer(request, from: .thisProcess).get()
        #expect(home.grants.all.map(\.provider) == ["sandbox"] && home.grants.all.first?.person != nil, "kept, naming Ada")
        if signedOutThroughTheAgent {
            _ = try await agent.signOut("sandbox", account: nil)
            #expect(home.grants.all.isEmpty, "signing out forgets the account's grants")
        } else {
            _ = await Provider(configuration: try home.configuration("sandbox"), store: home.store, accounts: home.accounts).signOut()
            #expect(home.grants.all.count == 1, "signed out where the grants are not known")
        }
        let grace = try await home.signIn(username: "grace", password: "compiler")
        let answer = try await agent.answer(request, from: .thisProcess).get()
        #expect(answer.accessToken == grace.accessToken)
        #expect(person.questions.count == 2, "asked again for Grace")
    }

    /// A program that asks again right after a Deny is not asked about at once (a stray click must not
    /// be all it takes): its question waits out the quiet after the Deny, then is asked.
    @Test func askedAgainRightAfterADenyWaitsOutTheQuiet() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .deny)
        let agent = TokenAgent(
            broker: home.broker(), grants: home.grants, asker: person, logger: home.logger, quietAfterDeny: .seconds(1))
        // Taken before the Deny: the quiet counts from the Deny, a moment later, inside the agent.
        let beforeTheDeny = ContinuousClock.now
        _ = await agent.answer(request, from: .thisProcess)
        _ = await agent.answer(request, from: .thisProcess)
        #expect(person.questions.count == 2)
        #expect(ContinuousClock.now - beforeTheDeny >= .seconds(1), "the second question came after the quiet")
    }

    @Test func allowOnceIsAskedEachTime() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce)
        let agent = agent(home, person)
        _ = try await agent.answer(request, from: .thisProcess).get()
        _ = try await agent.answer(request, from: .thisProcess).get()
        #expect(person.questions.count == 2)
        #expect(home.grants.all.isEmpty)
    }

    @Test func denyIsSaidAndNothingIsKept() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        // Grace's account in use: a refusal names what was asked, never whose account it would have been.
        try await home.signIn(username: "grace", password: "compiler", another: true)
        let agent = agent(home, ScriptedPerson(answering: .deny))
        let answer = await agent.answer(request, from: .thisProcess)
        #expect(
            answer
                == .failure(
                    AgentRefusal(
                        .denied,
                        "\(Caller.thisProcess.program.path) gets no token for “sandbox”: you have not allowed it that, or there is no "
                            + "such sign-in (`latchkey status` lists yours).")))
        #expect(home.grants.all.isEmpty)
    }

    @Test func withNobodyToAskTheAnswerIsNoAndSaysHowToAllow() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let answer = await agent(home, ScriptedPerson(answering: nil)).answer(request, from: .thisProcess)
        guard case .failure(let refusal) = answer else { return #expect(Bool(false), "a token was given") }
        #expect(refusal.kind == .denied)
        #expect(refusal.sentence.contains("has no display to ask you on"))
        #expect(refusal.sentence.hasSuffix("latchkey agent allow \(Caller.thisProcess.program.path) sandbox"))
    }

    @Test func requestsWaitingOnOneQuestionShareItsAnswer() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce, holds: true)
        let agent = agent(home, person)
        async let first = agent.answer(request, from: .thisProcess)
        async let second = agent.answer(request, from: .thisProcess)
        while person.questions.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        // Both requests are in before the person answers: give the second a moment to join the first.
        try await Task.sleep(for: .milliseconds(200))
        person.release()
        let answers = await [first, second]
        #expect(answers.allSatisfy { (try? $0.get()) != nil })
        #expect(person.questions.count == 1, "one dialog for both")
    }

    @Test func aRevokedOrChangedProgramIsAskedAgain() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        _ = try await agent.answer(request, from: .thisProcess).get()
        try home.grants.forget(Caller.thisProcess.program, provider: "sandbox")
        _ = try await agent.answer(request, from: .thisProcess).get()
        #expect(person.questions.count == 2, "revoked: asked again")
        let me = Caller.thisProcess
        var file = me.file
        file.modified += 1
        let rebuilt = Caller(pid: me.pid, uid: me.uid, program: me.program, file: file, commandLine: me.commandLine)
        _ = try await agent.answer(request, from: rebuilt).get()
        #expect(person.questions.count == 3 && person.questions.last?.changed == true, "a new executable: asked again, and said why")
    }

    /// Issue 36 §7: before the person allowed a program anything, asking for what there is none of
    /// (a provider, an account, an issuer) is refused in a Deny's words, nobody asked; and each such
    /// answer costs the program what a Deny does, a quiet before the next.
    @Test(arguments: [true, false])
    func askingForWhatThereIsNoneOfIsRefusedAsADenyIs(display: Bool) async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: display ? .deny : nil)
        let quiet = Duration.milliseconds(400)
        let agent = TokenAgent(broker: home.broker(), grants: home.grants, asker: person, logger: home.logger, quietAfterDeny: quiet)
        let me = Caller.thisProcess
        let sentence = { (request: AgentRequest) in
            display ? ConsentSentence.notAllowed(me.program, asked: request) : ConsentSentence.nobodyToAsk(me, asked: request)
        }
        // What there is, refused by the person (or for want of one): the words to compare with.
        let clock = ContinuousClock()
        let start = clock.now
        #expect(await agent.answer(request, from: me) == .failure(AgentRefusal(.denied, sentence(request))))
        #expect(person.questions.count == 1)
        let unknown = [
            AgentRequest(target: .provider("nope")),
            AgentRequest(target: .provider("sandbox"), account: "linus@sandbox.example"),
            AgentRequest(target: .issuer("https://nowhere.example")),
        ]
        for asked in unknown {
            let answer = await agent.answer(asked, from: me)
            #expect(answer == .failure(AgentRefusal(.denied, sentence(asked))), "\(asked.asked)")
        }
        #expect(person.questions.count == 1, "nobody is asked about what there is none of")
        // One refusal per quiet, counted from the first request: the guesses cost three.
        #expect(clock.now - start >= quiet * 3, "four refusals within \(clock.now - start)")
        // The words themselves hold nothing but what was asked.
        #expect(sentence(unknown[1]).contains("“sandbox/linus@sandbox.example”") && !sentence(unknown[1]).contains("Sandbox provider"))
    }

    @Test func aProgramThatRunsOthersIsNeverAllowedAlways() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        let me = Caller.thisProcess
        let shell = Caller(
            pid: me.pid, uid: me.uid, program: Program(path: "/usr/bin/bash"), file: me.file, commandLine: ["bash"], started: me.started)
        _ = try await agent.answer(request, from: shell).get()
        _ = try await agent.answer(request, from: shell).get()
        #expect(person.questions.count == 2 && person.questions.allSatisfy { !$0.offersAlways }, "asked each time, never offered Always")
        #expect(home.grants.all.isEmpty)
    }

    /// Answered "Always allow" all the same (a dialog of another version, a scripted answer): for a
    /// program that hides its file nothing is kept, and the next call asks again.
    @Test func aProgramThatHidesItsFileIsNeverAllowedAlways() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow)
        let agent = agent(home, person)
        let me = Caller.thisProcess
        let hidden = Caller(
            pid: me.pid, uid: me.uid, program: .hidden(calling: "oidc-token"), file: .unknown, commandLine: ["oidc-token"],
            started: me.started)
        _ = try await agent.answer(request, from: hidden, stillTheSame: { true }).get()
        _ = try await agent.answer(request, from: hidden, stillTheSame: { true }).get()
        #expect(person.questions.count == 2 && person.questions.allSatisfy { !$0.offersAlways }, "asked each time, never offered Always")
        #expect(home.grants.all.isEmpty)
    }

    @Test func aProgramThatBecameAnotherWhileItWaitedGetsNothing() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let answer = await agent(home, ScriptedPerson(answering: .allowOnce)).answer(request, from: .thisProcess, stillTheSame: { false })
        #expect(
            answer
                == .failure(
                    AgentRefusal(.denied, "The program that asked ended or became another program while it waited; it gets no token.")))
    }

    @Test func anotherProcessOfTheSameProgramWaitsThenIsAskedInTurn() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce, holds: true)
        let agent = agent(home, person)
        async let first = agent.answer(request, from: .thisProcess)
        while person.questions.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        async let second = agent.answer(request, from: .anotherOfThisProgram)
        try await Task.sleep(for: .milliseconds(200))
        #expect(person.questions.count == 1, "one question at a time per program and provider")
        person.release()
        while person.questions.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        person.release()
        let answers = await [first, second]
        #expect(answers.allSatisfy { (try? $0.get()) != nil })
        #expect(
            person.questions.map(\.caller.pid) == [Caller.thisProcess.pid, Caller.anotherOfThisProgram.pid],
            "an Allow once is its own process's")
    }

    @Test func anAlwaysAllowServesTheOtherProcessesThatWaited() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow, holds: true)
        let agent = agent(home, person)
        async let first = agent.answer(request, from: .thisProcess)
        while person.questions.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        async let second = agent.answer(request, from: .anotherOfThisProgram)
        try await Task.sleep(for: .milliseconds(200))
        person.release()
        let answers = await [first, second]
        #expect(answers.allSatisfy { (try? $0.get()) != nil })
        #expect(person.questions.count == 1, "the program is allowed always: nobody is asked again")
    }

    /// A process's connection kept across an exec (perhaps opened by the program it ran before) asks
    /// while a question about the same process's own connection is on the screen: it is asked about
    /// itself, and gets nothing from the other's Allow once.
    @Test func aConnectionKeptAcrossAnExecSharesNoOtherAnswer() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce, holds: true)
        let agent = agent(home, person)
        var kept = Caller.thisProcess
        kept.connectionKeptAcrossExec = true
        async let clean = agent.answer(request, from: .thisProcess)
        while person.questions.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        async let flagged = agent.answer(request, from: kept)
        // Let the second request reach the agent and wait on the first question, then answer it.
        try await Task.sleep(for: .milliseconds(200))
        person.release()
        // Without a question of its own it would be answered by now; a stuck test says so rather than hang.
        let deadline = ContinuousClock.now + .seconds(60)
        while person.questions.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try #require(person.questions.count == 2, "the kept connection was not asked about itself")
        #expect(person.questions.last?.caller.connectionKeptAcrossExec == true, "asked about itself")
        person.release()
        let answers = await [clean, flagged]
        #expect(answers.allSatisfy { (try? $0.get()) != nil }, "each allowed once, by its own answer")
        #expect(person.questions.count == 2)
    }

    @Test func nobodyAnsweringInTimeIsANoAndTheQuestionIsTakenBack() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .alwaysAllow, holds: true)
        let answer = await agent(home, person, timeout: .milliseconds(300)).answer(request, from: .thisProcess)
        guard case .failure(let refusal) = answer else { return #expect(Bool(false), "a token with no answer") }
        #expect(refusal == AgentRefusal(.denied, ConsentSentence.notAllowed(Caller.thisProcess.program, asked: request)), "a Deny's words")
        #expect(person.withdrawn, "the asker was told to take its question back")
        #expect(home.grants.all.isEmpty)
        person.release()
    }

    /// Issue 28: a caller whose connection closes while the person is asked (the ssh connection that
    /// forwarded the socket dropped, the program ended) has its question taken back; one that only
    /// shuts its sending side, and waits for the answer, is still asked.
    @Test func aCallerThatHangsUpHasItsQuestionTakenBack() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowOnce, holds: true)
        let tokenAgent = agent(home, person)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hangup-\(UUID().uuidString)/agent.sock").path
        let socket = AgentSocket(path: path, logger: home.logger) { connection, request in
            guard case .success(let caller) = connection.caller else { return .failure(AgentRefusal(.denied, "unknown")) }
            return await tokenAgent.answer(request, from: caller, hangUp: connection.hangUp)
        }
        try socket.start()
        defer { socket.stop() }
        let bytes = Array(OIDCAgentMessage.encode(request).utf8)

        let fd = AgentSocket.connectTo(path)
        try #require(fd >= 0)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        try await waitFor("the question", within: 30) { person.questions.count == 1 }
        close(fd)
        try await waitFor("the question taken back", within: 30) { person.withdrawn }
        #expect(home.grants.all.isEmpty)

        // Half-closed: still there for the answer, which it gets once the person answers.
        let person2 = ScriptedPerson(answering: .allowOnce, holds: true)
        let second = AgentSocket(path: path + "2", logger: home.logger) { connection, request in
            guard case .success(let caller) = connection.caller else { return .failure(AgentRefusal(.denied, "unknown")) }
            return await agent(home, person2).answer(request, from: caller, hangUp: connection.hangUp)
        }
        try second.start()
        defer { second.stop() }
        let answer = Task { await BlockingWork.run { AgentSocketTests.blockingAsk(path + "2", bytes, true) } }
        try await waitFor("the second question", within: 30) { person2.questions.count == 1 }
        // Longer than the agent's look at the connection (a quarter of a second): the question stays.
        try await Task.sleep(for: .seconds(1))
        #expect(!person2.withdrawn)
        person2.release()
        #expect(await answer.value.contains("access_token"))
        person.release()
    }

    /// Through ssh, "Allow while connected" answers that ssh process's requests until it ends, and
    /// is kept nowhere: another ssh process (another connection) is asked anew.
    @Test func allowWhileConnectedCoversOneSSHProcessAndIsKeptNowhere() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let person = ScriptedPerson(answering: .allowWhileConnected)
        let tokenAgent = agent(home, person)
        let me = Caller.thisProcess
        let devbox = Caller(
            pid: me.pid, uid: me.uid, program: Program(path: "/usr/bin/ssh", remoteHost: "devbox"), file: me.file,
            commandLine: ["ssh", "devbox"], started: me.started)
        _ = try await tokenAgent.answer(request, from: devbox).get()
        _ = try await tokenAgent.answer(request, from: devbox).get()
        #expect(person.questions.count == 1, "one question for the connection")
        let question = try #require(person.questions.first)
        #expect(question.offersWhileConnected && !question.offersAlways)
        #expect(home.grants.all.isEmpty, "kept nowhere")
        // The same host through another ssh process (a pid that is not this one's): asked again.
        let other = Caller(
            pid: me.pid, uid: me.uid, program: devbox.program, file: me.file, commandLine: devbox.commandLine, started: me.started + 1)
        _ = try await tokenAgent.answer(request, from: other).get()
        #expect(person.questions.count == 2)
        // A local program is never answered by a connection's allowance.
        _ = try await tokenAgent.answer(request, from: me).get()
        #expect(person.questions.count == 3)
    }

    /// Waits for `condition`, looking every 20 ms, for `within` seconds at most.
    func waitFor(_ what: String, within seconds: Double, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw SandboxTestError("\(what) did not happen within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
