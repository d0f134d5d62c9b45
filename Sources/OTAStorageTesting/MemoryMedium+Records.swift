import OTAStorage
// The record directory of `MemoryMedium`: files (inodes) and directory entries, each with a volatile
// and a durable version, changed by the same steps as `FileRecordStore` performs.
import OTASystem
import OTAWire

extension MemoryMedium {
  public func load(_ name: String) throws(StorageError) -> [UInt8]? {
    try RecordName.validate(name)
    return try state.withLock { state throws(StorageError) in
      if let fault = try state.begin(.recordLoad) {
        try state.fail(fault, operation: "read", path: Self.recordPath(name))
      }
      return state.directory.content(of: name)
    }
  }

  /// Write `name.tmp`, sync it, rename it over `name`, sync the directory: four counted operations,
  /// any of which a fault can stop.
  public func replace(_ name: String, with bytes: [UInt8]) throws(StorageError) {
    try RecordName.validate(name)
    let temporary = name + RecordName.temporarySuffix
    let file = try state.withLock { state throws(StorageError) in
      switch try state.begin(.recordWrite) {
      case nil:
        return state.directory.create(temporary, content: bytes)
      case .shortWrite:
        let half = bytes.count / 2
        _ = state.directory.create(temporary, content: Array(bytes.prefix(half)))
        throw .shortWrite(expected: bytes.count, written: half)
      case let fault?:
        try state.fail(fault, operation: "pwrite", path: Self.recordPath(temporary))
      }
    }
    try state.withLock { state throws(StorageError) in
      if let fault = try state.begin(.recordSync) {
        try state.fail(fault, operation: "fsync", path: Self.recordPath(temporary))
      }
      state.directory.sync(file)
    }
    try rename(temporary, to: name, missingIsFine: false)
    try syncDirectory()
  }

  /// pwrite into the existing record, then fdatasync it: two counted operations (`.recordWrite`,
  /// `.recordSync`). Until the sync a power cut may keep the write, lose it or tear it at 512-byte
  /// sectors; a cut during the write keeps at most a prefix of its sectors.
  public func overwrite(_ name: String, at offset: Int, with bytes: [UInt8]) throws(StorageError) {
    try RecordName.validate(name)
    let path = Self.recordPath(name)
    let file = try state.withLock { state throws(StorageError) in
      let fault = try state.begin(.recordWrite)
      guard let file = state.directory.current[name], offset >= 0 else {
        throw .system(
          operation: "open", path: path, errno: offset < 0 ? Errno.invalidArgument : Errno.noSuchFile)
      }
      switch fault {
      case nil:
        state.directory.files[file]?.write(bytes, at: offset, interrupted: false)
      case .shortWrite:
        let half = bytes.count / 2
        state.directory.files[file]?.write(Array(bytes.prefix(half)), at: offset, interrupted: false)
        throw .shortWrite(expected: bytes.count, written: half)
      case .powerCut:
        state.directory.files[file]?.write(bytes, at: offset, interrupted: true)
        try state.fail(.powerCut, operation: "pwrite", path: path)
      case let fault?:
        try state.fail(fault, operation: "pwrite", path: path)
      }
      return file
    }
    try state.withLock { state throws(StorageError) in
      if let fault = try state.begin(.recordSync) {
        try state.fail(fault, operation: "fdatasync", path: path)
      }
      state.directory.sync(file)
    }
  }

  /// Unlink (a missing record is fine), then sync the directory.
  public func remove(_ name: String) throws(StorageError) {
    try RecordName.validate(name)
    try state.withLock { state throws(StorageError) in
      if let fault = try state.begin(.recordUnlink) {
        try state.fail(fault, operation: "unlink", path: Self.recordPath(name))
      }
      state.directory.apply(.unlink(name))
    }
    try syncDirectory()
  }

  /// Rename to `name.damaged` (a missing record is fine), then sync the directory.
  public func moveAside(_ name: String) throws(StorageError) {
    try RecordName.validate(name)
    try rename(name, to: name + RecordName.damagedSuffix, missingIsFine: true)
    try syncDirectory()
  }

  /// The names in the directory as reads see them now, sorted; includes `.tmp` and `.damaged` files.
  public func recordNames() -> [String] {
    state.withLock { $0.directory.current.keys.sorted() }
  }

  /// The names a `reboot(seed: nil)` would leave, sorted.
  public func durableRecordNames() -> [String] {
    state.withLock { $0.directory.durable.keys.sorted() }
  }

