import Foundation

/// What `waitUntil` throws when what it waited for never came: the test stops there, saying so,
/// rather than going on as if it had.
public struct NeverHappened: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "what the test waited for did not happen within \(Int(seconds)) seconds" }
}

/// Suspends (never blocks a thread) until `ready` holds, looking every millisecond; throws
/// `NeverHappened` after `seconds`, once it has looked one last time. The bound is for a test that
/// would otherwise hang, far above what a loaded machine takes: nothing is timed by it.
public func waitUntil(within seconds: Double = 60, _ ready: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !ready() {
        guard Date() < deadline else {
            if ready() { return }
            throw NeverHappened(seconds: seconds)
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}
