import LatchkeyCore
import Testing

@Suite struct LogLineTests {
    @Test func aLineBreakInLoggedTextCannotForgeALine() {
        let path = "/oauth2/callback\n1795372824.526 info Latchkey: Signed in"
        #expect(LogLine.escaped(path) == #"/oauth2/callback\n1795372824.526 info Latchkey: Signed in"#)
        #expect(!LogLine.escaped("a\r\u{1B}[2Jb\u{2028}c\u{85}").contains(where: { $0.isNewline || $0 == "\u{1B}" }))
    }

    @Test func ordinaryTextIsUntouched() {
        #expect(LogLine.escaped("Signed in as Ada Lovelace — café ✓") == "Signed in as Ada Lovelace — café ✓")
    }
}
