// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Chime",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chime", targets: ["chime"]),
        // The benchmark harness, which `chime bench` runs: kept out of the product binary.
        .executable(name: "chime-bench", targets: ["chime-bench"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "ChimeCore", targets: ["ChimeCore"]),
        // For the libFuzzer harnesses in Fuzz/, a separate package built with --sanitize fuzzer.
        .library(name: "ChimeWire", targets: ["ChimeWire"]),
        .library(name: "ChimeStore", targets: ["ChimeStore"]),
        .library(name: "ChimeJournal", targets: ["ChimeJournal"]),
        // The client library: applications depend on it to schedule, list, cancel and subscribe
        // without linking the coordinator.
        .library(name: "ChimeClient", targets: ["ChimeClient"]),
        .library(name: "ChimeCoordinator", targets: ["ChimeCoordinator"]),
        .library(name: "ChimeWorker", targets: ["ChimeWorker"]),
        // The providers' answers are fuzzed (Fuzz/, target `provider`).
        .library(name: "ChimeDelivery", targets: ["ChimeDelivery"]),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev: header and library are on the default
        // search paths, so no pkgConfig here (naming it makes SwiftPM warn about -isystem).
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        // The one helper-thread type, below ZeroMQ (its ZAP handler) and ChimeRuntime (its
        // signal relay) alike.
        .target(name: "HelperThreads"),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ", "HelperThreads"]),
        // GNU libmicrohttpd from Debian's libmicrohttpd-dev (runtime: libmicrohttpd12), for
        // /metrics, /healthz and /readyz.
        .systemLibrary(
            name: "CMicroHTTPD",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        // libcurl from Debian's libcurl4-openssl-dev (runtime: libcurl4), for the Kubernetes
        // API (the map register in a ConfigMap): FoundationNetworking on Linux cannot trust
        // a cluster's own CA.
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "HTTPClient", dependencies: ["CCurl"]),
        // One Linux call glibc's headers cannot make: a TCP connection's acknowledged bytes
        // (<linux/tcp.h>'s tcp_info), how the coordinator measures replies a peer has not read.
        .target(name: "CSocketStatistics"),
        // OpenSSL's libcrypto from Debian's libssl-dev (runtime: libssl3), loaded with dlopen at
        // the first digest or signature: HMAC-SHA256 for webhooks, ES256 for APNs, RS256 for FCM.
        .systemLibrary(
            name: "COpenSSL",
            providers: [.apt(["libssl-dev"])]
        ),
        // Delivery beyond the ZeroMQ fire event: webhooks (Standard Webhooks), APNs and FCM,
        // each a DeliveryChannel the workers call per destination.
        .target(name: "ChimeDelivery", dependencies: ["ChimeCore", "ChimeWire", "HTTPClient", "COpenSSL"]),
        .target(name: "ChimeCore"),
        // Stores opaque records through a codec; knows nothing of reminders.
        .target(name: "ChimeStore", dependencies: ["ChimeCore"]),
        // The coordinator's journal vocabulary (JournalEntry, its codec, DurableSettings); a
        // slot move's entries name the move as the wire does (ChimeWire's SlotMove).
        .target(name: "ChimeJournal", dependencies: ["ChimeCore", "ChimeStore", "ChimeWire"]),
        .target(name: "ChimeWire", dependencies: ["ChimeCore"]),
        .target(name: "ChimeRuntime", dependencies: ["HelperThreads"]),
        // Keys, certificates, roles and the ZAP handler: shared by every role.
        .target(name: "ChimeSecurity", dependencies: ["ZeroMQ", "ChimeCore", "ChimeRuntime"]),
        // The roles, each a pure <Role>State plus a <Role>Service shell.
        .target(
            name: "ChimeClient",
            dependencies: ["ZeroMQ", "ChimeCore", "ChimeWire", "ChimeRuntime", "ChimeSecurity", "HelperThreads"]
        ),
        .target(
            name: "ChimeWorker",
            dependencies: [
                "ZeroMQ", "ChimeCore", "ChimeWire", "ChimeRuntime", "ChimeSecurity", "HTTPServer", "HelperThreads", "ChimeDelivery",
            ]
        ),
        .target(
            name: "ChimeCoordinator",
            dependencies: [
                "ZeroMQ", "ChimeCore", "ChimeStore", "ChimeJournal", "ChimeWire", "ChimeRuntime", "ChimeSecurity", "HTTPServer",
                "HTTPClient", "HelperThreads", "CSocketStatistics",
            ]
        ),
        .target(
            name: "ChimeTestSupport",
            dependencies: [
                "ChimeCore", "ChimeRuntime", "ChimeClient", "ChimeCoordinator", "ChimeWorker", "ChimeWire", "ZeroMQ", "HelperThreads",
                "HTTPServer",
            ]
        ),
        .target(
            name: "ChimeBench",
            dependencies: ["ChimeClient", "ChimeCore", "ChimeWire", "ChimeRuntime", "ZeroMQ", "HelperThreads"]
        ),
        // The operators' web dashboard (`chime dashboard`): the client library and HTTP only,
        // never the coordinator.
        .target(
            name: "ChimeDashboard",
            dependencies: ["ChimeClient", "ChimeCore", "ChimeWire", "ChimeRuntime", "ChimeSecurity", "HTTPServer", "ZeroMQ"]
        ),
        // The command-line parsing, help and failure reporting both executables share.
        .target(name: "ChimeCommandLine", dependencies: ["ChimeCore", "ChimeWire", "ChimeRuntime", "ChimeSecurity"]),
        .executableTarget(
            name: "chime-bench",
            dependencies: ["ChimeBench", "ChimeCommandLine", "ChimeRuntime"],
            path: "Sources/chime-bench"
        ),
        .executableTarget(
            name: "chime",
            dependencies: [
                "ChimeCommandLine", "ChimeClient", "ChimeCoordinator", "ChimeWorker", "ChimeDashboard", "ChimeSecurity", "ChimeCore", "ChimeStore",
                "ChimeJournal", "ChimeWire",
                "ChimeRuntime", "ZeroMQ", "HTTPServer", "HelperThreads",
            ]
        ),
        .testTarget(name: "HelperThreadsTests", dependencies: ["HelperThreads"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "HelperThreads", "ChimeTestSupport"]),
        .testTarget(name: "ChimeCoreTests", dependencies: ["ChimeCore", "ChimeRuntime", "ChimeTestSupport"]),
        .testTarget(name: "ChimeWireTests", dependencies: ["ChimeWire", "ChimeCore", "ChimeTestSupport"]),
        .testTarget(name: "ChimeRuntimeTests", dependencies: ["ChimeRuntime", "ChimeTestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "ChimeDashboardTests", dependencies: ["ChimeDashboard", "HTTPServer", "ChimeWire", "ChimeCore"]),
        .testTarget(name: "ChimeBenchTests", dependencies: ["ChimeBench"]),
        .testTarget(name: "ChimeCommandLineTests", dependencies: ["ChimeCommandLine"]),
        .testTarget(
            name: "ChimeStoreTests",
            dependencies: ["ChimeStore", "ChimeCore", "ChimeTestSupport"]
        ),
        .testTarget(
            name: "ChimeJournalTests",
            dependencies: ["ChimeJournal", "ChimeStore", "ChimeCore", "ChimeWire", "ChimeTestSupport"]
        ),
        .testTarget(
            name: "ChimeCoordinatorTests",
            dependencies: [
                "ChimeCoordinator", "ChimeClient", "ChimeWorker", "ChimeSecurity", "ChimeCore", "ChimeWire", "ChimeStore", "ChimeJournal",
                "ChimeTestSupport", "ZeroMQ", "HTTPServer",
            ]
        ),
        .testTarget(name: "ChimeClientTests", dependencies: ["ChimeClient", "ChimeCore", "ChimeWire", "ChimeRuntime", "ZeroMQ"]),
        .testTarget(
            name: "ChimeWorkerTests",
            dependencies: ["ChimeWorker", "ChimeCore", "ChimeWire", "ChimeRuntime", "ChimeTestSupport", "HelperThreads", "ZeroMQ"]
        ),
        .testTarget(
            name: "ChimeDeliveryTests", dependencies: ["ChimeDelivery", "ChimeCore", "ChimeWire", "HTTPClient", "HTTPServer", "ChimeTestSupport"]
        ),
        .testTarget(name: "ChimeSecurityTests", dependencies: ["ChimeSecurity", "ChimeRuntime", "ChimeTestSupport", "ZeroMQ"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "ChimeTestSupport", "ChimeClient", "ChimeCoordinator", "ChimeWire", "ChimeCore", "ChimeStore", "ChimeJournal", "ChimeRuntime",
                "ZeroMQ",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
