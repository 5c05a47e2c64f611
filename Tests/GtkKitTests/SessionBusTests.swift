import Foundation
import GioKit
import GtkKit
import Testing

/// What the bus says of a name: owned, or not. (When it says nothing — no bus, a timeout — `owned` is
/// nil and the agent takes no question back; that case is not made here: a test process shares the
/// one session bus GLib found first.)
@Suite struct SessionBusTests {
    @Test func theBusSaysWhetherANameIsOwned() throws {
        try #require(SessionBus.owned("org.freedesktop.DBus") != nil, "no session bus here")
        #expect(SessionBus.owned("org.freedesktop.DBus") == true)
        #expect(SessionBus.owned(":1.999999") == false, "a unique name never given out")
        #expect(SessionBus.hasOwner("org.freedesktop.DBus") && !SessionBus.hasOwner(":1.999999"))
    }
}
