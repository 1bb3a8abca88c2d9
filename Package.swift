// swift-tools-version:6.0
// FallGuard: a fall-detection sensor bridge for Linux (Raspberry Pi).
import PackageDescription

// How the release program is linked, for memory (issue 6: the daemon within 30 MB resident).
// Each was measured with bench/daemon-footprint.sh; the README's "Memory" section has the figures.
let releaseLinkFlags = [
    // lld, with relative relocations packed (DT_RELR, glibc 2.36: Debian 12 / Raspberry Pi OS
    // bookworm): the loader reads a 28 KB table instead of 3.4 MB of relocations at start.
    "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    // No exported symbols. The static Swift runtime's link options ask for -export-dynamic,
    // which put 47,000 symbols in the dynamic table for the loader to search whenever it binds a
    // shared library's symbol. Nothing links against this program.
    "-Xlinker", "--no-export-dynamic",
    // The functions the bridge runs, placed together (tools/link-order/generate writes the list).
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/tools/link-order/fallguard.order",
    "-Xlinker", "--no-warn-symbol-ordering",
]

let package = Package(
    name: "FallGuard",
    // macOS 15: Synchronization's Mutex and Atomic. FallGuard itself runs on Linux.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "fallguard", targets: ["fallguard"]),
        .library(name: "FallGuardCore", targets: ["FallGuardCore"]),
        // The parsers fuzz/ feeds (a package of its own, so the fuzzer build stays out of CI's).
        .library(name: "FallGuardHardware", targets: ["FallGuardHardware"]),
        .library(name: "FallGuardMQTT", targets: ["FallGuardMQTT"]),
        .library(name: "FallGuardConfig", targets: ["FallGuardConfig"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
        // TLS for the page (web.tls-certificate); already in async-http-client's graph.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // NIOHTTPTypes: the HTTP parts the page's connection guard sees (in Hummingbird's graph).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // 4.x: what async-http-client's graph (swift-nio-extras → swift-certificates) resolves to.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        // C libraries from Debian's -dev packages.
        .systemLibrary(
            name: "CLibIIO",
            pkgConfig: "libiio",
            providers: [.apt(["libiio-dev"])]
        ),
        // libgpiod's C API declared in shim.h, the library opened with dlopen at run time:
        // libgpiod.so.3 (2.x) or libgpiod.so.2 (1.6), whichever the system has. No -dev package.
        .systemLibrary(name: "CLibGPIOD"),
        .systemLibrary(
            name: "CLibMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // libcurl's headers only (libcurl4-openssl-dev): shim.h opens the library with dlopen when
        // an e-mail channel is used, so a bridge without one never maps it.
        .systemLibrary(name: "CLibCurl"),
        // zlib: field-test recordings are gzip files (one member per flush, readable by gzip -dc).
        // sys/timex.h: whether the wall clock is synchronised (glibc, no library of its own).
        .systemLibrary(name: "CTimex", path: "Sources/CTimex"),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // Pure logic: samples, ring buffer, resampler, detectors, recording format. No I/O.
        .target(
            name: "FallGuardCore",
            dependencies: [.product(name: "Atomics", package: "swift-atomics")]
        ),
        // Field testing: recordings on disk, labelled datasets, scoring detector settings.
        .target(
            name: "FallGuardFieldTest",
            dependencies: ["FallGuardCore", "CZlib"],
            resources: [.embedInCode("Resources/demo-fall.csv")]
        ),
        // The page on the bridge: its HTML and script, logins and form tokens, the live |a| tap.
        // Pure: the daemon serves it (WebEndpoint).
        .target(
            name: "FallGuardWeb",
            dependencies: ["FallGuardCore", "FallGuardFieldTest", .product(name: "Atomics", package: "swift-atomics")]
        ),
        // The staff station's pure part: a site's bridges folded from their MQTT messages, the
        // staff's logins, the page. The daemon module serves it (StationServer).
        .target(
            name: "FallGuardStation",
            dependencies: ["FallGuardCore", "FallGuardWeb", "FallGuardFieldTest"]
        ),
        // The edge: IIO accelerometers, GPIO buzzer / button / LED, replay sensor.
        .target(
            name: "FallGuardHardware",
            dependencies: [
                "FallGuardCore", "FallGuardFieldTest", "CLibIIO", "CLibGPIOD", "CTimex",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Notifiers and the durable outbox.
        .target(
            name: "FallGuardNotify",
            dependencies: [
                "FallGuardCore", "FallGuardFieldTest", "FallGuardConfigKeys",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // How a configuration key is declared (ConfigKey: name, property, range, secret), read,
        // written and checked, with did-you-mean words and FILE:LINE-ready problems. No Yams and
        // no file: the channels' modules declare their own keys with it; FallGuardConfig reads
        // the file.
        .target(name: "FallGuardConfigKeys"),
        // MQTT channel through libmosquitto: alerts, state, Home Assistant discovery, acknowledgements.
        .target(
            name: "FallGuardMQTT",
            dependencies: [
                "FallGuardCore", "FallGuardNotify", "FallGuardConfigKeys", "CLibMosquitto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // E-mail channel over SMTP through libcurl.
        .target(
            name: "FallGuardEmail",
            dependencies: [
                "FallGuardCore", "FallGuardNotify", "FallGuardConfigKeys", "CLibCurl",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The configuration file: one YAML file turned into the plain values the modules below
        // take: the sections and their keys (a channel declares its own in its module), the only
        // module that knows Yams. Every problem as file:line.
        .target(
            name: "FallGuardConfig",
            dependencies: [
                "FallGuardCore", "FallGuardHardware", "FallGuardNotify", "FallGuardMQTT", "FallGuardEmail",
                "FallGuardConfigKeys", .product(name: "Yams", package: "Yams"),
            ]
        ),
        // sd_notify (READY, WATCHDOG, STATUS, STOPPING) without libsystemd.
        .target(
            name: "FallGuardSystemd",
            dependencies: [.product(name: "Atomics", package: "swift-atomics")]
        ),
        // The daemon as services (sensor, alarm, delivery, MQTT bridge, heartbeat, status,
        // metrics, reload) and the one assembly `run`, `alarm` and `watch` share.
        .target(
            name: "FallGuardDaemon",
            dependencies: [
                "FallGuardCore", "FallGuardFieldTest", "FallGuardHardware", "FallGuardNotify",
                "FallGuardConfig", "FallGuardSystemd", "FallGuardMQTT", "FallGuardWeb", "FallGuardStation",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),   // HTTPParserError (HTTPServer)
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // The station's past incidents (StationHistory, a SQLiteStore as the outbox).
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The command-line tool: ArgumentParser commands over the modules, nothing else.
        .executableTarget(
            name: "fallguard",
            dependencies: [
                "FallGuardCore", "FallGuardFieldTest", "FallGuardHardware", "FallGuardNotify",
                "FallGuardConfig", "FallGuardConfigKeys", "FallGuardDaemon", "FallGuardMQTT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            linkerSettings: [.unsafeFlags(releaseLinkFlags, .when(configuration: .release))]
        ),

        // Throughput benchmark of the sample path (bench/detector-throughput.sh runs it).
        .executableTarget(
            name: "fallguard-bench",
            dependencies: ["FallGuardCore", "FallGuardFieldTest"],
            path: "bench/FallGuardBench"
        ),

        // Runs an MQTT channel in its own process, so tests can kill it (last will).
        .executableTarget(
            name: "fallguard-mqtt-probe",
            dependencies: ["FallGuardMQTT", "FallGuardNotify", "FallGuardConfig"],
            path: "Tests/MQTTProbe"
        ),

        // What every test target shares: temporary folders, the built binaries, free loopback
        // ports, the mosquitto, SMTP, IIO and GPIO emulator launchers, an in-memory GPIO chip,
        // waiting for a condition.
        .target(
            name: "FallGuardTestSupport",
            dependencies: ["FallGuardCore", "FallGuardHardware"],
            path: "Tests/FallGuardTestSupport",
            exclude: ["smtp-sink.py", "mqtt311-broker.py"]
        ),

        .testTarget(name: "FallGuardCoreTests", dependencies: ["FallGuardCore", "FallGuardTestSupport"]),
        .testTarget(name: "FallGuardFieldTestTests", dependencies: ["FallGuardCore", "FallGuardFieldTest", "FallGuardTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "FallGuardHardwareTests", dependencies: ["FallGuardHardware", "FallGuardFieldTest", "FallGuardConfig", "CLibIIO", "CLibGPIOD", "FallGuardTestSupport"]),
        .testTarget(name: "FallGuardCLITests", dependencies: ["FallGuardCore", "FallGuardTestSupport"]),
        .testTarget(
            name: "FallGuardConfigTests",
            dependencies: [
                "FallGuardConfig", "FallGuardCore", "FallGuardHardware", "FallGuardNotify", "FallGuardMQTT", "FallGuardEmail",
                "FallGuardTestSupport", .product(name: "Yams", package: "Yams"),
            ]
        ),
        .testTarget(name: "FallGuardSystemdTests", dependencies: ["FallGuardSystemd", "FallGuardTestSupport"]),
        // Runs the deployment checks in bench/ (systemd unit, udev rules, overlay, install, .deb).
        .testTarget(name: "FallGuardDeployTests", dependencies: ["FallGuardTestSupport"]),
        .testTarget(name: "FallGuardMQTTTests", dependencies: ["FallGuardMQTT", "FallGuardNotify", "FallGuardCore", "FallGuardTestSupport"]),
        .testTarget(name: "FallGuardEmailTests", dependencies: ["FallGuardEmail", "FallGuardNotify", "FallGuardCore", "FallGuardTestSupport"]),
        .testTarget(
            name: "FallGuardNotifyTests",
            dependencies: [
                // FallGuardConfig: the crash tests hand `fallguard outbox-run` its settings as JSON.
                "FallGuardNotify", "FallGuardCore", "FallGuardConfig", "FallGuardTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The daemon: in process (assembled services, replay sensor, in-memory GPIO) and as
        // `fallguard run` on emulated hardware with real brokers.
        .testTarget(
            name: "FallGuardDaemonTests",
            dependencies: [
                "FallGuardDaemon", "FallGuardConfig", "FallGuardHardware", "FallGuardNotify", "FallGuardCore",
                "FallGuardWeb", "FallGuardFieldTest", "FallGuardTestSupport", "FallGuardStation", "FallGuardMQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ]
)
