import Synchronization

/// Requests under way, counted by key (a bus sender, a program), at most `most` per key: one caller
/// flooding the agent is told it is busy, and the others are served as ever.
public final class InFlight: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    public let most: Int

    public init(most: Int) {
        self.most = most
    }

    /// Counts one more for `key`; false (nothing counted) when it has `most` already.
    public func take(_ key: String) -> Bool {
        counts.withLock { counts in
            guard counts[key, default: 0] < most else { return false }
            counts[key, default: 0] += 1
            return true
        }
    }

    public func release(_ key: String) {
        counts.withLock { counts in
            counts[key, default: 1] -= 1
            if counts[key] == 0 { counts[key] = nil }
        }
    }
}
