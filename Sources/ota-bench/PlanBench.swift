import Foundation
import OTADeltaPlan
import OTASender
import OTASocketLink
import OTASystem
import OTAWire

/// `ota-bench --plan OLD NEW [--matcher NAME] [--mtu N]`: the central's planning alone, as otactl
/// does it for `--base OLD`: the matcher's segments, then the plan's bytes on air in the windows
/// and writes a push at that MTU would use. Prints the matcher's and the estimate's wall time; its
/// peak memory is the process's (run it under `/usr/bin/time -v`).
enum PlanBench {
  /// What `--matcher` takes (`--matchers` lists them).
  static let matchers = ["rolling", "suffix"]

  static func run(old oldPath: String, new newPath: String, matcher: String, options: Options) throws {
    guard let old = try? FileSystem.readFile(oldPath), let new = try? FileSystem.readFile(newPath)
    else { throw BenchError("cannot read \(oldPath) or \(newPath)") }
    let mtu = options.mtus.first ?? 247
    let budget = WriteSize.auto.valueLength(
      mtu: ATTMTU(clamping: mtu), dataLength: LinkConditions(mtu: mtu).dataLength)
    // The windows the sender uses with a device of this window capacity.
    let capacity = UInt32(options.windowKiB * 1024)
    let window = SenderEngine.windowSize(
      capacity: capacity, windowsInFlight: SenderConfiguration(version: .zero).windowsInFlight,
      chunkPayload: budget)
    let maxLength = UInt32(options.windowKiB * 1024)
    let started = ContinuousClock.now
    let segments: [DeltaSegment]
    switch matcher {
    case "rolling": segments = DeltaMatcher.segments(target: new, base: old)
    case "suffix": segments = SuffixMatcher.segments(target: new, base: old)
    default: throw BenchError("unknown matcher \(matcher)")
    }
    let matched = ContinuousClock.now
    guard let plan = OperationPlan(target: new, base: old, segments: segments) else {
      throw BenchError("the \(matcher) matcher's segments do not cover the target")
    }
    let bytes = plan.bytesOnAir(window: window, budget: budget, maxLength: maxLength)
    let estimated = ContinuousClock.now
    let chunkPayload = budget - DataChunk.headerSize
    let plain = new.count + (new.count + chunkPayload - 1) / chunkPayload * DataChunk.headerSize
    var copied = 0
    var patched = 0
    for segment in segments {
      switch segment.source {
      case .copy: copied += Int(segment.end - segment.start)
      case .patch: patched += Int(segment.end - segment.start)
      case .literal: break
      }
    }
    print(
      "plan \(matcher): \(newPath) (\(new.count) B) against \(oldPath) (\(old.count) B), MTU \(mtu), "
        + "\(budget)-byte writes: \(bytes) B on air (plain \(plain) B, \(format(100 * Double(bytes) / Double(plain), 1))%), "
        + "\(segments.count) segments (copied \(copied) B, patched \(patched) B), "
        + "match \(format(seconds(matched - started))) s, estimate \(format(seconds(estimated - matched))) s")
  }
}
