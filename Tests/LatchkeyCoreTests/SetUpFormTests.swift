import Testing

@testable import LatchkeyCore

/// The set-up dialog's checks: each mistake is named beside its field, and
/// nothing is kept until the form is right.
@Suite struct SetUpFormTests {
    typealias Need = SetUpForm.SecretNeed

    @Test(arguments: [
        ("", "", Need.none, SetUpForm.Field.clientID, "Enter the client id GitHub gave you"),
        ("   ", "s", Need.required(stored: false), .clientID, "Enter the client id"),
        ("abc def", "", Need.none, .clientID, "no spaces or line breaks"),
        ("abc\tdef", "", Need.none, .clientID, "no spaces or line breaks"),
        ("Iv1.abc", "", Need.required(stored: false), .secret, "GitHub needs the client secret too"),
        ("Iv1.abc", "shh", Need.none, .secret, "takes no client secret from a desktop app"),
        ("Iv1.abc", "Iv1.abc", Need.optional, .secret, "pasted twice"),
    ])
    func aMistakeIsNamedBesideItsField(clientID: String, secret: String, need: Need, field: SetUpForm.Field, said: String) {
        guard case .failure(let problem) = SetUpForm.check(clientID: clientID, secret: secret, need: need, providerName: "GitHub")
        else {
            Issue.record("\(clientID)/\(secret) was accepted")
            return
        }
        #expect(problem.field == field)
        #expect(problem.sentence.contains(said), "\(problem.sentence)")
    }

    @Test func aRightFormIsTrimmedAndKeepsWhatIsStored() {
        let check = { (id: String, secret: String, need: Need) in
            try? SetUpForm.check(clientID: id, secret: secret, need: need, providerName: "GitHub").get()
        }
        #expect(check(" Iv1.abc\n", " shh ", .required(stored: false)) == SetUpForm.Answer(clientID: "Iv1.abc", secret: "shh"))
        // A secret kept already stays when the field is left empty.
        #expect(check("Iv1.abc", "", .required(stored: true)) == SetUpForm.Answer(clientID: "Iv1.abc", secret: nil))
        #expect(check("Iv1.abc", "", .optional) == SetUpForm.Answer(clientID: "Iv1.abc", secret: nil))
        #expect(check("Iv1.abc", "", .none) == SetUpForm.Answer(clientID: "Iv1.abc", secret: nil))
    }

    /// The add dialog asks one thing at a time: the kind, then its one value.
    @Test func aProviderIsAddedFromTheOneThingAskedFor() throws {
        #expect(try SetUpForm.source(.issuer, " https://id.example ").get() == .issuer("https://id.example"))
        #expect(try SetUpForm.source(.file, "/home/ada/acme.json").get() == .file("/home/ada/acme.json"))
        #expect(try SetUpForm.source(.resource, "https://api.example/mcp\n").get() == .resource("https://api.example/mcp"))
        for (kind, text, said) in [
            (SetUpForm.SourceKind.issuer, "", "Give the provider's issuer URL"), (.resource, " ", "Give the URL of what you want to reach"),
            (.file, "", "Choose a provider file"), (.issuer, "id.example", "An issuer URL starts with https://"),
            (.resource, "api.example/mcp", "A resource URL starts with https://"),
        ] {
            guard case .failure(let problem) = SetUpForm.source(kind, text) else {
                Issue.record("\(kind) \(text) was accepted")
                continue
            }
            #expect(problem.sentence.contains(said), "\(problem.sentence)")
        }
    }

    @Test func setUpTakesSignInsPlaceOnlyWhileTheProviderIsNotReady() {
        let unavailable = ViewModel(
            state: .unavailable("there is no client id for GitHub."), providerName: "GitHub", storeName: "the keyring")
        #expect(unavailable.setUpVisible && !unavailable.signInEnabled)
        #expect(unavailable.subline.contains("Set up…"))
        for state: AppState in [.starting(), .signedOut(notice: nil), .signedIn(notice: nil), .failed(message: "x", signedIn: false)] {
            #expect(!ViewModel(state: state, providerName: "GitHub", storeName: "the keyring").setUpVisible, "\(state)")
        }
    }
}
