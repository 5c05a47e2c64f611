import FoundationEssentials

// The few string operations OAuthCore and the app need that FoundationEssentials
// leaves to Foundation (with its CoreFoundation and ICU): kept here, small, so that
// no module the app links needs Foundation. `package`: for Latchkey's own modules.

extension StringProtocol {
    /// Without white space at either end: spaces, tabs and, unless `newlines` is false, line breaks.
    package func trimmed(newlines: Bool = true) -> String {
        trimming { $0.isWhitespace && (newlines || !$0.isNewline) }
    }

    /// Without the characters `drop` picks at either end.
    package func trimming(_ drop: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement`, letters compared without case.
    func replacingIgnoringCase(_ target: String, with replacement: String) -> String {
        // Character by character, each lowered on its own (a lowered letter may be longer than one).
        let wanted = target.map { $0.lowercased() }
        guard !wanted.isEmpty else { return self }
        let characters = Array(self)
        let lowered = characters.map { $0.lowercased() }
        var result = ""
        var index = 0
        while index < characters.count {
            if index + wanted.count <= characters.count, Array(lowered[index..<index + wanted.count]) == wanted {
                result += replacement
                index += wanted.count
            } else {
                result.append(characters[index])
                index += 1
            }
        }
        return result
    }
}

/// A path as a person writes it: `~` and `~/…` are their home folder.
package enum PathText {
    package static func expandingTilde(_ path: String, home: String = PathText.home) -> String {
        if path == "~" { return home }
        if path.hasPrefix("~/") { return home + path.dropFirst() }
        return path
    }

    /// `$HOME`, or the account's home folder when it is unset or empty.
    package static var home: String {
        if let home = EnvironmentVariables.process.nonEmpty("HOME") { return home }
        return FileManager.default.homeDirectoryForCurrentUser.path
    }
}
