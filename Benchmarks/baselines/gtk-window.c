/* Baseline: the main window of Latchkey written in C with GTK 3, no WebKit: the same widgets as
 * MainWindow.swift makes, in the same boxes, with the same ones left out of the first frame.
 *   header bar: title, subtitle, Add a provider and Add another account at its start, Allowed
 *     programs at its end;
 *   provider row (a dim label, a combo box with the chosen provider); the row of where to sign in
 *     (a dim label, two radio buttons, a label), made but left out of the first frame;
 *   avatar, a title-2 name ("Checking your sign-in" while it is read) and a line under it; a note and
 *     the scopes, left out;
 *   Set up…, Sign in (suggested), Sign in on another device, Cancel, Get my profile (insensitive),
 *     Open profile, Sign out: Sign in and Get my profile shown, the others left out;
 *   spinner and status line: the app's first render, while it reads the saved sign-in (Sign in disabled,
 *     the spinner turning, "Starting…"; since 2026-11-29 the app shows its window after that render).
 * Keep it matched as the window changes (issue 37 §8). Until 2026-11-27 it lacked the header's three
 * buttons, the radio row, the note and scopes and three buttons; until 2026-11-25 the provider row
 * too: docs/performance.md. */
#include <gtk/gtk.h>

static GtkWidget *icon_button(const char *icon) { return gtk_button_new_from_icon_name(icon, GTK_ICON_SIZE_BUTTON); }

/* As GtkKit's Label makes one: aligned to the start. */
static GtkWidget *label_new(const char *text) {
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    return label;
}

static GtkWidget *dim_label(const char *text) {
    GtkWidget *label = label_new(text);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

static void activate(GtkApplication *app, gpointer data) {
    (void)data;
    GtkWidget *window = gtk_application_window_new(app);
    gtk_window_set_title(GTK_WINDOW(window), "Baseline");
    gtk_window_set_default_size(GTK_WINDOW(window), 460, 500);
    GtkWidget *header = gtk_header_bar_new();
    gtk_header_bar_set_title(GTK_HEADER_BAR(header), "Baseline");
    gtk_header_bar_set_subtitle(GTK_HEADER_BAR(header), "Sandbox provider (offline demo)");
    gtk_header_bar_set_show_close_button(GTK_HEADER_BAR(header), TRUE);
    gtk_window_set_titlebar(GTK_WINDOW(window), header);
    gtk_header_bar_pack_end(GTK_HEADER_BAR(header), icon_button("security-high-symbolic"));
    gtk_header_bar_pack_start(GTK_HEADER_BAR(header), icon_button("list-add-symbolic"));
    /* Add another account: disabled until the provider is ready. */
    GtkWidget *add_account = icon_button("contact-new-symbolic");
    gtk_widget_set_sensitive(add_account, FALSE);
    gtk_header_bar_pack_start(GTK_HEADER_BAR(header), add_account);

    GtkWidget *provider = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(provider), "sandbox", "Sandbox provider (offline demo)");
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(provider), "sandbox");
    GtkWidget *provider_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    gtk_box_pack_start(GTK_BOX(provider_row), dim_label("Provider"), FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(provider_row), provider, TRUE, TRUE, 0);

    /* Where to sign in: made, left out of the first frame (shown once the provider is ready). */
    GtkWidget *agent_label = dim_label("Sign in");
    GtkWidget *in_window = gtk_radio_button_new_with_label(NULL, "In this window");
    GtkWidget *in_browser = gtk_radio_button_new_with_label_from_widget(GTK_RADIO_BUTTON(in_window), "In your browser");
    GtkWidget *only_agent = dim_label("");
    GtkWidget *agent_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    GtkWidget *agent_widgets[] = {agent_label, in_window, in_browser, only_agent};
    for (int i = 0; i < 4; i++) {
        gtk_box_pack_start(GTK_BOX(agent_row), agent_widgets[i], FALSE, FALSE, 0);
        gtk_widget_set_no_show_all(agent_widgets[i], TRUE);
    }

    GtkWidget *avatar = gtk_image_new_from_icon_name("avatar-default-symbolic", GTK_ICON_SIZE_BUTTON);
    gtk_image_set_pixel_size(GTK_IMAGE(avatar), 64);
    GtkWidget *name = label_new("Checking your sign-in");
    gtk_style_context_add_class(gtk_widget_get_style_context(name), "title-2");
    GtkWidget *names = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_set_valign(names, GTK_ALIGN_CENTER);
    gtk_box_pack_start(GTK_BOX(names), name, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(names), label_new("Sign in with Sandbox provider (offline demo)."), FALSE, FALSE, 0);
    GtkWidget *profile = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 16);
    gtk_box_pack_start(GTK_BOX(profile), avatar, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(profile), names, TRUE, TRUE, 0);
    GtkWidget *note = dim_label("");
    GtkWidget *scopes = dim_label("");
    gtk_widget_set_no_show_all(note, TRUE);
    gtk_widget_set_no_show_all(scopes, TRUE);
    GtkWidget *accounts_slot = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    gtk_widget_set_no_show_all(accounts_slot, TRUE);

    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    const char *labels[] = {"Set up…", "Sign in", "Sign in on another device", "Cancel", "Get my profile", "Open profile", "Sign out"};
    const gboolean shown[] = {FALSE, TRUE, FALSE, FALSE, TRUE, FALSE, FALSE};
    for (int i = 0; i < 7; i++) {
        GtkWidget *button = gtk_button_new_with_label(labels[i]);
        gtk_box_pack_start(GTK_BOX(buttons), button, FALSE, FALSE, 0);
        if (i == 0 || i == 1) gtk_style_context_add_class(gtk_widget_get_style_context(button), "suggested-action");
        /* The first frame is the app's first render: the saved sign-in still being read, Sign in and Get
         * my profile disabled. */
        if (i == 1 || i == 4) gtk_widget_set_sensitive(button, FALSE);
        if (!shown[i]) gtk_widget_set_no_show_all(button, TRUE);
    }

    GtkWidget *status = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    GtkWidget *spinner = gtk_spinner_new();
    gtk_spinner_start(GTK_SPINNER(spinner));
    gtk_box_pack_start(GTK_BOX(status), spinner, FALSE, FALSE, 0);
    GtkWidget *label = label_new("Starting… (looking for your saved sign-in)");
    gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_selectable(GTK_LABEL(label), TRUE);
    gtk_box_pack_start(GTK_BOX(status), label, TRUE, TRUE, 0);

    GtkWidget *content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 20);
    g_object_set(content, "margin", 24, NULL);
    GtkWidget *choices = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
    gtk_box_pack_start(GTK_BOX(choices), provider_row, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(choices), agent_row, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(content), choices, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(content), accounts_slot, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(content), profile, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(content), note, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(content), scopes, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(content), buttons, FALSE, FALSE, 0);
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
