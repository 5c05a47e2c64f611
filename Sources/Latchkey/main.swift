import GtkKit
import OAuthCore

print("Latchkey \(OAuthCoreInfo.version): GTK \(Toolkit.gtk), WebKitGTK \(Toolkit.webKit)")
print("The window arrives with the app issue; the sandbox provider runs on its own: latchkey-sandbox")
