import CGtk
import CWebKit
import CWebSignIn
import Foundation
import GtkKit

// libLatchkeyWebSignIn.so's side of latchkey_web_sign_in.h. The app opens this
// library only when a sign-in is near: linking WebKitGTK costs
// every launch ~65 ms and ~25 MiB before any page is shown.
//
// Every function in the table but the version runs on GTK's thread (the app
// calls it there, inside its loop); `onGtkThread` checks that on each call.

/// The library's entry point: its table of functions, typed by the shared header.
@_cdecl("latchkey_web_sign_in_interface")
public func latchkeyWebSignInInterface() -> UnsafePointer<LatchkeyWebSignInInterface> {
    UnsafePointer(interfaceTable)
}

/// Made once, never freed: the app may call through it for the life of the process.
private nonisolated(unsafe) let interfaceTable: UnsafeMutablePointer<LatchkeyWebSignInInterface> = {
    let table = UnsafeMutablePointer<LatchkeyWebSignInInterface>.allocate(capacity: 1)
    table.initialize(
        to: LatchkeyWebSignInInterface(
            abi_version: LATCHKEY_WEB_SIGN_IN_ABI_VERSION,
            prepare: { onGtkThread { Unmanaged.passRetained(SignInWindow()) }.toOpaque() },
            present: { window, parent, cTitle, cURL, context, navigation, event in
                guard let window, let cTitle, let cURL, let navigation, let event else { return }
                let (title, address) = (String(cString: cTitle), String(cString: cURL))
                // C pointers the app passed on GTK's thread, used on it (onGtkThread checks).
                nonisolated(unsafe) let (parent, context) = (parent, context)
                let box = Unmanaged<SignInWindow>.fromOpaque(window)
                onGtkThread {
                    present(
                        box.takeUnretainedValue(), over: parent, title: title,
                        url: address, context: context, navigation: navigation, event: event)
                }
            },
            close: { window in
                guard let window else { return }
                let box = Unmanaged<SignInWindow>.fromOpaque(window)
                onGtkThread {
                    box.takeUnretainedValue().close()
                    box.release()
                }
            },
            webkit_version: { webKitVersion() }))
    return table
}()

/// Runs main-actor code in a function of the table. This library may run on a
/// Swift runtime of its own (the app's is linked in statically), whose idea of
/// the main thread is whichever thread loaded it; so it adopts GTK's thread the
/// first time GTK's loop calls in (see `GtkThread`), and checks it every time.
@inline(__always)
private func onGtkThread<T: Sendable>(_ work: @MainActor () -> T) -> T {
    GtkThread.adoptCurrent()
    return GtkThread.assumeIsolated(work)
}

/// WebKitGTK's run-time version as major·10000 + minor·100 + micro.
private func webKitVersion() -> Int32 {
    Int32(webkit_get_major_version() * 10000 + webkit_get_minor_version() * 100 + webkit_get_micro_version())
}

@MainActor
private func present(
    _ window: SignInWindow, over parent: UnsafeMutableRawPointer?, title: String, url: String,
    context: UnsafeMutableRawPointer?, navigation: LatchkeyNavigationCallback, event: LatchkeyEventCallback
) {
    // The context is the app's own pointer, handed back untouched on this thread.
    nonisolated(unsafe) let context = context
    guard let target = URL(string: url) else {
        "the sign-in address is not a valid URL.".withCString { event(context, LatchkeySignInEventFailed, $0) }
        return
    }
    window.present(
        over: parent?.assumingMemoryBound(to: GtkWindow.self), title: title, url: target,
        navigation: { uri, method in uri.withCString { uri in method.withCString { navigation(context, uri, $0) } } != 0 },
        event: { happened in
            switch happened {
            case .cancelled: event(context, LatchkeySignInEventCancelled, nil)
            case .failed(let message): message.withCString { event(context, LatchkeySignInEventFailed, $0) }
            case .pageLoaded: event(context, LatchkeySignInEventPageLoaded, nil)
            }
        })
}
