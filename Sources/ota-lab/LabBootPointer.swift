import Foundation
import OTABoot
import OTALab
import OTAWire

extension LabDevice {
  /// The boot pointer as the bootloader's side holds it, beside otad's view: the lab's otad uses
  /// the file backend (otad is its own bootloader), whose variables are two symbolic links in the
  /// state folder, `current` (the slot to start) and `current.primary` (the confirmed slot). Their
  /// targets are read as they are; the pointer they make is read by the backend itself.
  /// Under U-Boot: the board's environment and U-Boot's last choices beside `otad`'s view.
  func bootPointer(otad: LabSnapshot.Boot) -> LabSnapshot.BootVariables {
    if let board {
      var view = board.look(otad: otad, reading: watcher?.environment)
      view.history = watcher?.lines
      return view
    }
    let backend = FileLinkBackend(
      link: paths.state + "/current", slotPaths: SlotPair(a: paths.slotA, b: paths.slotB))
    let variables = [backend.link, backend.primaryLink].map { link -> [String] in
      let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link)
      return [
        URL(fileURLWithPath: link).lastPathComponent,
        target.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "(none)",
      ]
    }
    let pointer: String
    do { pointer = try backend.pointer().description } catch { pointer = "unreadable: \(error)" }
    return LabSnapshot.BootVariables(backend: "file (symbolic links)", variables: variables, pointer: pointer)
  }
}
