import FoundationEssentials
import Logging

/// Before a renewal, under the refresh lock, when the store cannot be read: whether the token held
/// may still be renewed (see `SavedMark`).
extension AuthSession {
    /// The store could not be read (the keyring restarting, locked, not answering): the held token
    /// may be renewed only when it is the last one saved — any other process's renewal (under the
    /// same lock) would have saved a newer one, and sending the held one then would be a replay.
    func heldWhileStoreUnread(_ held: Token, _ error: any Error) throws -> Token {
        let restarting = error as? KeptWhereNotRunning
        guard let mark = store.lastSaved(for: accountKey) else {
            // A record cleared for a save that never finished (or damaged) is doubt, and doubt sends nothing;
            // saved before such records were kept, only a keyring known to be gone stops it.
            if let restarting { throw OAuthError.storage(restarting.reason) }
            if store.keepsSaveRecords(for: accountKey) {
                throw OAuthError.storage(
                    "it cannot be read now, and it is not known which refresh token was saved last. Try again in a moment.")
            }
            return held
        }
        guard mark.holds(held) else {
            logger.notice("The saved sign-in cannot be read now, and it is newer than the one held", metadata: ["error": "\(error)"])
            throw OAuthError.storage(
                restarting?.reason ?? "it cannot be read now, and another program renewed it since. Try again in a moment.")
        }
        logger.debug("The saved sign-in cannot be read now; the held one is the last saved, so it is renewed")
        return held
    }

    /// The shared lock for refreshing this provider's sign-in (nil where the store has none).
    func refreshLock() async throws -> ProcessLock.Held? {
        guard let shared = store.refreshLock(for: accountKey) else { return nil }
        // The holder may wait on the network and, twice, on the keyring; past
        // that, giving up beats refreshing unlocked and replaying its token.
        switch await shared.acquire(timeout: 2 * tokenClient.timeout + 130) {
        case .held(let held): return held
        case .unavailable:
            logger.warning("No refresh lock file; refreshing without it")
            return nil
        case .timedOut:
            throw OAuthError.storage("another program is renewing this sign-in and has not finished. Try again in a moment.")
        }
    }
}
