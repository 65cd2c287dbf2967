// swift-tools-version: 6.0
import PackageDescription

// The store and pure-state micro-benchmarks, kept out of the main package so that a plain
// `swift build` never builds them. Run in release mode from the repository root:
//   swift run -c release --package-path Benchmarks/StoreBenchmark StoreBenchmark [mode] [N]
// (modes in Sources/StoreBenchmark/main.swift).
let package = Package(
    name: "StoreBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Chime", path: "../..")],
    targets: [
        .executableTarget(
            name: "StoreBenchmark",
            dependencies: [
                .product(name: "ChimeCore", package: "Chime"),
                .product(name: "ChimeWire", package: "Chime"),
                .product(name: "ChimeStore", package: "Chime"),
                .product(name: "ChimeJournal", package: "Chime"),
                .product(name: "ChimeCoordinator", package: "Chime"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
