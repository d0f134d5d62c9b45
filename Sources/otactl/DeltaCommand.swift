import ArgumentParser
import Foundation
import OTADeltaPlan
import OTASystem
import OTATrust
import OTAWire

/// `otactl delta OLD NEW -o PLAN`: plans NEW against OLD once, so that each push of NEW to a device
/// running OLD (`push --base OLD --delta-plan PLAN`) starts sending at once.
struct DeltaCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delta",
    abstract: "Plan a release against an earlier one once, for every push of it (push --delta-plan).",
    discussion: """
      Finding what the new image shares with the old one takes time (24 s for a 96 MiB system
      partition); a push does it before its first byte. Planned here once, at release time, each
      push of NEW to a device running OLD (`otactl push NEW --base OLD --delta-plan PLAN`, or a
      fleet of them) sends at once. The plan names both images by size and SHA-256: a push refuses
      a plan made for other images. It only proposes: the device checks every window it rebuilds.

      The plan also holds NEW as zstd frames of 1 MiB against OLD (level 22; a minute or two for a
      96 MiB image): a device that takes them (otad announces features bit 4) gets those, about
      two thirds of the delta's bytes on this kind of pair; an older one gets the operations.
      --zstd-level 0 leaves them out.
      """)

  @Argument(help: "The release the devices run (the base).")
  var old: String

  @Argument(help: "The new release.")
  var new: String

  @Option(name: [.short, .customLong("output")], help: "Where to write the plan.")
  var output: String

  @Option(help: "zstd's level for the frames, 1 to 22 (0: no frames).")
  var zstdLevel: Int32 = DeltaFrame.defaultLevel

  func validate() throws {
    guard (0...22).contains(zstdLevel) else {
      throw ValidationError("--zstd-level \(zstdLevel): give 1 to 22, or 0 for no frames")
    }
  }

  func run() throws {
    let base = try Self.read(old, "the base")
    let target = try Self.read(new, "the new image")
    let started = ContinuousClock.now
    guard let plan = OperationPlan.delta(target, base: base) else {
      throw ValidationError("cannot plan \(new) against \(old)")
    }
    let planning = ContinuousClock.now - started
    var frames: [DeltaFrame] = []
    let coding = ContinuousClock.now
    if zstdLevel > 0 {
      guard let made = DeltaFrame.frames(target: target, base: base, level: zstdLevel) else {
        throw ValidationError(
          "libzstd could not code \(new) against \(old) (out of memory?); --zstd-level 0 skips it")
      }
      frames = made
    }
    let framing = ContinuousClock.now - coding
    var file = Self.file(base: base, target: target, segments: plan.segments)
    file.frames = frames
    do {
      try FileSystem.writeFile(output, file.encoded)
    } catch {
      throw ValidationError("cannot write the plan to \(output): \(error)")
    }
    let copied = plan.segments.reduce(UInt64(0)) { total, segment in
      if case .literal = segment.source { total } else { total + UInt64(segment.end - segment.start) }
    }
    print(
      "\(output): \(plan.segments.count) segments, \(copied) of \(target.count) bytes from the base, "
        + "planned in \(String(format: "%.1f", ProgressReporter.seconds(planning))) s")
    if !frames.isEmpty {
      let bytes = frames.reduce(0) { $0 + $1.bytes.count }
      print(
        "\(output): \(frames.count) zstd frames at level \(zstdLevel), \(bytes) bytes, coded in "
          + "\(String(format: "%.1f", ProgressReporter.seconds(framing))) s")
    }
  }

  static func read(_ path: String, _ what: String) throws -> [UInt8] {
    guard let bytes = try? FileSystem.readFile(path), !bytes.isEmpty else {
      throw ValidationError("cannot read \(what) \(path), or it is empty")
    }
    guard bytes.count <= Int(UInt32.max) else { throw ValidationError("\(what) \(path) is 4 GiB or more") }
    return bytes
  }

  static func file(base: [UInt8], target: [UInt8], segments: [DeltaSegment]) -> DeltaPlanFile {
    DeltaPlanFile(
      baseSize: UInt32(base.count), baseSHA256: sha256(base), targetSize: UInt32(target.count),
      targetSHA256: sha256(target), segments: segments)
  }

  static func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var hasher = IncrementalSHA256()
    hasher.update(bytes)
    return hasher.finalize()
  }
}
