import OTAVersion

/// `ota-lab --version`: the release and the build's commit, as otad and otactl say them.
let labVersion = BlueOTAVersion.line("ota-lab")
