/// FallGuard's version: the one source of truth. `fallguard --version`, status files and
/// incident records print it, and deploy/build-deb.sh reads it from this line for the package
/// version (keep it one string literal on one line).
public let fallguardVersion = "0.4.0"
