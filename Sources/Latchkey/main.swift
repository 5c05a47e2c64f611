// Latchkey: sign in to an OAuth provider from the Linux desktop.
//
// LatchkeyCommand reads the command line and picks the provider (the offline
// sandbox when none is named); LatchkeyApp builds the window on GTK's thread;
// AppController turns clicks into OAuthCore calls off that thread and feeds
// the answers back as AppEvents; MainWindow renders the resulting AppState.
LatchkeyCommand.main()
