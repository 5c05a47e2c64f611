// Latchkey: sign in to an OAuth provider from the Linux desktop.
//
// LatchkeyCommand reads the command line and picks the provider (the offline
// sandbox when none is named); LatchkeyApp builds the window on GTK's thread;
// AppController turns clicks into OAuthCore calls off that thread and feeds
// the answers back as AppEvents; MainWindow renders the resulting AppState.
import LatchkeyServices

// `latchkey` alone, what the desktop's launcher runs, is the window with every default: started
// without the command-line parser, which would build all five commands' options (their help text,
// the runtime's type lookups for each) only to find none given (docs/performance.md). Anything else,
// and a $LATCHKEY_LOG_LEVEL the parser would refuse, goes through the parser.
if CommandLine.arguments.count == 1, LoggingOptions.environmentIsValid {
    do {
        try WindowLaunch(logLevel: LoggingOptions.environmentLevel ?? WindowLaunch.defaultLogLevel).run()
    } catch {
        LatchkeyCommand.exit(withError: error)
    }
} else {
    LatchkeyCommand.main()
}
