/* Baseline: a window with a WebKitWebView (ephemeral context, as Latchkey's
 * sign-in uses) that loads the URL given on the command line.
 *   webkit-page URL          cold: the bench times process start to the
 *                            "finished" line (wall clock, milliseconds)
 *   webkit-page --warm URL   warm: the window runs first; after a second the
 *                            view is created and loaded; prints the time from
 *                            creating the view to WEBKIT_LOAD_FINISHED */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <gtk/gtk.h>
#include <webkit2/webkit2.h>

static const char *url;
static gint64 view_created;
static GtkWidget *window;

static void print_wall_clock(const char *what) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    printf("%s %ld.%03ld\n", what, (long)now.tv_sec, now.tv_nsec / 1000000);
    fflush(stdout);
}

static void load_changed(WebKitWebView *view, WebKitLoadEvent event, gpointer data) {
    (void)view; (void)data;
    if (event != WEBKIT_LOAD_FINISHED) return;
    if (view_created) {
        printf("warm_ms %.1f\n", (g_get_monotonic_time() - view_created) / 1000.0);
        fflush(stdout);
    }
    print_wall_clock("finished");
}

static void add_view(void) {
    view_created = g_get_monotonic_time();
    WebKitWebContext *context = webkit_web_context_new_ephemeral();
    GtkWidget *view = webkit_web_view_new_with_context(context);
    g_signal_connect(view, "load-changed", G_CALLBACK(load_changed), NULL);
    gtk_container_add(GTK_CONTAINER(window), view);
    gtk_widget_show_all(window);
    webkit_web_view_load_uri(WEBKIT_WEB_VIEW(view), url);
}

static gboolean add_view_later(gpointer data) {
    (void)data;
    add_view();
    return G_SOURCE_REMOVE;
}

int main(int argc, char **argv) {
    gboolean warm = argc > 2 && strcmp(argv[1], "--warm") == 0;
    url = argv[argc - 1];
    gtk_init(&argc, &argv);
    window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    gtk_window_set_default_size(GTK_WINDOW(window), 560, 720);
    g_signal_connect(window, "destroy", G_CALLBACK(gtk_main_quit), NULL);
    if (warm) {
        gtk_widget_show_all(window);
        g_timeout_add(1000, add_view_later, NULL);
    } else {
        add_view();
        view_created = 0;
    }
    gtk_main();
    return 0;
}
