import CGtk
import CWebKit
import Foundation
import GtkKit

// The C interface of libLatchkeyWebSignIn.so. The app loads this library with
// dlopen only when a sign-in is near: linking WebKitGTK costs every launch
// ~65 ms and ~25 MiB before any page is shown. Only C types cross: pointers,
// strings and function pointers, so no Swift type is shared between the app
// and this library.

/// Answers whether a navigation (address, HTTP method) is the redirect URI (nonzero: ignore it).
public typealias LatchkeyNavigationCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32

/// Reports an event: 0 cancelled, 1 failed (with a message), 2 page loaded.
public typealias LatchkeyEventCallback = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void

/// Makes a sign-in window, not yet shown, with its web process started on a blank page.
@_cdecl("latchkey_web_sign_in_prepare")
public func latchkeyWebSignInPrepare() -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(SignInWindowHandle(SignInWindow())).toOpaque()
}

/// Shows a prepared window over `parent` (a GtkWindow*) and loads `url`.
@_cdecl("latchkey_web_sign_in_present")
public func latchkeyWebSignInPresent(
    _ handle: UnsafeMutableRawPointer, _ parent: UnsafeMutableRawPointer?, _ title: UnsafePointer<CChar>,
    _ url: UnsafePointer<CChar>, _ context: UnsafeMutableRawPointer?, _ navigation: LatchkeyNavigationCallback,
    _ event: LatchkeyEventCallback
) {
    let window = Unmanaged<SignInWindowHandle>.fromOpaque(handle).takeUnretainedValue().window
    guard let target = URL(string: String(cString: url)) else {
        "the sign-in address is not a valid URL.".withCString { event(context, 1, $0) }
        return
    }
    window.present(
        over: parent?.assumingMemoryBound(to: GtkWindow.self), title: String(cString: title), url: target,
        navigation: { uri, method in uri.withCString { uri in method.withCString { navigation(context, uri, $0) } } != 0 },
        event: { happened in
            switch happened {
            case .cancelled: event(context, 0, nil)
            case .failed(let message): message.withCString { event(context, 1, $0) }
            case .pageLoaded: event(context, 2, nil)
            }
        })
}

/// Closes the window and lets go of it and its web context.
@_cdecl("latchkey_web_sign_in_close")
public func latchkeyWebSignInClose(_ handle: UnsafeMutableRawPointer) {
    let box = Unmanaged<SignInWindowHandle>.fromOpaque(handle)
    box.takeUnretainedValue().window.close()
    box.release()
}

/// WebKitGTK's run-time version as major·10000 + minor·100 + micro.
@_cdecl("latchkey_web_sign_in_webkit_version")
public func latchkeyWebSignInWebKitVersion() -> Int32 {
    Int32(webkit_get_major_version() * 10000 + webkit_get_minor_version() * 100 + webkit_get_micro_version())
}

final class SignInWindowHandle {
    let window: SignInWindow
    init(_ window: SignInWindow) { self.window = window }
}
