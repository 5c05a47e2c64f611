import Foundation
import InstallLayout
import Testing

@testable import OAuthCore

/// The provider file as a type: every key typed, unknown keys kept, `null` a third state,
/// and a file read and written unchanged keeps its bytes.
@Suite struct ProviderFileTests {
    static let tree = InstallLayout.current.sourceTree!

    /// Every preset, every seed of the provider-file fuzzer that is an object, and every provider
    /// file the end-to-end tests write.
    static var files: [URL] {
        let places = ["data/providers", "Fuzz/corpus/provider-file"].map { tree.appendingPathComponent($0) }
        return places.flatMap { place in
            ((try? FileManager.default.contentsOfDirectory(atPath: place.path)) ?? []).filter { $0.hasSuffix(".json") }
                .map { place.appendingPathComponent($0) }
        }
    }

    @Test func everyPresetAndFixtureRoundTripsByteForByte() throws {
        var read = 0
        for url in Self.files {
            let data = try Data(contentsOf: url)
            guard let file = try? ProviderFile(data: data, file: url) else {
                #expect(
                    ["not-object.json", "invalid-utf8.json"].contains(url.lastPathComponent),
                    "only the seeds that are not a JSON object in UTF-8 are refused: \(url.path)")
                continue
            }
            #expect(file.data == data, "\(url.lastPathComponent)")
            read += 1
        }
        #expect(read >= 18, "the presets and the fuzzer's seeds: \(read)")
    }

    @Test func everyKeyOfThePresetsIsKnown() throws {
        for url in Self.files where url.path.contains("data/providers") {
            let file = try ProviderFile(data: Data(contentsOf: url), file: url)
            #expect(file.unknown.isEmpty, "\(url.lastPathComponent): \(file.unknown.map(\.key))")
        }
    }

    /// A change touches its own key: the layout of the rest (a hand-written file's, a value over
    /// several lines) stays, unknown keys included; a new key takes the layout of the last.
    @Test func aChangeTouchesOnlyItsKey() throws {
        let text = """
            {
                "id":"mine",
                "future_key": {"kept": [1, 2.50, true, null]},
                "profile": {
                    "name": ["name", "login"]
                },
                "client_secret": "in-clear"
            }

            """
        var file = try ProviderFile(data: Data(text.utf8), file: URL(fileURLWithPath: "/mine.json"))
        #expect(
            file.unknown == [.init("future_key", .object([.init("kept", .array([.number("1"), .number("2.50"), .bool(true), .null]))]))])
        file.clientSecret = .unset
        file.userAgent = .value(.browser)
        #expect(
            String(decoding: file.data, as: UTF8.self) == """
                {
                    "id":"mine",
                    "future_key": {"kept": [1, 2.50, true, null]},
                    "profile": {
                        "name": ["name", "login"]
                    },
                    "user_agent": "browser"
                }

                """)
    }

    /// Absent, `null` and a value: a person's file removes a preset's key with `null`, and
    /// changes one key of a nested object without repeating the rest.
    @Test func nullRemovesAndNestedObjectsLayerKeyByKey() throws {
        let preset = try ProviderFile([
            "id": "p", "userinfo_endpoint": "https://id.example/me", "scopes": ["openid"],
            "profile": ["name": "name", "url": "profile", "url_template": "https://x.example/{id}"],
        ])
        let own = try ProviderFile(
            data: Data(#"{"userinfo_endpoint": null, "profile": {"url": null, "name": ["name", "login"]}}"#.utf8),
            file: URL(fileURLWithPath: "/p.json"))
        #expect(own.userinfoEndpoint == .removed && own.scopes == .unset)
        let layered = own.over(preset)
        #expect(layered.userinfoEndpoint == .removed, "null removes the preset's value")
        #expect(layered.userinfoEndpoint.value == nil, "and gives no value to read")
        #expect(layered.scopes == .value(["openid"]), "absent keeps it")
        let profile = try #require(layered.profile.value)
        #expect(profile["name"] == .many(["name", "login"]) && profile["url"] == nil)
        #expect(profile["url_template"] == .one("https://x.example/{id}"))
    }

    @Test func aKnownKeyOfTheWrongKindIsNamed() {
        for (text, said) in [
            (#"{"scopes": "openid"}"#, #"the field "scopes" has the wrong kind of value."#),
            (#"{"client_authentication": "telepathy"}"#, #"the field "client_authentication" is not valid."#),
            (#"{"pkce": "yes"}"#, #"the field "pkce" has the wrong kind of value."#),
        ] {
            let error = #expect(throws: OAuthError.self) { try ProviderFile(data: Data(text.utf8), file: URL(fileURLWithPath: "/x.json")) }
            #expect(error == .invalidConfiguration(String(said.dropFirst(0))) || "\(error!)".contains(said), "\(error!)")
        }
    }

    @Test func anythingButOneJSONObjectIsRefused() {
        let values = [
            "01", "1.", "+1", #""\u12""#, "\"\u{1}\"", "tru", String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ]
        for text in ["[1]", "{", "{} {}", "", "null"] + values.map({ #"{"a": \#($0)}"# }) {
            #expect(throws: OAuthError.self, "\(text)") { try ProviderFile(data: Data(text.utf8), file: URL(fileURLWithPath: "/x.json")) }
        }
    }

    /// A person's `null` also removes what a layer below brings later: the endpoints of an issuer's
    /// discovery document, layered under the person's file when the configuration is made.
    @Test func aNullRemovesADiscoveredKeyToo() throws {
        let own = try ProviderFile(
            data: Data(#"{"issuer": "https://id.example", "revocation_endpoint": null, "profile": {"url": null}}"#.utf8),
            file: URL(fileURLWithPath: "/p.json"))
        let discovered = try ProviderFile([
            "authorization_endpoint": "https://id.example/a", "revocation_endpoint": "https://id.example/r",
            "profile": ["name": "name", "url": "profile"],
        ])
        let layered = own.over(ProviderFile()).over(discovered)
        #expect(layered.revocationEndpoint.value == nil)
        let profile = try #require(layered.profile.value)
        #expect(profile["url"] == nil && profile["name"] == .one("name"))
        #expect(layered.authorizationEndpoint.value == "https://id.example/a")
    }

    @Test func whatJSONAllowsIsReadAndWrittenBackAsItWas() throws {
        let texts = [
            "\u{FEFF}{\"id\": \"bom\"}\n",  // an editor's byte-order mark
            #"{"id": "a", "id": "b"}"#,  // a repeated key: the last counts
            #"{"profile": {"name": "a", "email": "e", "name": "b"}}"#,  // in a nested object too (found by the fuzzer)
            #"{"n": -0, "m": 1e999, "s": "\ud83d\ude00 \ud800\n \u2028"}"#,
            "{ }",
            #"{"a":1,"b":[true,false,null]}"#,
        ]
        for text in texts {
            let file = try ProviderFile(data: Data(text.utf8), file: URL(fileURLWithPath: "/x.json"))
            #expect(file.data == Data(text.utf8), "\(text)")
        }
        let repeated = try ProviderFile(data: Data(#"{"id": "a", "id": "b"}"#.utf8), file: URL(fileURLWithPath: "/x.json"))
        #expect(repeated.id == .value("b"))
        let odd = try ProviderFile(data: Data(#"{"s": "\ud83d\ude00 \ud800\n"}"#.utf8), file: URL(fileURLWithPath: "/x.json"))
        #expect(odd.unknown == [.init("s", .string("😀 \u{FFFD}\n"))], "a lone half is U+FFFD, and what follows it stays")
    }

    /// Each change keeps the object valid JSON whatever its layout: checked by reading it back.
    @Test(arguments: [#"{"only": 1}"#, "{}", "{\n}\n", #"{"a":1,"b":2}"#, "{\n  \"a\": 1,\n  \"b\": 2\n}\n"])
    func changesKeepTheObjectValid(_ text: String) throws {
        var file = try ProviderFile(data: Data(text.utf8), file: URL(fileURLWithPath: "/x.json"))
        let changes: [(inout ProviderFile) -> Void] = [
            { $0.unknown = [] }, { $0.id = .value("new") }, { $0.scopes = .value(["openid"]) }, { $0.id = .unset },
            { $0.unknown.append(.init("z", .bool(true))) }, { $0 = ProviderFile() },
        ]
        for change in changes {
            change(&file)
            let again = try ProviderFile(data: file.data, file: URL(fileURLWithPath: "/again.json"))
            #expect(again == file, "\(String(decoding: file.data, as: UTF8.self))")
        }
    }

    @Test func invalidUTF8IsRefusedAndSaidSo() {
        #expect(throws: OAuthError.invalidConfiguration("/x.json is not UTF-8 text; save it as UTF-8 and try again.")) {
            try ProviderFile(data: Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]), file: URL(fileURLWithPath: "/x.json"))
        }
    }
}
