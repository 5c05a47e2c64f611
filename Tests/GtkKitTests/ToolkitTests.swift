import Testing
@testable import GtkKit

@Suite struct ToolkitTests {
    @Test func gtkIsVersionThreeAtRunTime() {
        #expect(Toolkit.gtk.major == 3)
        #expect(Toolkit.gtk >= Toolkit.Version(major: 3, minor: 24, micro: 0))
    }

    @Test func webKitGtkIsTheFourPointOneAPIAtLeastTwoPointFourty() {
        #expect(Toolkit.webKit.major == 2)
        #expect(Toolkit.webKit.minor >= 40)
    }

    @Test func libsecretLinksAndRegistersItsTypes() {
        #expect(Toolkit.secretSchemaTypeName == "SecretSchema")
    }
}
