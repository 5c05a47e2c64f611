import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import LatchkeyCore
import Logging
import OAuthCore

/// Runs async work from a synchronous command (before GTK starts, or instead of it).
func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    SyncBridge.wait(work)
}

/// `wait` for work that throws: its error is thrown here.
func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    try wait { () async -> Result<T, any Error> in
        do { return .success(try await work()) } catch { return .failure(error) }
    }.get()
}

/// A value handed from a task to GTK's thread, written once before the loop is told to quit and
/// read after it returned: never at once.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
