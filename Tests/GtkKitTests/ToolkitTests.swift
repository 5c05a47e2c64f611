import CWebSignIn
import GtkKit
import Keyring
import Testing
import WebSignIn

@testable import DesktopOAuth

@Suite struct ToolkitTests {
    @Test func gtkIsVersionThreeAtRunTime() {
        #expect(Toolkit.gtk.major == 3)
        #expect(Toolkit.gtk >= Toolkit.Version(major: 3, minor: 24, micro: 0))
    }

    @Test func webKitGtkIsTheFourPointOneAPIAtLeastTwoPointFourty() throws {
        let table = latchkeyWebSignInInterface().pointee
        #expect(table.abi_version == LATCHKEY_WEB_SIGN_IN_ABI_VERSION)
        let webKitVersion = try #require(table.webkit_version)
        let version = webKitVersion()
        #expect(version / 10000 == 2)
        #expect(version / 100 % 100 >= 40)
    }

    @Test func libsecretOpensAndRegistersItsTypes() throws {
        #expect(try SecretServiceTokenStore.schemaTypeName() == "SecretSchema")
    }
}
