import GtkKit
import OAuthCore
import QRCode

/// "Sign in on another device": where to go and the code to type there (RFC 8628), and a QR
/// code of the address that holds the code, for a phone's camera. It stays while Latchkey
/// waits for the person to answer there; Cancel, Escape or closing it stops the wait.
@MainActor
final class DeviceDialog {
    static let title = "Sign in on another device"
    private let dialog: Dialog
    // Kept: a button's "clicked" handler lives as long as its wrapper.
    private let cancel = Button(label: "Cancel")
    private var cancelled: (@MainActor () -> Void)?

    init(parent: Window, providerName: String, authorization: DeviceAuthorization, cancelled: @escaping @MainActor () -> Void) {
        self.cancelled = cancelled
        dialog = Dialog(title: Self.title, over: parent)
        dialog.setTitlebar(HeaderBar(title: Self.title))
        dialog.setIcon(name: LatchkeyApp.id)
        dialog.setResizable(false)

        let address = authorization.verificationURI.absoluteString
        let intro = Label("On your phone or another computer, open this address and sign in to \(providerName):", wrap: true)
        intro.setMaximumWidth(characters: 50)
        let link = Label(address, selectable: true)
        link.setAccessible(name: address, description: "Where to sign in")
        let codeIntro = Label("When it asks for a code, enter:", wrap: true)
        let code = Label("", selectable: true)
        code.setMarkup("<span size=\"xx-large\" weight=\"bold\" font_family=\"monospace\">\(Label.escape(authorization.userCode))</span>")
        code.setAccessible(name: authorization.userCode, description: "The code to enter")

        let content = Box(vertical: true, spacing: 12)
        content.setMargins(18)
        content.append(intro)
        content.append(link)
        content.append(codeIntro)
        content.append(code)
        // The address with the code in it, for a camera: nothing to type at all.
        if let complete = authorization.verificationURIComplete?.absoluteString, let qr = QRCode(complete) {
            let picture = qr.pixels(scale: max(2, 232 / (qr.size + 2 * QRCode.quietZone)))
            let image = Image(iconName: "image-missing")
            image.setGreyPixels(picture.bytes, side: Int32(picture.side))
            image.setAccessible(
                name: "QR code of \(complete)", description: "Scan it with your phone's camera to open the address with the code")
            let or = Label("Or scan this with your phone's camera:", wrap: true)
            or.addStyleClass("dim-label")
            content.append(or)
            content.append(image)
        }
        let waiting = Box(vertical: false, spacing: 8)
        let spinner = Spinner()
        spinner.setSpinning(true)
        waiting.append(spinner)
        let minutes = max(1, Int((authorization.expiresAt.timeIntervalSinceNow / 60).rounded()))
        let wait = Label("Waiting for you there… The code works for \(minutes) minute\(minutes == 1 ? "" : "s").", wrap: true)
        wait.addStyleClass("dim-label")
        waiting.append(wait, expand: true)
        content.append(waiting)
        dialog.setContent(content)

        cancel.setAccessible(name: "Cancel", description: "Stop waiting for the other device")
        dialog.addButton(cancel)
        cancel.onClicked { [weak self] in self?.stop() }
        dialog.onDismiss { [weak self] in self?.stop() }
        dialog.showAll()
        dialog.present()
    }

    /// The person stopped waiting: said once, and the dialog goes.
    private func stop() {
        guard let cancelled else { return }
        self.cancelled = nil
        cancelled()
        close()
    }

    private var closed = false

    /// The wait ended (signed in, refused, expired, cancelled): the dialog goes, and says nothing more.
    func close() {
        cancelled = nil
        guard !closed else { return }
        closed = true
        dialog.destroy()
    }
}

/// Where the dialog a device sign-in showed is held until the sign-in ends (it is shown from the work's task).
@MainActor
final class DeviceDialogSlot: Sendable {
    var dialog: DeviceDialog?
}
