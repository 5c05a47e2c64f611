import DesktopOAuth
import GtkKit
import LatchkeyCore

/// The main window: who you are, four buttons, and a status line. It holds no
/// state of its own; `render` shows a ViewModel.
@MainActor
final class MainWindow {
    let window: Window
    let signIn = Button(label: "Sign in")
    let getProfile = Button(label: "Get my profile")
    let openProfile = Button(label: "Open profile")
    let signOut = Button(label: "Sign out")
    private let status = Label("", wrap: true, selectable: true)
    private let spinner = Spinner()
    private let avatar = Image(iconName: "avatar-default-symbolic", pixelSize: 64)
    private let name = Label()
    private let email = Label()
    private let note = Label("", wrap: true)
    private let profileBox = Box(vertical: false, spacing: 16)

    init(application: Application, providerName: String) {
        window = Window(application: application, title: "Latchkey")
        window.setDefaultSize(width: 460, height: 440)
        window.setIcon(name: LatchkeyApp.id)
        window.setTitlebar(HeaderBar(title: "Latchkey", subtitle: providerName))

        avatar.setAccessible(name: "Profile picture")
        name.addStyleClass("title-2")
        let nameAndEmail = Box(vertical: true, spacing: 4)
        nameAndEmail.setAlignment(vertical: .center)
        nameAndEmail.append(name)
        nameAndEmail.append(email)
        profileBox.append(avatar)
        profileBox.append(nameAndEmail, expand: true)
        note.addStyleClass("dim-label")

        signIn.addStyleClass("suggested-action")
        signIn.setAccessible(name: "Sign in", description: "Sign in with \(providerName) in a sign-in window")
        getProfile.setAccessible(name: "Get my profile")
        openProfile.setAccessible(name: "Open profile")
        openProfile.ellipsizeLabel()
        signOut.setAccessible(name: "Sign out")
        status.setAccessible(name: "", description: "Status")

        let buttons = Box(vertical: true, spacing: 12)
        for button in [signIn, getProfile, openProfile, signOut] { buttons.append(button) }

        let statusRow = Box(vertical: false, spacing: 8)
        statusRow.append(spinner)
        statusRow.append(status, expand: true)

        let content = Box(vertical: true, spacing: 20)
        content.setMargins(24)
        content.append(profileBox)
        content.append(note)
        content.append(buttons)
        content.appendAtEnd(statusRow)
        window.setChild(content)
        window.showAll()
    }

    func render(_ model: ViewModel) {
        signIn.isSensitive = model.signInEnabled
        getProfile.isSensitive = model.getProfileEnabled
        signOut.isVisible = model.signOutVisible
        signOut.isSensitive = model.signOutEnabled
        if let url = model.openProfileURL {
            openProfile.label = url
            openProfile.setAccessible(name: "Open profile", description: url)
            openProfile.setTooltip("Open \(url) in your web browser")
            openProfile.isVisible = true
        } else {
            openProfile.isVisible = false
        }
        status.text = model.status
        status.setAccessible(name: model.status, description: "Status")
        model.isError ? status.addStyleClass("error") : status.removeStyleClass("error")
        spinner.isVisible = model.busy
        spinner.setSpinning(model.busy)

        name.text = model.headline
        email.text = model.subline
        note.text = model.profile?.note ?? ""
        note.isVisible = model.profile?.note != nil
        if model.profile == nil { showPicture(nil) }
    }

    /// The profile picture, or the generic one when there is none or it cannot be read.
    func showPicture(_ bytes: [UInt8]?) {
        if let bytes, avatar.setPicture(bytes, size: 64) { return }
        avatar.setIcon("avatar-default-symbolic")
    }
}
