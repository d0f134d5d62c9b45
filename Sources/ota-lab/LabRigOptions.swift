/// What a device of the lab is made from: where the images and programs are, its slots' and
/// window's sizes, its link's pace, the bootloader that decides its boots. Each student's device in class mode is made from the same.
struct LabRigOptions: Sendable {
  var images: String?
  var bin: String?
  var capacity: String
  var window: String
  var intervalMilliseconds: Double
  var packets: Int
  var keep: Bool
  var bootloader: LabBootloader = .file
}
