import ArgumentParser
import Foundation
import OTACentral
import OTALink
import OTAReport
import OTASender
import OTASocketLink
import OTASystem
import OTATrust
import OTAWire

extension PushCommand {
  /// One image to several devices at once (`FleetPush`): each device's push as a single push runs
  /// it, at most `--parallel` links at a time, every device shown (a line each on a terminal, lines
  /// that name the device otherwise, `device`-tagged JSON lines), then a summary of each device's
  /// outcome. Exit code 0 when every device ended confirmed, 14 when not.
  func runFleet(_ targets: [String], image bytes: [UInt8], version: Version, bases: [BaseImage]) throws {
    let conditions = try options.conditions()
    let configurations = (
      simulated: try senderConfiguration(version: version, simulated: true),
      bluetooth: try senderConfiguration(version: version, simulated: false)
    )
    let terminal = !options.json && isatty(2) != 0
    let run = FleetRun(
      targets: targets, size: bytes.count, version: version,
      style: options.json ? .json : terminal ? .silent : .plain,
      screen: terminal ? FleetScreen(devices: targets) : nil)
    if !options.json {
      StandardStreams.writeOutput(
        Array(
          ("pushing \(image) (\(bytes.count) bytes, version \(version)) to \(targets.count) devices, "
            + "at most \(min(parallel, targets.count)) at a time\n").utf8))
    }
    // One radio for every simulated link, and one time for all sessions, which its plan counts in.
    let radio = SharedRadio()
    let origin = ContinuousClock().now
    let fleet = FleetPush(
      count: targets.count, parallel: parallel,
      makeSession: { index in
        let target = targets[index]
        let simulated = LinkOptions.isSimulated(target)
        let link: any CentralLink
        do {
          link = try options.makeLink(to: target, dataPath: dataPath, linkFacts: true, radio: radio)
        } catch {
          return .failure(.init("\(error)"))
        }
        let reporter = run.begin(
          index, image: image,
          over: simulated ? "\(conditions)" : "Bluetooth (\(options.adapter) to \(target))")
        reporter.baseNames = bases.map(\.name)
        return .success(
          PushSession(
            image: bytes, configuration: simulated ? configurations.simulated : configurations.bluetooth,
            bases: bases, blockDigest: { BlockDigest.truncatedSHA256($0) }, link: link,
            logger: options.logger(), origin: origin,
            onProgress: { progress, report in run.progress(index, progress, report) }))
      },
      onEnded: { index, ending, session in
        run.end(
          index, ending, session, conditions: LinkOptions.isSimulated(targets[index]) ? conditions : nil)
      })
    fleet.run()
    let allSimulated = targets.allSatisfy(LinkOptions.isSimulated)
    let summary = run.summary(
      parallel: allSimulated ? radio.peakLinks : fleet.peakRunning,
      air: allSimulated ? AirTime(conditions) : nil)
    if options.json {
      JSONOutput.line(summary)
    } else {
      StandardStreams.writeOutput(Array((FleetSummaryText(summary).text + "\n").utf8))
    }
    if summary.confirmed < summary.total { throw ExitCode(.notAllConfirmed) }
  }
}
