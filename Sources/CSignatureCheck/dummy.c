// A C target needs one source file; the interface is the header alone.
