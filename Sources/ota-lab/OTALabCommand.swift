import ArgumentParser
import FlyingFox
import Foundation
import OTADaemon
import OTALab
import OTASystem
import Synchronization

@main
struct OTALabCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ota-lab",
    abstract: "A lab page: one simulated device, drawn live, with buttons to update it and to break it.",
    discussion: """
      Starts otad (file slots in a temporary folder, the simulated link; the demo's device: firmware
      1.0.0 in slot A, the test key trusted, the sample health check, two trial boots) and serves one
      page on 127.0.0.1 that draws its slots, boot state, the push under way and the link, from otad's
      own status and trace and otactl's JSON lines. It prints the address and opens nothing.
      Ctrl-C stops it and removes the folder (--keep leaves it). docs/LAB.md has the exercises.
      --bootloader uboot: Debian's real U-Boot decides each boot, on the U-Boot harness's emulated
      board (Scripts/bootloaders/uboot); the boot pointer's panel shows its variables (fw_printenv)
      and its last choices beside otad's view. A boot takes seconds under emulation.
      Class mode (--class-code, or --listen on an address other than the loopback's): each student
      opens the page, gives the class code and a name, and gets a device of their own.
      """, version: labVersion)

  @Option(help: "The port on 127.0.0.1 (default: a free one).")
  var port: UInt16 = 0

  @Option(help: "Class mode's address and port, e.g. 0.0.0.0:8080 (every interface). Instead of --port.")
  var listen: String?

  @Option(
    name: .customLong("class-code"),
    help: "The code students give to join (class mode; default with --listen: a generated one, printed).")
  var classCode: String?

  @Option(help: "Class mode: at most this many students, each with a device of their own (1 to 100).")
  var seats = 30

  @Option(
    name: .customLong("seats-per-address"),
    help:
      "Class mode: at most this many seats joined from one address (1 to 100), so one student cannot fill the class."
  )
  var seatsPerAddress = 3

  @Option(help: "The folder of the sample images (default: ./Images, or the checkout's).")
  var images: String?

  @Option(help: "Where otad and otactl are (default: beside ota-lab).")
  var bin: String?

  @Option(help: "Each slot's capacity.")
  var capacity = "80MiB"

  @Option(help: "The device's window capacity (the demo's 8KiB shows windows one by one).")
  var window = "8KiB"

  @Option(
    name: .customLong("big-image"),
    help: "An image (path) for the push-big action: a large push, to watch the page stay responsive.")
  var bigImage: String?

  @Option(help: "The link's connection interval in milliseconds (the lab's 30 shows windows one by one).")
  var interval = 30

  @Option(
    help: "Packets per connection event (the lab's 2 keeps the sample firmware's push a few seconds long).")
  var packets = 2

  @Option(
    help: """
      What decides the device's boots: file (otad itself, its links) or uboot (Debian's real U-Boot \
      under qemu, the U-Boot harness's board: needs u-boot-qemu, u-boot-tools, libubootenv-tool, \
      mtools, dosfstools, qemu-system-arm).
      """)
  var bootloader: LabBootloader = .file

  @Flag(help: "Keep the lab's folder (slots, logs, traces) when it stops.")
  var keep = false

  func validate() throws {
    if listen != nil, port != 0 { throw ValidationError("give --listen or --port, not both") }
    if let listen { _ = try LabListenAddress(parsing: listen) }
    guard (1...100).contains(seats) else { throw ValidationError("--seats \(seats): give 1 to 100") }
    guard (1...100).contains(seatsPerAddress) else {
      throw ValidationError("--seats-per-address \(seatsPerAddress): give 1 to 100")
    }
    if let classCode,
      !(4...64).contains(classCode.count) || !classCode.allSatisfy(\.isASCII)
        || classCode.contains(where: { $0.isWhitespace || $0 == "&" || $0 == "=" || $0 == "%" || $0 == "+" })
    {
      throw ValidationError("--class-code: 4 to 64 ASCII characters, no spaces, & = % or +")
    }
  }

  func run() throws {
    // Ctrl-C and SIGTERM stop the lab and its children; blocked before any thread starts.
    let stopSignals = try StopSignals()
    let listening =
      try listen.map { try LabListenAddress(parsing: $0) }
      ?? LabListenAddress(address: "127.0.0.1", port: port)
    let options = LabRigOptions(
      images: images, bin: bin, capacity: capacity, window: window, intervalMilliseconds: Double(interval),
      packets: packets, keep: keep, bootloader: bootloader)
    // Class mode: a class code given, or an address other than the loopback's.
    let code = classCode ?? (listening.isLoopback ? nil : LabClassroom.newCode())
    let site: LabSite
    let gate: LabGate
    if let code {
      site = .classroom(LabClassroom(code: code, seats: seats, perAddress: seatsPerAddress, options: options))
      gate = LabGate(.listening(address: listening.address, port: Int(listening.port)))
    } else {
      let model = try LabModel(options: options)
      try model.start()
      site = .solo(model)
      gate = LabGate(.loopback)
    }
    let big = bigImage.map { URL(fileURLWithPath: $0).path }
    let serving = ServerState()
    let address = try sockaddr_in.inet(ip4: listening.address, port: listening.port)
    Task.detached {
      let server: HTTPServer
      do {
        server = try await LabServer.make(site: site, address: address, gate: gate, bigImage: big)
      } catch {
        serving.failure.withLock { $0 = "\(error)" }
        return
      }
      Task.detached {
        do {
          try await server.waitUntilListening(timeout: 10)
          if case .ip4(_, let port)? = await server.listeningAddress {
            if case .listening(let host, _) = gate.hosts.withLock({ $0 }) {
              gate.hosts.withLock { $0 = .listening(address: host, port: Int(port)) }
            }
            serving.listening.withLock { $0 = "http://\(listening.address):\(port)/" }
          }
        } catch {
          serving.failure.withLock { $0 = "\(error)" }
        }
      }
      do { try await server.run() } catch { serving.failure.withLock { $0 = "\(error)" } }
    }
    var announced = false
    var failure: String?
    while true {
      let readable = try Poller.wait(for: [stopSignals.descriptor], timeout: .milliseconds(100))
      if readable.contains(stopSignals.descriptor) {
        _ = stopSignals.take()
        break
      }
      if let why = serving.failure.withLock({ $0 }) {
        failure = why
        break
      }
      if !announced, let address = serving.listening.withLock({ $0 }) {
        let said: String
        switch site {
        case .solo(let model): said = "ota-lab: \(address)  (device folder \(model.device.paths.folder))\n"
        case .classroom(let classroom):
          said =
            "ota-lab: \(address)  class code \(classroom.code), \(classroom.capacity) seats"
            + (listening.address == "0.0.0.0"
              ? " (students open this machine's address, port \(address.dropLast().split(separator: ":").last ?? ""))"
              : "")
            + "\n"
        }
        FileHandle.standardOutput.write(Data(said.utf8))
        announced = true
      }
    }
    switch site {
    case .solo(let model): model.stop()
    case .classroom(let classroom): classroom.stopAll()
    }
    if let failure { throw LabError("the page's server stopped: \(failure)") }
    print("ota-lab: stopped")
  }

}

/// What the server's tasks tell the main thread: the address once listening, or why it stopped.
final class ServerState: Sendable {
  let listening = Mutex<String?>(nil)
  let failure = Mutex<String?>(nil)
}
