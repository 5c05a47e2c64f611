import Foundation

/// Suspends (never blocks a thread) until `ready` holds, looking every millisecond; gives up
/// after `seconds`, once it has looked one last time. What follows says what was expected.
public func waitUntil(within seconds: Double = 10, _ ready: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !ready() {
        guard Date() < deadline else { return }
        try await Task.sleep(for: .milliseconds(1))
    }
}
