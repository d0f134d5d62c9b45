import OTASystem
import OTATestSupport
import Testing

@testable import OTADaemon

/// The fault control's socket served by hand, with the clock the daemon's loop would pass.
@Suite struct FaultControlSocketTests {
  private func connect(_ control: FaultControlSocket) throws -> FileDescriptor {
    let socket = try FileDescriptor.unixSocket()
    try socket.connect(to: control.path)
    return socket
  }

  private func answer(of socket: FileDescriptor) throws -> String {
    var buffer = [UInt8](repeating: 0, count: 256)
    let got = try buffer.withUnsafeMutableBytes { try socket.receive(into: $0) } ?? 0
    return String(decoding: buffer[..<got], as: UTF8.self)
  }

  @Test func aLoopThatWakesLateLetsGoOfSilentClientsBeforeItTurnsANewcomerAway() throws {
    let state = try TemporaryDirectory(label: "fault-control")
    let control = try FaultControlSocket(stateDirectory: state.path)
    defer { control.close() }
    let silent = try (0..<FaultControlSocket.maxClients).map { _ in try connect(control) }
    control.serve(readable: Set(control.descriptors), now: .zero) { _ in "unexpected" }
    #expect(control.descriptors.count == 1 + FaultControlSocket.maxClients)

    // The loop was busy past the silent clients' time, and a newcomer has already said its line.
    let newcomer = try connect(control)
    _ = try Array("list\n".utf8).withUnsafeBytes { try newcomer.send($0) }
    let late = FaultControlSocket.patience + .milliseconds(500)
    control.serve(readable: [control.descriptors[0]], now: late) { _ in "unexpected" }
    for socket in silent { #expect(try answer(of: socket) == "error: no command within 2.0 seconds\n") }
    #expect(control.descriptors.count == 2, "the newcomer was taken in, not turned away")
    control.serve(readable: Set(control.descriptors), now: late) { line in "heard \(line)" }
    #expect(try answer(of: newcomer) == "heard list\n")
    for socket in silent + [newcomer] { try socket.close() }
  }
}
