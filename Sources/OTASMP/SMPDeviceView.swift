/// One image slot as image state read reports it (MCUboot's view: slot 0 runs, slot 1 is the other).
public struct SMPImageSlot: Equatable, Sendable {
  public var slot: UInt64
  /// "major.minor.revision", with ".build" when the build number is not zero.
  public var version: String
  /// The SHA-256 hash TLV of the image, as MCUboot reports it.
  public var hash: [UInt8]
  public var bootable: Bool
  /// Boots on the next reset (a test, or a permanent switch).
  public var pending: Bool
  public var confirmed: Bool
  public var active: Bool
  /// Pending, and will not revert.
  public var permanent: Bool

  public init(
    slot: UInt64, version: String, hash: [UInt8], bootable: Bool = true, pending: Bool = false,
    confirmed: Bool = false, active: Bool = false, permanent: Bool = false
  ) {
    self.slot = slot
    self.version = version
    self.hash = hash
    self.bootable = bootable
    self.pending = pending
    self.confirmed = confirmed
    self.active = active
    self.permanent = permanent
  }
}

/// What the OS info command's format letters name (uname's fields, as Zephyr's os info does).
public struct SMPSystemInfo: Equatable, Sendable {
  public var kernelName = "Linux"
  public var nodeName = ""
  public var kernelRelease = ""
  public var kernelVersion = ""
  public var buildDateTime = ""
  public var machine = ""
  public var processor = ""
  public var hardwarePlatform = ""
  public var operatingSystem = "otad"

  public init() {}
}

/// What the device is right now, as the read-only commands report it. The host builds it from its
/// boot state and slots before each request: the server keeps no copy that could go stale.
public struct SMPDeviceView: Equatable, Sendable {
  public var images: [SMPImageSlot]
  public var system: SMPSystemInfo
  /// Refuses images that are not newer (MCUboot's "no-downgrade").
  public var downgradesRefused: Bool

  public init(images: [SMPImageSlot], system: SMPSystemInfo = SMPSystemInfo(), downgradesRefused: Bool) {
    self.images = images
    self.system = system
    self.downgradesRefused = downgradesRefused
  }

  public init(images: [SMPImageSlot], facts: SMPDeviceFacts) {
    self.init(images: images, system: facts.system, downgradesRefused: facts.downgradesRefused)
  }

  /// What the commands other than image state report.
  public var facts: SMPDeviceFacts { SMPDeviceFacts(system: system, downgradesRefused: downgradesRefused) }
}

/// What OS info and bootloader info report: nothing that needs a slot read.
public struct SMPDeviceFacts: Equatable, Sendable {
  public var system: SMPSystemInfo
  public var downgradesRefused: Bool

  public init(system: SMPSystemInfo = SMPSystemInfo(), downgradesRefused: Bool) {
    self.system = system
    self.downgradesRefused = downgradesRefused
  }
}
