import Foundation
import Testing

@testable import OAuthCore

/// What OAuthCore does itself now that the app links FoundationEssentials alone:
/// each checked against Foundation's own answer, which this test may still use.
@Suite struct WithoutFoundationTests {
    static let gmtFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    @Test func httpDatesReadAsFoundationReadsThem() {
        // Every day from 1970 to 2100 at a changing time of day, leap days and century years included.
        var seconds = 0
        while seconds < 4_102_444_800 {
            let text = Self.gmtFormatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
            #expect(DiscoveryCache.httpDate(text) == Date(timeIntervalSince1970: Double(seconds)), "\(text)")
            seconds += 86_400 + 3_607
        }
        #expect(DiscoveryCache.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(DiscoveryCache.httpDate("  Tue, 29 Feb 2028 23:59:59 GMT ") == Date(timeIntervalSince1970: 1_835_481_599))
    }

    @Test(arguments: [
        "Mon, 30 Feb 2026 00:00:00 GMT", "Sun, 31 Apr 2026 00:00:00 GMT", "Thu, 29 Feb 2100 00:00:00 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:49 GMT", "0", "", "Sun, 06 Nov -994 08:49:37 GMT",
    ])
    func whatIsNotAnIMFFixdateIsNoDate(text: String) {
        #expect(DiscoveryCache.httpDate(text) == nil)
    }

    @Test(arguments: ["  a b \t", "\n\r a\u{00A0}\n", "\u{2028}x\u{3000}", "", " \t\n ", "é ", "a"])
    func trimmingIsFoundationsTrimming(text: String) {
        #expect(text.trimmed() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text.trimmed(newlines: false) == text.trimmingCharacters(in: .whitespaces))
    }

    @Test func replacingIgnoresCaseLikeFoundation() {
        let cases: [(String, String)] = [
            ("Bearer ABCdef123456 and abcDEF123456", "abcdef123456"), ("%2Fsecret%2fsecret", "%2fSECRET"),
            ("İstanbul istanbul", "istanbul"), ("nothing here", "absent-secret"), ("aaaa", "aa"),
        ]
        for (text, target) in cases {
            #expect(
                text.replacingIgnoringCase(target, with: "‹r›")
                    == text.replacingOccurrences(of: target, with: "‹r›", options: .caseInsensitive), "\(text) / \(target)")
        }
        // One difference: letters are compared one by one, so "ß" does not match "SS" as Foundation's
        // case folding has it. What is redacted is ASCII (RFC 6749's tokens and secrets are VSCHAR).
        #expect("straße STRASSE".replacingIgnoringCase("STRASSE", with: "‹r›") == "straße ‹r›")
    }

    @Test func jsonDocumentsKeepNumbersAsWrittenAndTellThemFromBooleans() throws {
        let object = try #require(
            JSONValue.object(
                parsing: Data(#"{"id": 12345678901234567890, "one": 1, "yes": true, "none": null, "id": 7, "list": [1, "a"]}"#.utf8)))
        #expect(object["id"]?.numberText == "7", "a later member of the same name wins")
        #expect(object["one"]?.numberText == "1" && object["one"]?.bool == nil && object["one"]?.string == nil)
        #expect(object["yes"]?.bool == true && object["yes"]?.numberText == nil)
        #expect(object["none"] == .null)
        #expect(object["list"]?.array?.count == 2 && object["list"]?.strings == nil, "not every item is a string")
        #expect(ProfileMapping.first(["id"], in: ["id": .number("12345678901234567890")]) == "12345678901234567890")

        #expect(JSONValue.object(parsing: Data("[1]".utf8)) == nil, "an array is not an object")
        #expect(JSONValue.object(parsing: Data(#"{"a": 1} x"#.utf8)) == nil, "nothing may follow")
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(JSONValue.object(parsing: Data(#"{"a": \#(deep)}"#.utf8)) == nil, "nesting is bounded")
    }

    @Test func aTildeIsTheHomeFolder() {
        #expect(PathText.expandingTilde("~", home: "/home/ada") == "/home/ada")
        #expect(PathText.expandingTilde("~/keys/a.pem", home: "/home/ada") == "/home/ada/keys/a.pem")
        #expect(PathText.expandingTilde("/etc/~x", home: "/home/ada") == "/etc/~x")
        #expect(PathText.expandingTilde("~other/x", home: "/home/ada") == "~other/x")
    }
}

/// A provider's key set, read as a reader that takes a repeated member's last value has it.
@Suite struct KeySetReadingTests {
    @Test func aKeysRepeatedMemberIsItsLastAndOnlyStringsAreFields() throws {
        let set: JSONValue = [
            "keys": [
                .object([.init("kid", "one"), .init("alg", "RS256"), .init("alg", nil)]),
                .object([.init("kid", "two"), .init("alg", nil), .init("alg", "ES256"), .init("n", 5)]),
            ]
        ]
        let keys = try JWKSCache.keys(of: set)
        #expect(keys == [["kid": "one"], ["kid": "two", "alg": "ES256"]])
        #expect(throws: OAuthError.self) { try JWKSCache.keys(of: ["keys": ["not a key"]]) }
        #expect(throws: OAuthError.self) { try JWKSCache.keys(of: ["keys": "none"]) }
    }
}
