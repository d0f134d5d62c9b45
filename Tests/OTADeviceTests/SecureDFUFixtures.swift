/// Init packets made by Nordic's own `nrfutil pkg generate` (nrfutil 6.1.7 from PyPI), byte for byte
/// (each package's app.dat), for `SecureDFUTests.firmware` written to app.bin, with
/// `--application app.bin --application-version 0x02000000` and:
enum SecureDFUFixtures {
  /// `nrfutil keys display --key pk --format pem a.pem`: the key the device trusts.
  static let trustedKey = """
    -----BEGIN PUBLIC KEY-----
    MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEo7x0Hmsy6GtoRUMeEzl0w7KVeTotHviJ3YAVhQ5m
    p6M80fSGhn8YKIup7cSaKI0l0tFpDL/wHzXR3MlhTzsD7A==
    -----END PUBLIC KEY-----
    """

  /// `--hw-version 52 --sd-req 0x00 --key-file a.pem`: what the device takes.
  static let signed = bytes(
    "128b010a4508011241088080801010341a010020002800300038e05d422408031220107d51c63ac1faf1b2437a8736086b94155966de5fb82abb2fe342878f3a9ed7480052040801120010001a404459f612b3499c2a0d55f381c69d9436f4b3449082ce3ad7e5c3ffcac1eeacbf3217a20e5ba3241b2b81cae74d6e1bad3c155a9eba9f4d45d27327d24e2d9e73"
  )
  /// `--hw-version 51`: another chip's.
  static let otherHardware = bytes(
    "128b010a4508011241088080801010331a010020002800300038e05d422408031220107d51c63ac1faf1b2437a8736086b94155966de5fb82abb2fe342878f3a9ed7480052040801120010001a40b91ee14c04a04613bb744bf44e505af1c334418be6fe06bd65b67c892a10079404617e56ea557b121048ef157064b4eb25beafd7292947c65b2f59d96ceb79f5"
  )
  /// `--key-file b.pem`: signed by a key the device does not trust.
  static let otherKey = bytes(
    "128b010a4508011241088080801010341a010020002800300038e05d422408031220107d51c63ac1faf1b2437a8736086b94155966de5fb82abb2fe342878f3a9ed7480052040801120010001a4023ae5b70f37a7ff445592e3a3b5048be2dccef956eaf33ff6b04ad78c7b688393b06d25cb2ef4381e7c41ac8cf0ec622885bf7772adeea2d3c685882783425a5"
  )
  /// No `--key-file`: unsigned.
  static let unsigned = bytes(
    "0a4508011241088080801010341a010020002800300038e05d422408031220107d51c63ac1faf1b2437a8736086b94155966de5fb82abb2fe342878f3a9ed74800520408011200"
  )
  /// `--sd-req 0xB6`: needs SoftDevice S132 v5.1.0, which this device does not have.
  static let needsSoftDevice = bytes(
    "128c010a4608011242088080801010341a02b60120002800300038e05d422408031220107d51c63ac1faf1b2437a8736086b94155966de5fb82abb2fe342878f3a9ed7480052040801120010001a401f724ff790a7a641d6735cef3ee6c8fa712e9859df4256a8c5bf1349cb56a396f2cdd2b686bc1182a5662dfc02f8cba20f537df73b17b08ab131eab0b6995faf"
  )

  /// `--application-version 0x00090000`: 0.9.0, older than the factory firmware's 1.0.0.
  static let older = bytes(
    "128a010a44080112400880802410341a010020002800300038e05d422408031220107d51c63ac1faf1b2437a8736086b94155966de5fb82abb2fe342878f3a9ed7480052040801120010001a403cb4fe400c7e2262b1233a0b4c7521725bff9d35984eef80460de5c5cc984017b1ac7aa8ed54fd964445bde0cdbe790f5403b8c9b567d44b039470ff54e1088c"
  )

  static func bytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      bytes.append(UInt8(hex[index..<next], radix: 16)!)
      index = next
    }
    return bytes
  }
}
