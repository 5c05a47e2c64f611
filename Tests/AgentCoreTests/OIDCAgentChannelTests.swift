import AgentCore
import CSodium
import Foundation
import Testing

/// The client's half of oidc-agent's encrypted exchange, with libsodium as liboidc-agent uses it.
struct SodiumClient {
    var publicKey = [UInt8](repeating: 0, count: 32)
    var secretKey = [UInt8](repeating: 0, count: 32)
    var shared = [UInt8](repeating: 0, count: 32)

    init() throws {
        var error = [CChar](repeating: 0, count: 256)
        guard csodium_load(&error, error.count) == 0 else { throw CocoaError(.featureUnsupported) }
        csodium_box_keypair(&publicKey, &secretKey)
    }

    var hello: [UInt8] { Array(Data(publicKey).base64EncodedString().utf8) }

    mutating func heard(_ agentKey: [UInt8]) -> Bool {
        guard let theirs = Data(base64Encoded: Data(agentKey)), theirs.count == 32 else { return false }
        return csodium_box_beforenm(&shared, Array(theirs), secretKey) == 0
    }

    func seal(_ text: String) -> [UInt8] {
        let message = Array(text.utf8)
        var nonce = [UInt8](repeating: 0, count: 24)
        csodium_random(&nonce, 24)
        var sealed = [UInt8](repeating: 0, count: message.count + 16)
        csodium_secretbox_easy(&sealed, message, UInt64(message.count), nonce, shared)
        return Array("\(message.count):\(Data(nonce).base64EncodedString()):\(Data(sealed).base64EncodedString())".utf8)
    }

    func open(_ bytes: [UInt8]) -> String? {
        let parts = bytes.split(separator: UInt8(ascii: ":"), maxSplits: 2).map { Data($0) }
        guard parts.count == 3, let length = Int(String(decoding: parts[0], as: UTF8.self)),
            let nonce = Data(base64Encoded: parts[1]), let sealed = Data(base64Encoded: parts[2])
        else { return nil }
        var message = [UInt8](repeating: 0, count: length)
        guard csodium_secretbox_open_easy(&message, Array(sealed), UInt64(sealed.count), Array(nonce), shared) == 0 else { return nil }
        return String(decoding: message, as: UTF8.self)
    }
}

@Suite struct OIDCAgentChannelTests {
    let json = #"{"request":"access_token","min_valid_period":0,"account":"github","application_hint":"oidc-token"}"#

    @Test func plainJSONIsAnsweredInPlainJSON() {
        var channel = OIDCAgentChannel()
        #expect(
            channel.received(Array(json.utf8))
                == .request(.success(AgentRequest(target: .provider("github"), applicationHint: "oidc-token"))))
        #expect(channel.reply("{\"status\":\"success\"}") == Array("{\"status\":\"success\"}".utf8))
    }

    @Test func plainJSONArrivingInPiecesWaitsForItsEnd() {
        var channel = OIDCAgentChannel()
        let bytes = Array(json.utf8)
        #expect(channel.received(bytes[..<10]) == .needMore)
        #expect(channel.received(bytes[10..<50]) == .needMore)
        guard case .request(.success(let request)) = channel.received(bytes[50...]) else {
            Issue.record("the whole request was not read")
            return
        }
        #expect(request.target == .provider("github"))
    }

    @Test func theEncryptedExchangeOfOidcAgentsClients() throws {
        var client = try SodiumClient()
        var channel = OIDCAgentChannel()
        guard case .send(let agentKey) = channel.received(client.hello) else {
            Issue.record("no key in answer to the client's")
            return
        }
        #expect(agentKey.count == 44)
        let heard = client.heard(agentKey)
        #expect(heard)
        let sealed = client.seal(json)
        #expect(channel.received(sealed[..<20]) == .needMore, "the box arrives in two pieces")
        guard case .request(.success(let request)) = channel.received(sealed[20...]) else {
            Issue.record("the box did not open")
            return
        }
        #expect(request.target == .provider("github"))
        let answer = channel.reply(#"{"status":"success","access_token":"t"}"#)
        #expect(!String(decoding: answer, as: UTF8.self).contains("access_token"), "the answer is sealed")
        #expect(client.open(answer) == #"{"status":"success","access_token":"t"}"#)
    }

    @Test func aBoxSealedWithAnotherKeyIsRefused() throws {
        var client = try SodiumClient()
        var channel = OIDCAgentChannel()
        guard case .send(let agentKey) = channel.received(client.hello) else { return #expect(Bool(false)) }
        var stranger = try SodiumClient()
        let heard = client.heard(agentKey) && stranger.heard(agentKey)
        #expect(heard)
        #expect(
            channel.received(stranger.seal(json))
                == .request(.failure(AgentRefusal(.invalid, "The encrypted request does not open with the key exchanged."))))
    }

    @Test(arguments: [
        (Array(repeating: UInt8(ascii: "x"), count: 44), "The request is neither JSON nor oidc-agent's key exchange."),
        (Array(repeating: UInt8(ascii: "A"), count: 45), "The request is neither JSON nor oidc-agent's key exchange."),
        (Array("{\"a\":\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: 70_000), "The request is larger than 65536 bytes."),
    ])
    func whatIsNeitherFormIsRefused(_ bytes: [UInt8], _ sentence: String) {
        var channel = OIDCAgentChannel()
        #expect(channel.received(bytes) == .request(.failure(AgentRefusal(.invalid, sentence))))
    }

    @Test func aRequestCutShortIsSaidSo() {
        var channel = OIDCAgentChannel()
        #expect(channel.received(Array(#"{"request":"acc"#.utf8)) == .needMore)
        #expect(channel.ended() == .request(.failure(AgentRefusal(.invalid, "The request ended before it was complete."))))
    }
}
