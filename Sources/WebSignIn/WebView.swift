import CGtk
import CWebKit
import Foundation
import GtkKit

/// A WebKitWebView in its own ephemeral context: no cookie, cache or storage
/// outlives it unless the person asked the provider to remember them.
final class WebView: Widget {
    /// Read from `deinit`, which checks that it runs on GTK's thread.
    nonisolated(unsafe) let context: UnsafeMutablePointer<WebKitWebContext>
    var view: UnsafeMutablePointer<WebKitWebView> { cast(pointer) }

    init() {
        context = webkit_web_context_new_ephemeral()
        super.init(webkit_web_view_new_with_context(context))
        let settings = webkit_web_view_get_settings(view)
        // A sign-in page needs no plug-ins and no developer tools. window.open is let
        // through to `create` (onNewWindow), which decides: were it blocked here, a
        // provider that answers in a popup would leave the person waiting for good.
        webkit_settings_set_enable_developer_extras(settings, 0)
        webkit_settings_set_javascript_can_open_windows_automatically(settings, 1)
        // The sign-in window never downloads: whatever slips past the response policy
        // below (a script-clicked <a download>) is cancelled before a byte is written.
        let cancelDownload: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, download, _ in
            if let download { webkit_download_cancel(cast(download)) }
        }
        g_signal_connect_data(
            context, "download-started", unsafeBitCast(cancelDownload, to: GCallback.self), nil, nil, GConnectFlags(rawValue: 0))
    }

    deinit {
        // This runs before Object's deinit, so it checks the thread itself.
        GtkThread.precondition("Releasing a web view")
        g_object_unref(context)
    }

    func load(_ url: URL) { webkit_web_view_load_uri(view, url.absoluteString) }

    /// Starts the web process with nothing to show.
    func loadBlank() { webkit_web_view_load_html(view, "", nil) }
    func stop() { webkit_web_view_stop_loading(view) }

    var uri: String? { webkit_web_view_get_uri(view).map { String(cString: $0) } }
    var progress: Double { webkit_web_view_get_estimated_load_progress(view) }

    /// Whether the page came over TLS with a certificate WebKit trusts.
    var hasValidTLS: Bool {
        var certificate: UnsafeMutablePointer<GTlsCertificate>?
        var errors = GTlsCertificateFlags(rawValue: 0)
        return webkit_web_view_get_tls_info(view, &certificate, &errors) != 0 && errors.rawValue == 0
    }

    /// A navigation or new-window action, as `decide-policy` offers it.
    struct Navigation {
        let uri: String
        /// "GET", or "POST" for a form submitted to the address.
        let method: String
    }

    /// `decide-policy`: the handler gets every navigation and new-window action
    /// and returns true to ignore it.
    func onNavigation(_ handler: @escaping @MainActor (Navigation) -> Bool) {
        let trampoline: @convention(c) (gpointer?, gpointer?, WebKitPolicyDecisionType, gpointer?) -> gboolean = {
            _, decision, type, data in
            guard let decision,
                type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION || type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION
            else { return 0 }
            let navigation: UnsafeMutablePointer<WebKitNavigationPolicyDecision> = cast(decision)
            guard let action = webkit_navigation_policy_decision_get_navigation_action(navigation),
                let request = webkit_navigation_action_get_request(action),
                let uri = webkit_uri_request_get_uri(request)
            else { return 0 }
            let method = webkit_uri_request_get_http_method(request).map { String(cString: $0) } ?? "GET"
            let handler = signalHandler(data, (@MainActor (Navigation) -> Bool).self)
            let next = Navigation(uri: String(cString: uri), method: method)
            guard GtkThread.assumeIsolated({ handler(next) }) else { return 0 }
            webkit_policy_decision_ignore(cast(decision))
            return 1
        }
        connect("decide-policy", unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    /// A response WebKit cannot show (an attachment, a file type it does not display)
    /// is refused, never downloaded; the handler learns whether it was the page itself
    /// (the main frame) rather than something inside it.
    func onDownloadRefused(_ handler: @escaping @MainActor (_ mainFrame: Bool) -> Void) {
        let trampoline: @convention(c) (gpointer?, gpointer?, WebKitPolicyDecisionType, gpointer?) -> gboolean = {
            _, decision, type, data in
            guard let decision, type == WEBKIT_POLICY_DECISION_TYPE_RESPONSE else { return 0 }
            let response: UnsafeMutablePointer<WebKitResponsePolicyDecision> = cast(decision)
            let attachment =
                webkit_response_policy_decision_get_response(response)
                .flatMap { webkit_uri_response_get_http_headers($0) }
                .flatMap { soup_message_headers_get_one($0, "Content-Disposition") }
                .map { String(cString: $0).lowercased().hasPrefix("attachment") } ?? false
            guard attachment || webkit_response_policy_decision_is_mime_type_supported(response) == 0 else { return 0 }
            webkit_policy_decision_ignore(cast(decision))
            let mainFrame = webkit_response_policy_decision_is_main_frame_main_resource(response) != 0
            let handler = signalHandler(data, (@MainActor (Bool) -> Void).self)
            GtkThread.assumeIsolated { handler(mainFrame) }
            return 1
        }
        connect("decide-policy", unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    /// `create`: a page asked for a new window (window.open, target=_blank) and
    /// `decide-policy` let it through. No second window is ever made: the address
    /// loads in this view instead, through `decide-policy` like any other.
    func openNewWindowsHere() {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> gpointer? = { view, action, _ in
            if let view, let action, let request = webkit_navigation_action_get_request(OpaquePointer(action)) {
                webkit_web_view_load_request(cast(view), request)
            }
            return nil
        }
        connect("create", unsafeBitCast(trampoline, to: GCallback.self), ())
    }

    /// From now on nothing loads and nothing downloads: every policy decision is
    /// refused. For a view on its way out, whose page may still try to navigate.
    func refuseEverything() {
        let trampoline: @convention(c) (gpointer?, gpointer?, WebKitPolicyDecisionType, gpointer?) -> gboolean = {
            _, decision, _, _ in
            if let decision { webkit_policy_decision_ignore(cast(decision)) }
            return 1
        }
        connect("decide-policy", unsafeBitCast(trampoline, to: GCallback.self), ())
    }

    func onLoadChanged(_ handler: @escaping @MainActor (WebKitLoadEvent) -> Void) {
        let trampoline: @convention(c) (gpointer?, WebKitLoadEvent, gpointer?) -> Void = { _, event, data in
            let handler = signalHandler(data, (@MainActor (WebKitLoadEvent) -> Void).self)
            GtkThread.assumeIsolated { handler(event) }
        }
        connect("load-changed", unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    struct LoadFailure {
        let uri: String
        let domain: GQuark
        let code: Int32
        let message: String
    }

    /// A main-frame load failed. Return true to suppress WebKit's own error page.
    func onLoadFailed(_ handler: @escaping @MainActor (LoadFailure) -> Bool) {
        let trampoline:
            @convention(c) (gpointer?, WebKitLoadEvent, UnsafePointer<gchar>?, UnsafeMutablePointer<GError>?, gpointer?)
                -> gboolean = { _, _, uri, error, data in
                    let failure = LoadFailure(
                        uri: uri.map { String(cString: $0) } ?? "", domain: error?.pointee.domain ?? 0, code: error?.pointee.code ?? 0,
                        message: error.map { String(cString: $0.pointee.message) } ?? "unknown error")
                    let handler = signalHandler(data, (@MainActor (LoadFailure) -> Bool).self)
                    return GtkThread.assumeIsolated { handler(failure) } ? 1 : 0
                }
        connect("load-failed", unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    /// The server's certificate is not valid. The handler gets the URI and the
    /// GTlsCertificateFlags; the load is stopped either way — never allowed.
    func onTLSError(_ handler: @escaping @MainActor (String, GTlsCertificateFlags) -> Void) {
        let trampoline: @convention(c) (gpointer?, UnsafePointer<gchar>?, gpointer?, GTlsCertificateFlags, gpointer?) -> gboolean = {
            _, uri, _, flags, data in
            let handler = signalHandler(data, (@MainActor (String, GTlsCertificateFlags) -> Void).self)
            let address = uri.map { String(cString: $0) } ?? ""
            GtkThread.assumeIsolated { handler(address, flags) }
            return 1
        }
        connect("load-failed-with-tls-errors", unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    func onWebProcessTerminated(_ handler: @escaping @MainActor (WebKitWebProcessTerminationReason) -> Void) {
        let trampoline: @convention(c) (gpointer?, WebKitWebProcessTerminationReason, gpointer?) -> Void = { _, reason, data in
            let handler = signalHandler(data, (@MainActor (WebKitWebProcessTerminationReason) -> Void).self)
            GtkThread.assumeIsolated { handler(reason) }
        }
        connect("web-process-terminated", unsafeBitCast(trampoline, to: GCallback.self), handler)
    }

    nonisolated static func describe(_ flags: GTlsCertificateFlags) -> String {
        let raw = flags.rawValue
        var reasons: [String] = []
        if raw & G_TLS_CERTIFICATE_UNKNOWN_CA.rawValue != 0 { reasons.append("is not signed by an authority this computer trusts") }
        if raw & G_TLS_CERTIFICATE_BAD_IDENTITY.rawValue != 0 { reasons.append("was issued for another site") }
        if raw & G_TLS_CERTIFICATE_EXPIRED.rawValue != 0 { reasons.append("has expired") }
        if raw & G_TLS_CERTIFICATE_NOT_ACTIVATED.rawValue != 0 { reasons.append("is not valid yet") }
        if raw & G_TLS_CERTIFICATE_REVOKED.rawValue != 0 { reasons.append("has been revoked") }
        if raw & G_TLS_CERTIFICATE_INSECURE.rawValue != 0 { reasons.append("uses insecure cryptography") }
        return reasons.isEmpty ? "could not be verified" : reasons.joined(separator: " and ")
    }
}
