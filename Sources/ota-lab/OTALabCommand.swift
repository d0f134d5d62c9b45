import ArgumentParser
import FlyingFox
import Foundation
import OTADaemon
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
      """, version: labVersion)

  @Option(help: "The port on 127.0.0.1 (default: a free one).")
  var port: UInt16 = 0

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

  @Flag(help: "Keep the lab's folder (slots, logs, traces) when it stops.")
  var keep = false

  func run() throws {
    // Ctrl-C and SIGTERM stop the lab and its children; blocked before any thread starts.
    let stopSignals = try StopSignals()
    let paths = try LabPaths.make(images: images, bin: bin)
    let device = try LabDevice(paths: paths, capacity: capacity, window: window)
    let central = LabCentral(paths: paths)
    let windowBytes = Int(try DaemonConfiguration.byteSize(window))
    let model = LabModel(device: device, central: central, windowCapacity: windowBytes)
    model.setLink(intervalMilliseconds: Double(max(1, interval)), packets: max(1, packets))
    try device.start()
    let requestedPort = port
    let big = bigImage.map { URL(fileURLWithPath: $0).path }
    let serving = ServerState()
    Task.detached {
      let server: HTTPServer
      do {
        server = try await LabServer.make(model: model, port: requestedPort, bigImage: big)
      } catch {
        serving.failure.withLock { $0 = "\(error)" }
        return
      }
      Task.detached {
        do {
          try await server.waitUntilListening(timeout: 10)
          if case .ip4(_, let port)? = await server.listeningAddress {
            serving.listening.withLock { $0 = "http://127.0.0.1:\(port)/" }
          }
        } catch {
          serving.failure.withLock { $0 = "\(error)" }
        }
      }
      do { try await server.run() } catch { serving.failure.withLock { $0 = "\(error)" } }
    }
    var announced = false
    while true {
      let readable = try Poller.wait(for: [stopSignals.descriptor], timeout: .milliseconds(100))
      if readable.contains(stopSignals.descriptor) {
        _ = stopSignals.take()
        break
      }
      if let why = serving.failure.withLock({ $0 }) {
        central.stop()
        device.stop()
        throw LabError("the page's server stopped: \(why)")
      }
      if !announced, let address = serving.listening.withLock({ $0 }) {
        FileHandle.standardOutput.write(Data("ota-lab: \(address)  (device folder \(paths.folder))\n".utf8))
        announced = true
      }
    }
    central.stop()
    device.stop()
    if !keep { try? FileSystem.removeTree(paths.folder) }
    print("ota-lab: stopped")
  }

}

/// What the server's tasks tell the main thread: the address once listening, or why it stopped.
final class ServerState: Sendable {
  let listening = Mutex<String?>(nil)
  let failure = Mutex<String?>(nil)
}
