// swift-tools-version: 6.0
// BlueOTA: a BLE firmware-update receiver (otad) and sender (otactl) for Linux on BlueZ.
// Layers, inside out: wire formats -> pure engines -> storage and device host -> executables.
import PackageDescription

let package = Package(
  name: "BlueOTA",
  platforms: [.macOS(.v14)],
  products: [
    .library(name: "OTAWire", targets: ["OTAWire"]),
    .library(name: "OTAJournal", targets: ["OTAJournal"]),
    .library(name: "OTAEngine", targets: ["OTAEngine"]),
    .library(name: "OTASender", targets: ["OTASender"]),
    .library(name: "OTAStorage", targets: ["OTAStorage"]),
    .library(name: "OTADaemon", targets: ["OTADaemon"]),
    .executable(name: "otad", targets: ["otad"]),
    .executable(name: "otactl", targets: ["otactl"]),
    .executable(name: "ota-bench", targets: ["ota-bench"]),
    .executable(name: "ota-lab", targets: ["ota-lab"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
    // ota-lab's page only: a small HTTP server with no dependencies of its own. otad does not link it.
    .package(url: "https://github.com/swhitty/FlyingFox.git", from: "0.27.1"),
  ],
  targets: [
    // C libraries from Debian's -dev packages.
    .systemLibrary(
      name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(name: "CLinux"),
    .systemLibrary(
      name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
    .systemLibrary(
      name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
    // The Bluetooth socket headers (L2CAP LE channels): headers only, nothing linked.
    .systemLibrary(name: "CBluetooth", providers: [.apt(["libbluetooth-dev"])]),
    // libcurl (OpenSSL flavour): the gateway's HTTP client, TLS verified, with a shim for its variadics.
    .systemLibrary(
      name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

    // The one system layer: file descriptors, errno, durable writes, poll, signals, spawn, sockets,
    // every call behind one seam that tests can trace or fail. The only target that reaches the OS.
    .target(name: "OTASystem", dependencies: ["CLinux", "CBluetooth"]),
    // The log handler of the programs that run as services: sd-daemon(3) priorities on the journal's
    // stream (JOURNAL_STREAM), swift-log's StreamLogHandler's lines anywhere else.
    .target(
      name: "OTALogging", dependencies: ["OTASystem", .product(name: "Logging", package: "swift-log")]),
    // Test support for every test target: the repository root, temporary folders, hex, seeded test
    // data, a log-capturing handler, and the decoder verifier (every split, every prefix). otad links
    // no test support.
    .target(
      name: "OTATestSupport", dependencies: ["OTAWire", .product(name: "Logging", package: "swift-log")]),
    // For tests: a SystemCallObserver that records the calls and fails or shortens chosen ones.
    .target(name: "OTASystemTesting", dependencies: ["OTASystem"]),

    // CRC32 and raw deflate through zlib, zstd frames against the running image through libzstd:
    // the checksum of windows, images and records, and the codecs of data operations.
    .target(name: "OTAChecksum", dependencies: ["CZlib", "CZstd"]),
    // Byte formats: protocol messages, versions, Info, MCUboot header and TLVs. No IO.
    .target(name: "OTAWire"),
    // Traces in Chrome's Trace Event Format: events in, JSON out, bounded. No IO, no clock.
    .target(name: "OTATrace"),
    // The transfer journal (what is committed in the slot being written, and which protocol owns
    // it) and its 32-byte record: read by the engine, the boot stage, the host and every adapter.
    .target(name: "OTAJournal", dependencies: ["OTAWire", "OTAChecksum"]),
    // The receiver's state machine: events in, actions out. No IO, no clock.
    .target(name: "OTAEngine", dependencies: ["OTAJournal", "OTAWire", "OTAChecksum"]),
    // The central's delta planning: suffix array, matchers, operation plans, block-hash paging.
    // Pure and heavy; otad does not link it.
    .target(name: "OTADeltaPlan", dependencies: ["OTAWire", "OTAChecksum"]),
    // The sender's state machine: events in, actions out. No IO, no clock. otad does not link it.
    .target(name: "OTASender", dependencies: ["OTADeltaPlan", "OTAWire", "OTAChecksum"]),
    // A strict CBOR codec (RFC 8949's integers, strings, arrays, maps, bool, null) with bounds. No IO.
    .target(name: "OTACBOR"),
    // The Simple Management Protocol (MCUmgr): header, framing, the server's requests and answers. No IO.
    .target(name: "OTASMP", dependencies: ["OTACBOR"]),
    // Image trust: signing keys (Ed25519, ECDSA P-256) in PEM, MCUboot signatures, making and signing
    // MCUboot images (otactl image), and the checks of an image in a slot (through ImageSource).
    // Encrypted images: the device's key (X25519, P-256, RSA-2048) unwraps the AES key; AES-CTR
    // (CryptoExtras) decrypts by offset.
    .target(
      name: "OTATrust",
      dependencies: [
        "OTAWire", "OTAChecksum", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "CryptoExtras", package: "swift-crypto"),
      ]),
    // Slots (files, block devices) and records replaced atomically.
    .target(
      name: "OTAStorage", dependencies: ["OTAWire", "OTAChecksum", "OTASystem"]),
    // The link seam both sides talk through: events, the two link protocols, the characteristics.
    .target(name: "OTALink", dependencies: ["OTAWire", "OTASystem"]),
    // The simulated link over a Unix socket: frames, air-time pacing, link conditions.
    .target(name: "OTASocketLink", dependencies: ["OTALink", "OTAWire", "OTASystem"]),
    // A small libdbus-1 wrapper: typed values, calls, signals, object export, Unix-fd passing.
    .target(name: "OTADBus", dependencies: ["CDBus", "OTASystem"]),
    // The BlueZ roles over D-Bus: the device's GATT application and advertisement, the central's client.
    .target(
      name: "OTABlueZ",
      dependencies: [
        "OTADBus", "OTALink", "OTAWire", "OTASystem", .product(name: "Logging", package: "swift-log"),
      ]),
    // Storage for tests and simulations only: the in-memory medium with fault injection and power cuts.
    // otad links no testing target.
    .target(name: "OTAStorageTesting", dependencies: ["OTAStorage", "OTAWire", "OTASystem"]),
    // Bootloader backends behind one interface: a symlink, Raspberry Pi tryboot, U-Boot, GRUB; the one
    // path that changes the boot state (BootControl) and its verbs (mark good, mark bad).
    .target(
      name: "OTABoot",
      dependencies: ["OTAStorage", "OTATrust", "OTAJournal", "OTAWire", "OTAChecksum", "OTASystem"]),
    // The reports written by one program and read by another: `otad status` and otactl's push lines. No IO.
    .target(name: "OTAReport", dependencies: ["OTAWire"]),
    // The receiver engine run against storage: the one core both the OTA service and the SMP server drive.
    .target(
      name: "OTAReceiverHost",
      dependencies: [
        "OTABoot", "OTAEngine", "OTAJournal", "OTAStorage", "OTATrust", "OTAChecksum", "OTAWire",
      ]),
    // The SMP (MCUmgr) server on the device: its requests carried out on the receiver host.
    .target(
      name: "OTASMPServer",
      dependencies: [
        "OTAReceiverHost", "OTABoot", "OTAEngine", "OTAJournal", "OTASMP", "OTACBOR", "OTAStorage",
        "OTATrust",
        "OTAChecksum",
        "OTASystem", "OTAWire",
      ]),
    // Nordic's Legacy and Secure DFU on the same slots, driving the receiver host as the SMP server does.
    .target(
      name: "OTANordicDFU",
      dependencies: [
        "OTAReceiverHost", "OTABoot", "OTAEngine", "OTAJournal", "OTAStorage", "OTAChecksum", "OTATrust",
        "OTAWire",
        .product(name: "Crypto", package: "swift-crypto"),
      ]),
    // Faults on demand for app teams (docs/APP-TESTING.md): what a fault is, when it is due, how
    // often it fires, and the fault control's commands; pure, no IO.
    .target(name: "OTAFaults", dependencies: ["OTAWire"]),
    // The device side's IO edge: the daemon's loop over a link, its trial, health check, trace, status.
    .target(
      name: "OTADaemon",
      dependencies: [
        "OTAReceiverHost", "OTASMPServer", "OTAReport", "OTABoot", "OTAEngine", "OTAJournal", "OTAStorage",
        "OTALink",
        "OTASystem", "OTASMP", "OTACBOR", "OTAFaults", "OTANordicDFU", "OTATrust", "OTATrace", "OTAWire",
        .product(name: "Logging", package: "swift-log"),
      ]),
    // The TOML configuration file read into the daemon's settings: the only target that links TOMLKit.
    .target(
      name: "OTAConfiguration",
      dependencies: [
        "OTADaemon", "OTABoot", "OTAFaults", "OTAWire", .product(name: "Logging", package: "swift-log"),
        .product(name: "TOMLKit", package: "TOMLKit"),
      ]),
    // The central side's IO edge: runs the sender engine over a link.
    .target(
      name: "OTACentral",
      dependencies: [
        "OTASender", "OTADeltaPlan", "OTALink", "OTAWire", "OTASystem", "OTATrace",
        .product(name: "Logging", package: "swift-log"),
      ]),

    // The gateway's pure part: hawkBit DDI's messages, SWUpdate archives and sw-description, the
    // artifact's checks. No IO.
    .target(
      name: "OTAGateway",
      dependencies: ["OTAWire", "OTAChecksum", .product(name: "Crypto", package: "swift-crypto")]),
    // The gateway's IO edge: HTTP over libcurl, the DDI client, the artifact cache.
    .target(
      name: "OTAGatewayHTTP",
      dependencies: [
        "OTAGateway", "CCurl", "OTASystem", "OTAWire", .product(name: "Crypto", package: "swift-crypto"),
      ]),

    // The engines over an in-memory link in virtual time: for tests, benchmarks and the demo.
    .target(
      name: "OTASimulation",
      dependencies: [
        "OTAReceiverHost", "OTABoot", "OTAEngine", "OTASender", "OTADeltaPlan", "OTAStorage", "OTALink",
        "OTASocketLink", "OTASystem", "OTAWire",
      ]),

    .executableTarget(
      name: "otad",
      dependencies: [
        "OTADaemon", "OTAConfiguration", "OTAReport", "OTABoot", "OTALink", "OTASocketLink", "OTAStorage",
        "OTASystem", "OTATrust", "OTAWire", "OTABlueZ", "OTADBus", "OTATrace", "OTAFaults", "OTANordicDFU",
        "OTALogging", "OTAVersion", "OTAReceiverHost", "OTAEngine",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .executableTarget(
      name: "otactl",
      dependencies: [
        "OTACentral", "OTASender", "OTADeltaPlan", "OTALink", "OTASocketLink", "OTASystem", "OTAWire",
        "OTABlueZ",
        "OTADBus",
        "OTATrust", "OTAReport", "OTAGateway", "OTAGatewayHTTP", "OTALogging", "OTAVersion",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    // The lab's view of a device (the page, the snapshot it draws, otactl's lines reduced). No IO.
    .target(name: "OTALab", dependencies: ["OTAReport"]),
    // The lab: one simulated device (otad, otactl as processes) and its page on the loopback address.
    .executableTarget(
      name: "ota-lab",
      dependencies: [
        "OTABoot", "OTALab", "OTAReport", "OTADaemon", "OTAFaults", "OTAStorage", "OTASystem", "OTATrust",
        "OTAWire", "OTAVersion", .product(name: "FlyingFox", package: "FlyingFox"),
        .product(name: "FlyingSocks", package: "FlyingFox"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .executableTarget(
      name: "ota-bench",
      dependencies: [
        "OTASimulation", "OTAReceiverHost", "OTABoot", "OTAEngine", "OTASender", "OTADeltaPlan", "OTAStorage",
        "OTATrust", "OTALink", "OTASocketLink", "OTASystem", "OTAChecksum", "OTAWire",
      ]),

    .testTarget(name: "OTAWireTests", dependencies: ["OTAWire", "OTATestSupport"]),
    .testTarget(name: "OTAFaultsTests", dependencies: ["OTAFaults", "OTAWire", "OTATestSupport"]),
    .testTarget(name: "OTACBORTests", dependencies: ["OTACBOR", "OTATestSupport"]),
    .testTarget(name: "OTASMPTests", dependencies: ["OTASMP", "OTACBOR", "OTATestSupport"]),
    .testTarget(
      name: "OTASystemTests",
      dependencies: ["OTASystem", "OTASystemTesting", "OTAStorage", "OTAWire", "OTATestSupport"]),
    .testTarget(
      name: "OTATrustTests",
      dependencies: [
        "OTATrust", "OTAWire", "OTAChecksum", "OTATestSupport",
        .product(name: "Crypto", package: "swift-crypto"),
      ]),
    .testTarget(name: "OTAChecksumTests", dependencies: ["OTAChecksum"]),
    .testTarget(name: "OTATraceTests", dependencies: ["OTATrace"]),
    .testTarget(name: "OTAReportTests", dependencies: ["OTAReport"]),
    .testTarget(name: "OTALabTests", dependencies: ["OTALab", "OTAReport", "OTABoot"]),
    .testTarget(name: "OTALoggingTests", dependencies: ["OTALogging", "OTASystem"]),
    .testTarget(name: "OTAVersionTests", dependencies: ["OTAVersion"]),
    // Every otad, otactl and ota-lab command line in README.md and docs/*.md parsed by the programs'
    // own parsers (imported from the executables), without running it.
    .testTarget(
      name: "DocCommandLineTests",
      dependencies: [
        "otad", "otactl", "ota-lab", .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .testTarget(
      name: "OTASocketLinkTests",
      dependencies: [
        "OTASocketLink", "OTALink", "OTAWire", "OTASystem", "OTASystemTesting", "OTATestSupport",
      ]),
    // A private dbus-daemon for the D-Bus and BlueZ tests.
    .target(name: "DBusTestSupport", path: "Sources/DBusTestSupport"),
    .testTarget(name: "OTADBusTests", dependencies: ["OTADBus", "DBusTestSupport", "CDBus", "OTASystem"]),
    .testTarget(
      name: "OTABlueZTests",
      dependencies: [
        "OTABlueZ", "OTADBus", "OTALink", "OTASocketLink", "OTASystem", "OTASystemTesting", "OTAWire",
        "DBusTestSupport", "OTATestSupport",
        .product(name: "Logging", package: "swift-log"),
      ]),
    // Runs the built otad and otactl as separate processes (build them first: Scripts/test.sh does).
    .testTarget(name: "ProcessTests", dependencies: ["OTATestSupport", "OTAReport"]),
    .testTarget(
      name: "OTAGatewayTests",
      dependencies: [
        "OTAGateway", "OTAGatewayHTTP", "OTATestSupport", "OTATrust", "OTAWire", "OTASystem", "OTAChecksum",
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      exclude: ["Fixtures"]),
    // The test support's own checks: the decoder verifier finds a decoder that breaks its promise.
    .testTarget(name: "OTATestSupportTests", dependencies: ["OTATestSupport", "OTAWire"]),
    // Reads docs/ARCHITECTURE.md, Package.swift and the import lines; imports no project target.
    .testTarget(name: "ArchitectureTests"),
    .testTarget(
      name: "OTACentralTests",
      dependencies: ["OTACentral", "OTASender", "OTAWire", "OTATrace", "OTATestSupport"]),
    .testTarget(name: "OTAEngineTests", dependencies: ["OTAEngine", "OTAJournal", "OTAChecksum", "OTAWire"]),
    .testTarget(
      name: "OTASenderTests",
      dependencies: ["OTASender", "OTADeltaPlan", "OTAEngine", "OTAChecksum", "OTAWire"]),
    .testTarget(
      name: "OTABootTests",
      dependencies: [
        "OTABoot", "OTAStorage", "OTAStorageTesting", "OTASystem", "OTAWire", "OTAChecksum", "OTATrust",
        "OTATestSupport",
      ]),
    .testTarget(
      name: "OTAStorageTests",
      dependencies: [
        "OTAStorage", "OTAStorageTesting", "OTAWire", "OTAChecksum", "OTASystem", "OTATestSupport",
      ]),
    // The release and the build's commit, for every program's --version: the commit written before
    // each build by the BuildCommit plugin (Scripts/build-commit.sh), only when it changes.
    .target(name: "OTAVersion", plugins: ["BuildCommit"]),
    .plugin(name: "BuildCommit", capability: .buildTool(), path: "Sources/BuildCommitPlugin"),
    .testTarget(
      name: "OTADeviceTests",
      dependencies: [
        "OTADaemon", "OTAConfiguration", "OTAReport", "OTASMPServer", "OTAReceiverHost", "OTABoot",
        "OTAFaults",
        "OTAEngine", "OTAJournal", "OTASender", "OTADeltaPlan", "OTAStorage", "OTAStorageTesting",
        "OTASimulation",
        "OTAWire",
        "OTAChecksum", "OTALink", "OTASocketLink", "OTATrust", "OTASMP", "OTACBOR", "OTATrace",
        "OTATestSupport", "OTANordicDFU", .product(name: "Crypto", package: "swift-crypto"),
      ]),
  ]
)

// MARK: - Fuzzing (appended; see docs/FUZZING.md)

// The per-input logic of every fuzz target: decoders and the receiver engine driven by arbitrary
// bytes, with invariant checkers. Always built, so the ordinary test suite runs the same checks.
package.targets.append(contentsOf: [
  .target(
    name: "OTAFuzzing",
    dependencies: ["OTAWire", "OTAEngine", "OTAJournal", "OTAChecksum", "OTACBOR", "OTASMP"]),
  // Keys and signatures: apart, because it pulls swift-crypto into its fuzzer build (minutes).
  .target(
    name: "OTATrustFuzzing",
    dependencies: ["OTAFuzzing", "OTATrust", "OTAWire", .product(name: "Crypto", package: "swift-crypto")]),
  // The interleaving of every protocol on one device: apart, because it links the device's whole
  // host (storage, boot, the SMP server, Nordic's DFU) and swift-crypto.
  .target(
    name: "OTADeviceFuzzing",
    dependencies: [
      "OTAFuzzing", "OTAReceiverHost", "OTASMPServer", "OTASMP", "OTACBOR", "OTANordicDFU", "OTABoot",
      "OTAEngine", "OTAStorage", "OTAStorageTesting", "OTASimulation", "OTATrust", "OTAChecksum", "OTALink",
      "OTAWire",
    ]),
  // The gateway's readers of untrusted bytes (.swu, sw-description, DDI JSON): apart, because
  // OTAGateway links swift-crypto and Foundation.
  .target(
    name: "OTAGatewayFuzzing",
    dependencies: ["OTAFuzzing", "OTAGateway", "OTAWire", .product(name: "Crypto", package: "swift-crypto")]),
  .testTarget(
    name: "OTAFuzzingTests",
    dependencies: [
      "OTAFuzzing", "OTATrustFuzzing", "OTADeviceFuzzing", "OTAGatewayFuzzing", "OTAGateway", "OTAEngine",
      "OTAJournal", "OTAWire", "OTALink", "OTASocketLink", "OTATestSupport",
    ],
    exclude: ["Seeds", "Regressions"]),
])

// libFuzzer executables, only when asked for (Scripts/fuzz.sh sets BLUEOTA_FUZZ=1 and builds with
// `-sanitize=fuzzer,address` into .build-fuzz): each is a few lines around an OTAFuzzing entry.
if Context.environment["BLUEOTA_FUZZ"] == "1" {
  let fuzzTargets = [
    "wire", "mcuboot", "receiver", "trust", "cbor", "interleaving", "swu", "libconfig", "ddi",
  ]
  let gatewayTargets: Set<String> = ["swu", "libconfig", "ddi"]
  package.targets.append(
    contentsOf: fuzzTargets.map { name in
      .executableTarget(
        name: "fuzz-\(name)",
        dependencies: ["OTAFuzzing"] + (name == "trust" ? ["OTATrustFuzzing"] : [])
          + (name == "interleaving" ? ["OTADeviceFuzzing"] : [])
          + (gatewayTargets.contains(name) ? ["OTAGatewayFuzzing"] : []),
        path: "Sources/FuzzTargets/\(name)", swiftSettings: [.unsafeFlags(["-parse-as-library"])])
    })
  package.products.append(
    contentsOf: fuzzTargets.map { name in .executable(name: "fuzz-\(name)", targets: ["fuzz-\(name)"]) })
}
