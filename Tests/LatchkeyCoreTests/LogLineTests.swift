import LatchkeyCore
import Testing

@Suite struct LogLineTests {
    @Test func aLineBreakInLoggedTextCannotForgeALine() {
        let path = "/oauth2/callback\n1795372824.526 info Latchkey: Signed in"
        #expect(LogLine.escaped(path) == #"/oauth2/callback\n1795372824.526 info Latchkey: Signed in"#)
        #expect(!LogLine.escaped("a\r\u{1B}[2Jb\u{2028}c\u{85}").contains(where: { $0.isNewline || $0 == "\u{1B}" }))
    }

    /// A CSI (U+009B) and a right-to-left override from a server reach the log written out, not obeyed.
    @Test func controlAndFormatCharactersAreWrittenOut() {
        #expect(LogLine.escaped("a\u{9B}2Jb\u{202E}c\u{200B}") == #"a\u{9b}2Jb\u{202e}c\u{200b}"#)
    }

    @Test func ordinaryTextIsUntouched() {
        #expect(LogLine.escaped("Signed in as Ada Lovelace — café ✓") == "Signed in as Ada Lovelace — café ✓")
    }
}
