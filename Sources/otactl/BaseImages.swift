import ArgumentParser
import OTADeltaPlan
import OTASender
import OTASystem
import OTAWire

/// `push --base`: one earlier release, or every regular file in a directory of them.
enum BaseImages {
  static func load(_ path: String) throws -> [BaseImage] {
    guard let kind = (try? FileSystem.kind(ofPath: path)) ?? nil else {
      throw ValidationError("--base \(path): no such file or directory")
    }
    let files: [String]
    if kind == .directory {
      let names = (try? FileSystem.directoryEntries(path)) ?? []
      files = names.map { path.hasSuffix("/") ? path + $0 : path + "/" + $0 }
    } else {
      files = [path]
    }
    var bases: [BaseImage] = []
    for file in files {
      guard let kind = (try? FileSystem.kind(ofPath: file)) ?? nil, kind != .directory,
        let bytes = try? FileSystem.readFile(file), !bytes.isEmpty
      else { continue }
      bases.append(BaseImage(bytes: bytes, name: file))
    }
    guard !bases.isEmpty else { throw ValidationError("--base \(path): no readable, non-empty file there") }
    return bases
  }

  /// `push --delta-plan`: the plan's segments given to the base it was made for. Refused, with the
  /// reason, when it is no plan, or was made for another image or for none of the bases.
  static func attach(_ path: String, to bases: [BaseImage], image: [UInt8]) throws -> [BaseImage] {
    guard !bases.isEmpty else {
      throw ValidationError("--delta-plan \(path) needs the --base it was made against")
    }
    guard let bytes = try? FileSystem.readFile(path) else {
      throw ValidationError("--delta-plan \(path): cannot read it")
    }
    let plan: DeltaPlanFile
    do {
      plan = try DeltaPlanFile(bytes: bytes)
    } catch {
      throw ValidationError("--delta-plan \(path): \(error)")
    }
    guard plan.targetSize == UInt32(clamping: image.count), plan.targetSHA256 == DeltaCommand.sha256(image)
    else {
      throw ValidationError(
        "--delta-plan \(path) was made for another image (\(plan.targetSize) bytes, SHA-256 "
          + "\(Hex.string(plan.targetSHA256.prefix(8)))…): make it again with otactl delta BASE IMAGE -o \(path)"
      )
    }
    var matched = false
    let attached = bases.map { base in
      guard !matched, plan.baseSize == UInt32(clamping: base.bytes.count),
        plan.baseSHA256 == DeltaCommand.sha256(base.bytes)
      else { return base }
      matched = true
      return BaseImage(
        bytes: base.bytes, name: base.name, segments: plan.segments,
        frames: plan.frames.isEmpty ? nil : plan.frames)
    }
    guard matched else {
      throw ValidationError(
        "--delta-plan \(path) was made against a base none of --base's files is (\(plan.baseSize) bytes, "
          + "SHA-256 \(Hex.string(plan.baseSHA256.prefix(8)))…)")
    }
    return attached
  }
}
