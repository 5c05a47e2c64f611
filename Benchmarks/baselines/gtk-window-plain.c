/* The C window as it was until 2026-11-25: Latchkey's window before it had the
 * provider row (header bar, avatar, two labels, four buttons, spinner, status).
 * make bench still reports the launch against it, so that the change of baseline
 * (gtk-window.c, the window's first frame as it is now) shows in every run. */
#include <gtk/gtk.h>

static void activate(GtkApplication *app, gpointer data) {
    (void)data;
    GtkWidget *window = gtk_application_window_new(app);
    gtk_window_set_title(GTK_WINDOW(window), "Baseline");
    gtk_window_set_default_size(GTK_WINDOW(window), 460, 440);
    GtkWidget *header = gtk_header_bar_new();
    gtk_header_bar_set_title(GTK_HEADER_BAR(header), "Baseline");
    gtk_header_bar_set_subtitle(GTK_HEADER_BAR(header), "Sandbox provider (offline demo)");
    gtk_header_bar_set_show_close_button(GTK_HEADER_BAR(header), TRUE);
    gtk_window_set_titlebar(GTK_WINDOW(window), header);

    GtkWidget *content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 20);
    g_object_set(content, "margin", 24, NULL);
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 16);
    GtkWidget *avatar = gtk_image_new_from_icon_name("avatar-default-symbolic", GTK_ICON_SIZE_BUTTON);
    gtk_image_set_pixel_size(GTK_IMAGE(avatar), 64);
    GtkWidget *names = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_box_pack_start(GTK_BOX(names), gtk_label_new("Not signed in"), FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(names), gtk_label_new("Sign in with Sandbox provider (offline demo)."), FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(top), avatar, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(top), names, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(content), top, FALSE, FALSE, 0);

    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    const char *labels[] = {"Sign in", "Get my profile", "Open profile", "Sign out"};
    for (int i = 0; i < 4; i++) {
        GtkWidget *button = gtk_button_new_with_label(labels[i]);
        gtk_box_pack_start(GTK_BOX(buttons), button, FALSE, FALSE, 0);
        if (i > 0) gtk_widget_set_sensitive(button, FALSE);
    }
    gtk_box_pack_start(GTK_BOX(content), buttons, FALSE, FALSE, 0);
    GtkWidget *status = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    gtk_box_pack_start(GTK_BOX(status), gtk_spinner_new(), FALSE, FALSE, 0);
    GtkWidget *label = gtk_label_new("Not signed in. Sign in with Sandbox provider (offline demo) to begin.");
    gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
    gtk_box_pack_start(GTK_BOX(status), label, TRUE, TRUE, 0);
    gtk_box_pack_end(GTK_BOX(content), status, FALSE, FALSE, 0);
    gtk_container_add(GTK_CONTAINER(window), content);
    gtk_widget_show_all(window);
}

int main(int argc, char **argv) {
    /* Unique, like Latchkey: registering the name on the session bus is part of both launches. */
    GtkApplication *app = gtk_application_new("io.github.latchkey.BaselineWindow", G_APPLICATION_DEFAULT_FLAGS);
    g_signal_connect(app, "activate", G_CALLBACK(activate), NULL);
    int status = g_application_run(G_APPLICATION(app), argc, argv);
    g_object_unref(app);
    return status;
}