  private func rename(_ from: String, to: String, missingIsFine: Bool) throws(StorageError) {
    try state.withLock { state throws(StorageError) in
      if let fault = try state.begin(.recordRename) {
        try state.fail(fault, operation: "rename", path: Self.recordPath(from))
      }
      guard state.directory.current[from] != nil else {
        if missingIsFine { return }
        throw .system(operation: "rename", path: Self.recordPath(from), errno: Errno.noSuchFile)
      }
      state.directory.apply(.rename(from: from, to: to))
    }
  }

  private func syncDirectory() throws(StorageError) {
    try state.withLock { state throws(StorageError) in
      if let fault = try state.begin(.directorySync) {
        try state.fail(fault, operation: "fsync", path: "memory:records")
      }
      state.directory.syncEntries()
    }
  }

  static func recordPath(_ name: String) -> String { "memory:records/" + name }
}

/// Files and directory entries. A file's content is durable after its fsync; an entry change
/// (create, rename, unlink) is durable after the directory's fsync.
struct MemoryDirectory: Sendable {
  /// A file's bytes: as written, and as of its last fsync, with the in-place writes in between
  /// (what a power cut may keep, lose or tear at sector bounds).
  struct File: Sendable {
    var current: [UInt8]
    var durable: [UInt8]
    var unsynced: [UnsyncedWrite] = []

    /// An in-place write: visible now, durable after `sync`. Past the end the file grows (with
    /// zeros on the medium until a sync).
    mutating func write(_ bytes: [UInt8], at offset: Int, interrupted: Bool) {
      let end = offset + bytes.count
      if current.count < end { current.append(contentsOf: repeatElement(0, count: end - current.count)) }
      if durable.count < end { durable.append(contentsOf: repeatElement(0, count: end - durable.count)) }
      if !interrupted { current.replaceSubrange(offset..<end, with: bytes) }
      unsynced.append(UnsyncedWrite(offset: offset, bytes: bytes, interrupted: interrupted))
    }
  }

  /// A change of directory entries, replayed in order onto the durable entries at a seeded reboot.
  enum Change: Sendable {
    /// A new file under `name`, replacing any entry of that name (an `O_CREAT|O_TRUNC` open).
    case link(String, file: Int)
    case rename(from: String, to: String)
    case unlink(String)
  }

  var files: [Int: File] = [:]
  var nextFile = 0
  /// Name to file, as lookups see them now.
  var current: [String: Int] = [:]
  /// Name to file, as of the last directory fsync.
  var durable: [String: Int] = [:]
  /// The changes since the last directory fsync, oldest first.
  var unsynced: [Change] = []

  func content(of name: String) -> [UInt8]? {
    current[name].flatMap { files[$0]?.current }
  }

  /// Creates a file holding `content` (not yet durable) under `name`; returns the file for `sync`.
  mutating func create(_ name: String, content: [UInt8]) -> Int {
    let file = nextFile
    nextFile += 1
    files[file] = File(current: content, durable: [])
    apply(.link(name, file: file))
    return file
  }

  /// The file's fsync: its content becomes durable (its name does not; that is the directory's).
  mutating func sync(_ file: Int) {
    if let content = files[file]?.current {
      files[file]?.durable = content
      files[file]?.unsynced.removeAll()
    }
  }

  mutating func apply(_ change: Change) {
    Self.apply(change, to: &current)
    unsynced.append(change)
  }

  mutating func syncEntries() {
    durable = current
    unsynced.removeAll()
  }

  /// Without a generator every unsynced change is lost; with one, a prefix of them survives (a
  /// journal commits metadata in order). Files keep only what they fsynced; unnamed files vanish.
  mutating func reboot(random: inout SeededGenerator?) {
    if var generator = random {
      let survivors = generator.next(below: unsynced.count + 1)
      for change in unsynced.prefix(survivors) { Self.apply(change, to: &durable) }
      for id in files.keys.sorted() where !(files[id]?.unsynced.isEmpty ?? true) {
        guard var file = files[id] else { continue }
        UnsyncedWrite.settle(file.unsynced, onto: &file.durable, random: &generator)
        files[id] = file
      }
      random = generator
    }
    current = durable
    unsynced.removeAll()
    let named = Set(durable.values)
    files = files.filter { named.contains($0.key) }.mapValues {
      File(current: $0.durable, durable: $0.durable)
    }
  }

  static func apply(_ change: Change, to entries: inout [String: Int]) {
    switch change {
    case .link(let name, let file):
      entries[name] = file
    case .rename(let from, let to):
      guard let file = entries.removeValue(forKey: from) else { return }
      entries[to] = file
    case .unlink(let name):
      entries[name] = nil
    }
  }
}
