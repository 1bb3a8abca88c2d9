import ArgumentParser
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The program's entry point. A synchronous command (watch, record, devices, ...) runs right here
/// on the main thread; only the asynchronous ones (run) start Swift concurrency, whose thread
/// pool on Linux brings libdispatch's pool monitor: a timer that wakes a thread once a second
/// for the rest of the process's life, a third of the wake-ups `watch` may cost at 40 Hz
/// (bench/iio-wakeups.sh). Anything that does not parse (help, version, errors) goes the
/// usual asynchronous way, which prints it.
@main
enum FallGuardMain {
    static func main() {
        if var command = try? FallGuardCommand.parseAsRoot(), !(command is AsyncParsableCommand) {
            do { try command.run() } catch { FallGuardCommand.exit(withError: error) }
            FallGuardCommand.exit()
        }
        Task {
            await FallGuardCommand.main()
            exit(0)
        }
        dispatchMain()
    }
}
