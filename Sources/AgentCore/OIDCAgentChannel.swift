import CAgentAnswer
import CSodium
import FoundationEssentials

/// One connection of oidc-agent's IPC, from the agent's side: what to do with
/// each piece of what the client sent. Two kinds of client speak it:
///
/// - `oidc-token` and every client built on liboidc-agent encrypt: the client
///   sends its X25519 public key (44 base64 characters), the agent answers with
///   its own, both derive one key (libsodium's `crypto_box_beforenm`), and the
///   request comes as `LENGTH:NONCE:BOX` (base64; XSalsa20-Poly1305). The answer
///   goes back the same way.
/// - A client writing plain JSON (Latchkey's own commands, scripts): the answer is plain JSON.
///
/// A client reads what has arrived when its `select` wakes, so each answer is
/// written whole, in one write (`AgentSocket`); this type only makes the bytes.
public struct OIDCAgentChannel: Sendable {
    /// What the agent does next.
    public enum Step: Sendable, Equatable {
        /// Wait for more bytes.
        case needMore
        /// Send these (the agent's public key), then wait for more.
        case send([UInt8])
        /// The request (or the refusal to answer with): answer through `reply`, then close.
        case request(Result<AgentRequest, AgentRefusal>)
    }

    /// The most a request may take, in bytes, in any form.
    public static let largestMessage = Int(LATCHKEY_AGENT_LARGEST_MESSAGE)
    static let publicKeyText = 44  // base64 of 32 bytes, with one "="

    private enum Phase: Sendable {
        case opening
        case encrypted(key: [UInt8])
        case plain
    }

    private var phase = Phase.opening
    private var buffer: [UInt8] = []

    public init() {}

    /// What `bytes`, appended to what came before, call for.
    public mutating func received(_ bytes: some Collection<UInt8>) -> Step {
        buffer += bytes
        guard buffer.count <= Self.largestMessage else { return refuse("The request is larger than \(Self.largestMessage) bytes.") }
        switch phase {
        case .opening:
            guard let first = buffer.first(where: { !Self.isSpace($0) }) else { return .needMore }
            if first == UInt8(ascii: "{") {
                phase = .plain
                return plain()
            }
            return exchangeKeys()
        case .plain: return plain()
        case .encrypted(let key): return box(key)
        }
    }

    /// The answer's bytes: encrypted with the connection's key if the request was (empty if that fails).
    public func reply(_ json: String) -> [UInt8] {
        guard case .encrypted(let key) = phase else { return Array(json.utf8) }
        let message = Array(json.utf8)
        var nonce = [UInt8](repeating: 0, count: Int(CSODIUM_NONCE_BYTES))
        csodium_random(&nonce, nonce.count)
        var sealed = [UInt8](repeating: 0, count: message.count + Int(CSODIUM_MAC_BYTES))
        // Never the answer in clear text to a client that asked in secret: nothing, and it says the agent did not answer.
        guard csodium_secretbox_easy(&sealed, message, UInt64(message.count), nonce, key) == 0 else { return [] }
        return Array("\(message.count):\(Data(nonce).base64EncodedString()):\(Data(sealed).base64EncodedString())".utf8)
    }

    // MARK: Each phase

    /// Plain JSON: complete once its braces close (a client writes it in one piece, but it may arrive in several).
    private mutating func plain() -> Step {
        guard !Self.mayBeIncomplete(buffer) else { return .needMore }
        defer { buffer = [] }
        return .request(OIDCAgentMessage.request(buffer))
    }

    /// The client closed its side (or went quiet) before the request was whole.
    public mutating func ended() -> Step {
        guard !buffer.isEmpty else { return .needMore }
        return refuse("The request ended before it was complete.")
    }

    /// The client's public key: answered with ours, and the key both derive.
    private mutating func exchangeKeys() -> Step {
        guard buffer.count >= Self.publicKeyText else { return .needMore }
        guard buffer.count == Self.publicKeyText, let theirs = Data(base64Encoded: Data(buffer)), theirs.count == 32 else {
            return refuse("The request is neither JSON nor oidc-agent's key exchange.")
        }
        var error = [CChar](repeating: 0, count: 256)
        guard csodium_load(&error, error.count) == 0 else {
            return refuse(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        var mine = [UInt8](repeating: 0, count: 32)
        var secret = [UInt8](repeating: 0, count: 32)
        var shared = [UInt8](repeating: 0, count: 32)
        defer { csodium_memzero(&secret, secret.count) }
        guard csodium_box_keypair(&mine, &secret) == 0, csodium_box_beforenm(&shared, Array(theirs), secret) == 0 else {
            return refuse("The key exchange failed.")
        }
        phase = .encrypted(key: shared)
        buffer = []
        return .send(Array(Data(mine).base64EncodedString().utf8))
    }

    /// `LENGTH:NONCE:BOX`, complete once the box's base64 is as long as LENGTH says.
    private mutating func box(_ key: [UInt8]) -> Step {
        let parts = buffer.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return buffer.count < 64 ? .needMore : refuse("The encrypted request is malformed.") }
        guard let length = Int(String(decoding: parts[0], as: UTF8.self)), length >= 0, length <= Self.largestMessage else {
            return refuse("The encrypted request is malformed.")
        }
        let expected = (length + Int(CSODIUM_MAC_BYTES) + 2) / 3 * 4
        guard parts[2].count >= expected else { return .needMore }
        guard parts[2].count == expected, let nonce = Data(base64Encoded: Data(parts[1])),
            nonce.count == Int(CSODIUM_NONCE_BYTES), let sealed = Data(base64Encoded: Data(parts[2])),
            sealed.count == length + Int(CSODIUM_MAC_BYTES)
        else { return refuse("The encrypted request is malformed.") }
        var message = [UInt8](repeating: 0, count: length)
        guard csodium_secretbox_open_easy(&message, Array(sealed), UInt64(sealed.count), Array(nonce), key) == 0 else {
            return refuse("The encrypted request does not open with the key exchanged.")
        }
        buffer = []
        return .request(OIDCAgentMessage.request(message))
    }

    private mutating func refuse(_ sentence: String) -> Step {
        buffer = []
        return .request(.failure(AgentRefusal(.invalid, sentence)))
    }

    private static func isSpace(_ byte: UInt8) -> Bool { [0x20, 0x09, 0x0A, 0x0D].contains(byte) }

    /// Whether `bytes` may be the start of a JSON object still arriving: its braces and brackets
    /// not yet closed, outside strings.
    static func mayBeIncomplete(_ bytes: [UInt8]) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return depth > 0 || inString
    }
}
