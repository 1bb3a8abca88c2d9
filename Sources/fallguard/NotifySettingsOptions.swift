import ArgumentParser
import FallGuardDaemon
import AsyncHTTPClient
import FallGuardConfig
import FallGuardCore
import FallGuardNotify
import Foundation

/// Where the notification settings come from: the configuration file (`--config`, its
/// `device`, `wearer`, `contacts`, `channels`, `policy` and `templates` sections), or a JSON
/// file with the same keys (`--settings-json`, for tests and benches).
struct NotifySettingsOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config = "/etc/fallguard/config.yaml"

    @Option(name: .customLong("settings-json"), help: ArgumentHelp(
        "Notification settings as JSON (device, wearer, contacts, channels, policy, templates) instead of --config.", valueName: "path"))
    var settingsJSON: String?

    /// The settings, or exit 78 after printing every problem with its file, line and key.
    func load() throws -> NotificationSettings {
        guard let settingsJSON else {
            let (c, diagnostics) = DaemonConfiguration.load(path: config)
            if ConfigReport.printAndShouldStop(diagnostics.redacted(by: c.redactor)) { throw ExitStatus.configError }
            guard let settings = c.notify.settings, !c.notify.nobodyWillBeTold else {
                printError("\(config): no channel configured: there is nobody to tell. Uncomment one channel (and its policy) in the file, as its comments show; every key: fallguard.example.yaml (/usr/share/doc/fallguard/ in the package, deploy/ in the source)")
                throw ExitStatus.configError
            }
            return settings
        }
        let settings: NotificationSettings
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: settingsJSON))
            settings = try JSONDecoder().decode(Configured<NotificationSettings>.self, from: data).value
        } catch let error as DecodingError {
            printError("\(settingsJSON): \(Self.describe(error))")
            throw ExitStatus.configError
        } catch {
            printError("\(settingsJSON): \(error.localizedDescription)")
            throw ExitStatus.configError
        }
        let problems = settings.problems(at: [])
        for p in problems { printError("\(settingsJSON): \(p.severity == .warning ? "warning: " : "")\(p)") }
        if problems.contains(where: { $0.severity == .error }) { throw ExitStatus.configError }
        return settings
    }

    static func describe(_ error: DecodingError) -> String {
        func key(_ path: [any CodingKey]) -> String { path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") }
        switch error {
        case let .keyNotFound(k, c): return "\(key(c.codingPath + [k])): missing"
        case let .typeMismatch(_, c), let .valueNotFound(_, c), let .dataCorrupted(c):
            return "\(key(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// Runs `body` on the concurrency pool and waits for it: the commands are synchronous.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, any Error>?
    Task {
        do { result = .success(try await body()) } catch { result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result!.get()
}

/// An HTTP client for the channels, shut down after `body`.
func withChannelContext<T: Sendable>(_ body: @escaping @Sendable (ChannelContext) async throws -> T) async throws -> T {
    let client = HTTPClient(eventLoopGroupProvider: .singleton,
                            configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5))))
    let context = ChannelContext(httpClient: client, write: { print($0); flushStandardOutput() })
    do {
        let value = try await body(context)
        try await client.shutdown()
        return value
    } catch {
        try? await client.shutdown()
        throw error
    }
}
