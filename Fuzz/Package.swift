// swift-tools-version: 6.0
import PackageDescription

// libFuzzer harnesses for Chime's decoders, kept out of the main package so that a plain
// `swift build` never sees them. Build and run with `scripts/fuzz.sh` (it passes
// `--sanitize fuzzer`; libFuzzer supplies `main`).
let package = Package(
    name: "ChimeFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Chime", path: "..")],
    targets: [
        .executableTarget(
            name: "chime-fuzz",
            dependencies: [
                .product(name: "ChimeCore", package: "Chime"),
                .product(name: "ChimeWire", package: "Chime"),
                .product(name: "ChimeDelivery", package: "Chime"),
                .product(name: "ChimeStore", package: "Chime"),
                .product(name: "ChimeJournal", package: "Chime"),
                .product(name: "ChimeCoordinator", package: "Chime"),
                .product(name: "ZeroMQ", package: "Chime"),
            ],
            path: "Sources/ChimeFuzz",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ],
    swiftLanguageModes: [.v6]
)
