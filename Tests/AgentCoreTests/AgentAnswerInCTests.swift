import AgentCore
import CAgentAnswer
import Foundation
import Testing

/// The front's reading of the agent's answers (C, no JSON library) against what the agent
/// writes (OIDCAgentMessage): every string comes back as it went, whatever it holds.
@Suite struct AgentAnswerInCTests {
    func string(_ json: String, _ key: String, capacity: Int = 4096) -> String? {
        var out = [CChar](repeating: 0, count: capacity)
        let bytes = Array(json.utf8)
        let length = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { agent_answer_string($0.baseAddress, $0.count, key, &out, out.count) }
        }
        return length < 0 ? nil : String(decoding: out.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test(arguments: ["plain-token_0123", "quote \" backslash \\ slash /", "line\nbreak\ttab", "café ✓ 😀", "\u{1}\u{1F}"])
    func everyStringComesBackAsItWent(_ text: String) {
        let token = AgentToken(
            accessToken: text, tokenType: "Bearer", expiresAt: Date(timeIntervalSince1970: 1_900_000_000), scopes: ["a"], provider: "p",
            issuer: "https://i")
        let success = OIDCAgentMessage.success(token)
        #expect(string(success, "access_token") == text)
        #expect(string(success, "token_type") == "Bearer")
        let failure = OIDCAgentMessage.failure(AgentRefusal(.denied, text))
        #expect(string(failure, "error") == text)
        #expect(string(failure, "kind") == "Denied")
        #expect(
            Array(success.utf8).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { agent_answer_number($0.baseAddress, $0.count, "expires_at") }
            } == 1_900_000_000)
    }

    @Test func whatIsNotThereOrDoesNotFitIsNothing() {
        let success = OIDCAgentMessage.success(
            AgentToken(accessToken: "abcdef", tokenType: "Bearer", expiresAt: nil, scopes: [], provider: "p", issuer: ""))
        #expect(string(success, "error") == nil)
        #expect(string(success, "access_token", capacity: 4) == nil, "too long for the room given")
        #expect(string(#"{"access_token":"a\u0000b"}"#, "access_token") == nil, "no NUL inside a C string")
        #expect(string(#"{"access_token":["x"]}"#, "access_token") == nil)
        #expect(string(#"not json"#, "access_token") == nil)
        #expect(string(#"{"access_token":"unterminated"#, "access_token") == nil)
    }

    @Test func quotingForTheRequest() throws {
        var out = [CChar](repeating: 0, count: 64)
        #expect(agent_answer_quote("git\"hub\\\n", &out, out.count) >= 0)
        let quoted = String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #expect(quoted == #""git\"hub\\\u000a""#)
        #expect(try JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed) as? String == "git\"hub\\\n")
        var small = [CChar](repeating: 0, count: 4)
        #expect(agent_answer_quote("github", &small, small.count) == -1)
    }

    /// Each refusal goes out under a name of its own, the header's, and comes back as the same kind,
    /// as the agent's own client reads it and as the front reads it (by the header's names).
    @Test(arguments: AgentRefusal.Kind.allCases)
    func everyRefusalKindHasTheHeadersNameBothWays(_ kind: AgentRefusal.Kind) {
        let names = [
            LATCHKEY_REFUSAL_DENIED, LATCHKEY_REFUSAL_NEEDS_PERSON, LATCHKEY_REFUSAL_SIGNED_OUT, LATCHKEY_REFUSAL_INVALID,
            LATCHKEY_REFUSAL_FAILED,
        ]
        #expect(names.contains(kind.name))
        #expect(AgentRefusal.Kind.allCases.filter { $0.name == kind.name } == [kind])
        let failure = OIDCAgentMessage.failure(AgentRefusal(kind, "Why."))
        #expect(string(failure, "kind") == kind.name)
        guard case .failure(let back) = OIDCAgentMessage.answer(Array(failure.utf8)) else {
            Issue.record("no failure read back from \(failure)")
            return
        }
        #expect(back.kind == kind)
    }
}

/// "provider/account", read in one place for every way a program names an account.
@Suite struct ProviderAccountTests {
    @Test(
        arguments: [
            ("github", "github", nil, "github"),
            ("github/", "github", nil, "github"),
            ("github/ada@example.com", "github", "ada@example.com", "github"),
            ("github/Ada Lovelace/work", "github", "Ada Lovelace/work", "github"),
            ("github@0a1b2c3d4e5f", "github@0a1b2c3d4e5f", nil, "github"),
            ("", "", nil, ""),
        ] as [(String, String, String?, String)])
    func aNameIsReadOnce(_ text: String, provider: String, account: String?, id: String) {
        let named = ProviderAccount(text)
        #expect(named.provider == provider)
        #expect(named.account == account)
        #expect(named.providerID == id)
        #expect(ProviderAccount(named.description) == named, "written back as a program would, it reads the same")
    }
}
