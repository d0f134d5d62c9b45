import OTAFaults
import OTASystem

/// The fault control's client (`otad fault`, the lab's fault buttons): one command to the running
/// daemon's `faults.sock`, its answer read to the end.
public enum FaultControlClient {
  public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// Sends `command` to the daemon whose state directory is `stateDirectory`; its answer (an answer
  /// that starts with "error: " says the command was refused). Waits 5 s at most.
  public static func ask(_ command: FaultControlCommand, stateDirectory: String) throws(Failure) -> String {
    let path = stateDirectory + "/" + FaultControlSocket.fileName
    do {
      let socket = try FileDescriptor.unixSocket()
      defer { try? socket.close() }
      if let refused = connectFailure(socket, path) { throw refused }
      let bytes = Array((command.line + "\n").utf8)
      _ = try bytes.withUnsafeBytes { try socket.send($0) }
      var answer: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      let clock = ContinuousClock()
      let deadline = clock.now + .seconds(5)
      while clock.now < deadline {
        guard try Poller.wait(for: [socket.rawValue], timeout: deadline - clock.now).contains(socket.rawValue)
        else { continue }
        let got = try buffer.withUnsafeMutableBytes { try socket.receive(into: $0) } ?? 0
        if got == 0 { break }
        answer += buffer[..<got]
      }
      guard !answer.isEmpty else { throw Failure(description: "otad did not answer at \(path) within 5 s") }
      return String(decoding: answer, as: UTF8.self)
    } catch let failure as Failure {
      throw failure
    } catch {
      throw Failure(description: "the fault control at \(path): \(error)")
    }
  }

  /// Why the socket could not reach the fault control, nil when it did.
  private static func connectFailure(_ socket: FileDescriptor, _ path: String) -> Failure? {
    let failure: SystemError?
    do {
      try socket.connect(to: path)
      failure = nil
    } catch {
      failure = error
    }
    guard let failure else { return nil }
    guard failure.errno == .noSuchFile || failure.errno == .connectionRefused else {
      return Failure(description: "the fault control at \(path): \(failure)")
    }
    return Failure(
      description:
        "no otad with faults allowed answers at \(path): start it with [faults] allow = true (or --allow-faults)"
    )
  }
}
