import GtkKit
import OAuthCore

print("Latchkey \(OAuthCore.version): GTK \(Toolkit.gtk), WebKitGTK \(Toolkit.webKit)")
print("The window arrives with the app issue; the sandbox provider runs on its own: latchkey-sandbox")
