import CGtk
import Foundation
import GtkKit
import Testing

/// GtkKit's promises about ownership, signals and the hop to GTK's thread,
/// checked against real GObjects and a real display (make test runs the
/// suite under Xvfb).
@MainActor
@Suite(.serialized) struct ObjectLifetimeTests {
    init() throws {
        try #require(gtk_init_check(nil, nil) != 0, "GTK needs a display: run under scripts/with-xvfb.sh, as make test does")
    }

    @Test func aWrapperFreesItsObjectWhenReleased() {
        let finalized = Flag()
        do {
            let label = Label("hello")
            finalized.watch(label.pointer)
            #expect(!finalized.isSet, "alive while the wrapper is")
        }
        #expect(finalized.isSet, "the GObject is finalized once its only wrapper is gone")
    }

    @Test func disconnectingReleasesTheHandlerAndWhatItCaptured() {
        let button = Button(label: "Press")
        weak var weakCapture: Captured?
        do {
            let captured = Captured()
            weakCapture = captured
            button.onClicked { captured.count += 1 }
        }
        gtk_button_clicked(UnsafeMutableRawPointer(button.pointer).assumingMemoryBound(to: GtkButton.self))
        #expect(weakCapture?.count == 1, "the handler ran, holding what it captured")
        button.disconnectAll()
        #expect(weakCapture == nil, "GLib's closure notify released the box, and the box its closure")
        gtk_button_clicked(UnsafeMutableRawPointer(button.pointer).assumingMemoryBound(to: GtkButton.self))
    }

    @Test func destroyingAWindowThenReleasingItsWrappersWarnsNothing() {
        let warnings = GLibWarnings()
        defer { warnings.stop() }
        let finalized = Flag()
        do {
            let window = Window(title: "Doomed")
            let button = Button(label: "Inside")
            button.onClicked {}
            window.onCloseRequest { false }
            window.setChild(button)
            finalized.watch(button.pointer)
            // GTK drops every handler on destroy; the wrappers, released after, must not disconnect them again.
            window.destroy()
        }
        #expect(finalized.isSet, "the button went with its window and its wrapper")
        #expect(warnings.messages == [], "GLib warned: \(warnings.messages)")
    }

    // In the app GTK's thread is the process's main thread. Under swift test the
    // main actor runs on whichever thread serves the main queue (libdispatch
    // retires the main thread on Linux), so "GTK's thread" is here the thread
    // that turns the loop: the hop must run there, and as the main actor
    // (MainLoop checks that with assumeIsolated, which traps otherwise).

    @Test func aHopFromAnotherThreadRunsOnGTKsThread() {
        let hop = ThreadRecord()
        let done = Flag()
        let worker = ThreadRecord()
        Task.detached {
            worker.record()
            MainLoop.perform {
                hop.record()
                done.set()
            }
        }
        let loop = iterateMainContext(until: done)
        #expect(worker.thread != loop, "the work was queued from another thread")
        #expect(hop.thread == loop, "and ran on the thread turning GTK's loop")
    }

    @Test func aHopIsQueuedEvenFromGTKsOwnThread() {
        let done = Flag()
        MainLoop.perform { done.set() }
        #expect(!done.isSet, "not run inline, even where no one owns the main context")
        iterateMainContext(until: done)
        #expect(done.isSet)
    }

    @Test func runHandsBackWhatTheWorkProducedOnGTKsThread() async {
        let done = Flag()
        let answer = Task.detached { () -> pthread_t in
            let thread = await MainLoop.run { pthread_self() }
            done.set()
            return thread
        }
        let loop = iterateMainContext(until: done)
        #expect(await answer.value == loop)
    }

    /// Turns GTK's loop on this thread until `flag` is set; returns the thread.
    @discardableResult
    private func iterateMainContext(until flag: Flag) -> pthread_t {
        while !flag.isSet { g_main_context_iteration(nil, 1) }
        return pthread_self()
    }
}

/// The thread something ran on.
final class ThreadRecord: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var recorded: pthread_t?
    var thread: pthread_t? { lock.withLock { recorded } }
    func record() { lock.withLock { recorded = pthread_self() } }
}

/// A flag set from C callbacks or other threads; wakes GTK's loop when set.
final class Flag: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() {
        lock.withLock { value = true }
        g_main_context_wakeup(nil)
    }

    /// Sets the flag when `object` is finalized (a weak reference's notify).
    func watch(_ object: UnsafeMutablePointer<GObject>) {
        g_object_weak_ref(
            object, { data, _ in Unmanaged<Flag>.fromOpaque(data!).takeUnretainedValue().set() },
            Unmanaged.passUnretained(self).toOpaque())
    }
}

final class Captured {
    var count = 0
}

/// Collects the GLib-GObject and Gtk warnings and criticals logged while it listens.
final class GLibWarnings: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var collected: [String] = []
    private var handlers: [(String, guint)] = []

    var messages: [String] { lock.withLock { collected } }

    init() {
        let levels = GLogLevelFlags(rawValue: G_LOG_LEVEL_WARNING.rawValue | G_LOG_LEVEL_CRITICAL.rawValue)
        for domain in ["GLib-GObject", "Gtk", "GLib"] {
            let id = g_log_set_handler(
                domain, levels,
                { domain, _, message, data in
                    let warnings = Unmanaged<GLibWarnings>.fromOpaque(data!).takeUnretainedValue()
                    let text = "\(domain.map { String(cString: $0) } ?? ""): \(message.map { String(cString: $0) } ?? "")"
                    warnings.lock.withLock { warnings.collected.append(text) }
                }, Unmanaged.passUnretained(self).toOpaque())
            handlers.append((domain, id))
        }
    }

    func stop() {
        for (domain, id) in handlers { g_log_remove_handler(domain, id) }
    }
}
