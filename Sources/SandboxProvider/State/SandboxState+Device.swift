import Foundation

/// RFC 8628: the codes a device asked for, and what the person answered on the verification page.
extension SandboxState {
    struct DeviceAuthorization {
        let clientID: String
        let userCode: String
        let scopes: [String]
        let resource: String?
        let grantsRefreshToken: Bool
        let expiresAt: Date
        /// Seconds the client must leave between checks: raised by each `slow_down`.
        var interval: Int
        var lastPoll: Date?
        /// Nil while unanswered; the username once allowed; "" once denied.
        var answer: String?
    }

    /// A new device code and user code (eight letters without vowels, `BCDF-GHJK`, as §6.1 advises).
    func addDevice(_ authorization: DeviceAuthorization) -> (deviceCode: String, userCode: String) {
        let deviceCode = "sbx_dc_" + Base64URL.randomToken()
        devices[deviceCode] = authorization
        return (deviceCode, authorization.userCode)
    }

    static func newUserCode() -> String {
        let letters = Array("BCDFGHJKLMNPQRSTVWXZ")
        var generator = SystemRandomNumberGenerator()
        let code = String((0..<8).map { _ in letters[Int.random(in: 0..<letters.count, using: &generator)] })
        return "\(code.prefix(4))-\(code.suffix(4))"
    }

    /// The device authorization whose user code a person typed (in any case, with or without the dash).
    func device(userCode typed: String, now: Date = Date()) -> (deviceCode: String, DeviceAuthorization)? {
        let wanted = typed.uppercased().filter { $0.isLetter }
        guard wanted.count == 8,
            let found = devices.first(where: { $0.value.userCode.filter(\.isLetter) == wanted && $0.value.answer == nil })
        else { return nil }
        return found.value.expiresAt > now ? (found.key, found.value) : nil
    }

    /// The person's answer: the username that allowed it, or nil for a refusal.
    func answerDevice(_ deviceCode: String, allowedBy username: String?) {
        devices[deviceCode]?.answer = username ?? ""
    }

    enum DevicePoll {
        case unknown, otherClient, expired, pending, slowDown, denied
        case allowed(DeviceAuthorization, username: String)
    }

    /// A client's check (§3.4–3.5): too soon after the last one is `slow_down` (and the interval
    /// grows by five seconds); an allowed code is used once.
    func pollDevice(_ deviceCode: String, clientID: String, now: Date = Date()) -> DevicePoll {
        guard var device = devices[deviceCode] else { return .unknown }
        guard device.clientID == clientID else { return .otherClient }
        guard device.expiresAt > now else {
            devices[deviceCode] = nil
            return .expired
        }
        if let last = device.lastPoll, now.timeIntervalSince(last) < TimeInterval(device.interval) {
            device.interval += 5
            device.lastPoll = now
            devices[deviceCode] = device
            return .slowDown
        }
        device.lastPoll = now
        devices[deviceCode] = device
        switch device.answer {
        case nil: return .pending
        case ""?:
            devices[deviceCode] = nil
            return .denied
        case let username?:
            devices[deviceCode] = nil
            return .allowed(device, username: username)
        }
    }
}
