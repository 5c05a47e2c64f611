import FoundationEssentials
import GtkKit
import LatchkeyCore
import OAuthCore

/// The shown provider's accounts: listed after every change of who is signed in, each with its
/// picture once fetched, and another chosen from the list.
extension AppController {
    /// The person chose the row of account `key`: it is in use from now on (the same one again does nothing).
    func accountChosen(_ key: String) {
        guard current != nil, key != accountEntry.current?.key else { return }
        guard state.accepts(.accountChosen(key)) else {
            // Not now (a sign-in under way): the row in use is chosen again.
            return render()
        }
        logger.info("Another account chosen")
        send(.accountChosen(key))
    }

    /// Shows `entry`, and fetches the accounts' pictures when their rows are new.
    func showAccounts(_ entry: AccountList.Entry) {
        // Other accounts than before: their rows are made anew, and their pictures fetched again.
        let anew = entry.accounts != accountEntry.accounts
        accountEntry = entry
        if anew { accountPictures = [:] }
        render()
        guard anew, entry.accounts.count > 1, let provider = current else { return }
        let generation = self.generation
        for account in entry.accounts {
            guard let url = account.pictureURL else { continue }
            MainLoop.work {
                await provider.picture(at: url)
            } then: { [weak self] bytes in
                guard let self, self.generation == generation, self.accountEntry.accounts == entry.accounts, let bytes else { return }
                self.accountPictures[account.key] = bytes
                self.render()
            }
        }
    }
}
