import ArgumentParser
import Foundation
import OTACentral
import OTAWire

/// The time options of a scheduled activation (`push --activate-at/--until/--window`,
/// `activate --at/--until/--window`): read as the parser meets them (syntax only), checked
/// against each other, and resolved against this machine's clock and time zone when the command
/// runs.
enum ScheduleOptions {
  static func time(_ text: String) throws -> ActivationTime {
    do {
      return try ActivationTime(parsing: text)
    } catch {
      throw ValidationError(error.description)
    }
  }

  static func window(_ text: String) throws -> DailyWindow {
    do {
      return try DailyWindow(parsing: text)
    } catch {
      throw ValidationError(error.description)
    }
  }

  /// The schedule the options ask for (nil: activate at once); `atFlag` is the command's name for
  /// the start (`--activate-at`, `--at`).
  static func schedule(at: ActivationTime?, until: ActivationTime?, window: DailyWindow?, atFlag: String)
    throws
    -> ActivationSchedule?
  {
    if at != nil, window != nil {
      throw ValidationError(
        "\(atFlag) activates from a time on, --window in the next daily window: give one of them")
    }
    if until != nil, at == nil {
      throw ValidationError("--until ends the window \(atFlag) opens: give \(atFlag) with it (or --window)")
    }
    if let at { return .at(at, until: until) }
    return window.map { .window($0) }
  }

  /// SCHEDULE's window for `schedule`, now, in this machine's time zone; a time in the past or an
  /// empty window is a usage error (exit 64) before anything is sent.
  static func resolve(_ schedule: ActivationSchedule, permanent: Bool) throws -> ActivationWindow {
    let zone = TimeZone.current
    do {
      return try schedule.resolve(
        now: Int64(Date().timeIntervalSince1970.rounded(.down)),
        offset: { zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval($0))) },
        permanent: permanent)
    } catch {
      throw ValidationError(error.description)
    }
  }
}
