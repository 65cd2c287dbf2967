// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Chime",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chime", targets: ["chime"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "ChimeCore", targets: ["ChimeCore"]),
        // For the libFuzzer harnesses in Fuzz/, a separate package built with --sanitize fuzzer.
        .library(name: "ChimeWire", targets: ["ChimeWire"]),
        .library(name: "ChimeStore", targets: ["ChimeStore"]),
        .library(name: "ChimeCluster", targets: ["ChimeCluster"]),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev: header and library are on the default
        // search paths, so no pkgConfig here (naming it makes SwiftPM warn about -isystem).
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        // GNU libmicrohttpd from Debian's libmicrohttpd-dev (runtime: libmicrohttpd12), for
        // /metrics, /healthz and /readyz.
        .systemLibrary(
            name: "CMicroHTTPD",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        .target(name: "ChimeCore"),
        .target(name: "ChimeStore", dependencies: ["ChimeCore"]),
        .target(name: "ChimeWire", dependencies: ["ChimeCore"]),
        .target(name: "ChimeRuntime"),
        .target(
            name: "ChimeCluster",
            dependencies: ["ZeroMQ", "ChimeCore", "ChimeStore", "ChimeWire", "ChimeRuntime", "HTTPServer"]
        ),
        .target(
            name: "ChimeTestSupport",
            dependencies: ["ChimeCore", "ChimeRuntime", "ChimeCluster", "ChimeWire", "ZeroMQ"]
        ),
        .target(
            name: "ChimeBench",
            dependencies: ["ChimeCluster", "ChimeCore", "ChimeWire", "ChimeRuntime", "ZeroMQ"]
        ),
        .executableTarget(
            name: "StoreBenchmark",
            dependencies: ["ChimeStore", "ChimeCore", "ChimeWire", "ChimeCluster"],
            path: "Benchmarks/StoreBenchmark"
        ),
        .executableTarget(
            name: "chime",
            dependencies: ["ChimeBench", "ChimeCluster", "ChimeCore", "ChimeStore", "ChimeWire", "ChimeRuntime", "ZeroMQ", "HTTPServer"]
        ),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "ChimeTestSupport"]),
        .testTarget(name: "ChimeCoreTests", dependencies: ["ChimeCore", "ChimeTestSupport"]),
        .testTarget(name: "ChimeWireTests", dependencies: ["ChimeWire", "ChimeCore", "ChimeTestSupport"]),
        .testTarget(name: "ChimeRuntimeTests", dependencies: ["ChimeRuntime"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "ChimeBenchTests", dependencies: ["ChimeBench"]),
        .testTarget(
            name: "ChimeStoreTests",
            dependencies: ["ChimeStore", "ChimeCore", "ChimeTestSupport"]
        ),
        .testTarget(
            name: "ChimeClusterTests",
            dependencies: ["ChimeCluster", "ChimeCore", "ChimeWire", "ChimeStore", "ChimeTestSupport", "ZeroMQ"]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["ChimeTestSupport", "ChimeCluster", "ChimeWire", "ChimeCore", "ChimeStore", "ChimeRuntime", "ZeroMQ"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
