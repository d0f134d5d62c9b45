/// The suffix array of a byte string: the start of every suffix, in lexicographic order (a suffix
/// that is a prefix of another sorts first). Built by induced sorting (SA-IS: Nong, Zhang and Chan,
/// 2009) in time linear in the length; the reduced problem of each level lives in the array itself,
/// so the memory is the array (4 bytes per input byte), one type flag per byte and the buckets.
struct SuffixArray {
  let positions: [Int32]

  /// Inputs up to `Int32.max` bytes.
  init(_ bytes: [UInt8]) {
    precondition(bytes.count < Int(Int32.max), "a suffix array indexes with Int32")
    var positions = [Int32](repeating: -1, count: bytes.count)
    bytes.withUnsafeBufferPointer { text in
      positions.withUnsafeMutableBufferPointer { output in
        InducedSorting.sort(text, into: output, alphabet: 256)
      }
    }
    self.positions = positions
  }
}

/// SA-IS over any integer alphabet: level 0 sorts bytes, the levels below the names of the LMS
/// substrings. The string has a virtual sentinel after its end, smaller than every character.
enum InducedSorting {
  static func sort<Character: FixedWidthInteger>(
    _ text: UnsafeBufferPointer<Character>, into suffixes: UnsafeMutableBufferPointer<Int32>, alphabet: Int
  ) {
    let count = text.count
    guard count > 1 else {
      if count == 1 { suffixes[0] = 0 }
      return
    }
    // S-type (true): the suffix is smaller than the next one. The last suffix is L (the sentinel
    // follows it).
    var types = [Bool](repeating: false, count: count)
    types.withUnsafeMutableBufferPointer { isS in
      for index in stride(from: count - 2, through: 0, by: -1) {
        let here = text[index]
        let next = text[index + 1]
        isS[index] = here < next || (here == next && isS[index + 1])
      }
    }
    var counts = [Int32](repeating: 0, count: alphabet)
    for character in text { counts[Int(character)] += 1 }
    types.withUnsafeBufferPointer { isS in
      counts.withUnsafeBufferPointer { counts in
        sortLevel(text, suffixes, isS: isS, counts: counts)
      }
    }
  }

  private static func sortLevel<Character: FixedWidthInteger>(
    _ text: UnsafeBufferPointer<Character>, _ suffixes: UnsafeMutableBufferPointer<Int32>,
    isS: UnsafeBufferPointer<Bool>, counts: UnsafeBufferPointer<Int32>
  ) {
    let count = text.count
    func isLMS(_ index: Int) -> Bool { index > 0 && isS[index] && !isS[index - 1] }
    var bucket = [Int32](repeating: 0, count: counts.count)
    bucket.withUnsafeMutableBufferPointer { bucket in
      // 1. The LMS suffixes at the ends of their buckets, in text order; induce the rest.
      for index in 0..<count { suffixes[index] = -1 }
      bucketEnds(counts, into: bucket)
      for index in 1..<count where isLMS(index) {
        let character = Int(text[index])
        bucket[character] -= 1
        suffixes[Int(bucket[character])] = Int32(index)
      }
      induce(text, suffixes, isS: isS, counts: counts, bucket: bucket)

      // 2. The LMS substrings are now sorted: keep them, in order, at the front; name them.
      var sortedCount = 0
      for index in 0..<count {
        let position = Int(suffixes[index])
        if isLMS(position) {
          suffixes[sortedCount] = Int32(position)
          sortedCount += 1
        }
      }
      for index in sortedCount..<count { suffixes[index] = -1 }
      var names = 0
      var previous = -1
      for index in 0..<sortedCount {
        let position = Int(suffixes[index])
        if previous < 0 || !sameLMSSubstring(text, isS: isS, position, previous) {
          names += 1
          previous = position
        }
        // Two LMS positions are at least two apart: position / 2 is a free slot of its own.
        suffixes[sortedCount + position / 2] = Int32(names - 1)
      }
      var write = count - 1
      for index in stride(from: count - 1, through: sortedCount, by: -1) where suffixes[index] >= 0 {
        suffixes[write] = suffixes[index]
        write -= 1
      }

      // 3. The order of the LMS suffixes: from the names directly when they are all different,
      // else by sorting the string of names (the tail of the array) into its head.
      let reduced = UnsafeMutableBufferPointer(rebasing: suffixes[(count - sortedCount)...])
      let reducedOrder = UnsafeMutableBufferPointer(rebasing: suffixes[..<sortedCount])
      if names < sortedCount {
        sort(UnsafeBufferPointer(reduced), into: reducedOrder, alphabet: names)
      } else {
        for index in 0..<sortedCount { reducedOrder[Int(reduced[index])] = Int32(index) }
      }
      // The reduced string's characters stand for the LMS positions in text order.
      var next = 0
      for index in 1..<count where isLMS(index) {
        reduced[next] = Int32(index)
        next += 1
      }
      for index in 0..<sortedCount { reducedOrder[index] = reduced[Int(reducedOrder[index])] }
      for index in sortedCount..<count { suffixes[index] = -1 }

      // 4. The LMS suffixes, now in their true order, at the ends of their buckets; induce again.
      bucketEnds(counts, into: bucket)
      for index in stride(from: sortedCount - 1, through: 0, by: -1) {
        let position = Int(suffixes[index])
        suffixes[index] = -1
        let character = Int(text[position])
        bucket[character] -= 1
        suffixes[Int(bucket[character])] = Int32(position)
      }
      induce(text, suffixes, isS: isS, counts: counts, bucket: bucket)
    }
  }

  /// Whether the LMS substrings at `first` and `second` (up to and including the next LMS
  /// position) are equal, characters and types.
  private static func sameLMSSubstring<Character: FixedWidthInteger>(
    _ text: UnsafeBufferPointer<Character>, isS: UnsafeBufferPointer<Bool>, _ first: Int, _ second: Int
  ) -> Bool {
    let count = text.count
    var offset = 0
    while true {
      let a = first + offset
      let b = second + offset
      // The sentinel is unique: a substring that reaches it equals no other.
      if a == count || b == count { return false }
      if text[a] != text[b] || isS[a] != isS[b] { return false }
      if offset > 0 {
        let aEnds = isS[a] && !isS[a - 1]
        let bEnds = isS[b] && !isS[b - 1]
        if aEnds || bEnds { return aEnds && bEnds }
      }
      offset += 1
    }
  }

  /// From the LMS suffixes placed at bucket ends: the L suffixes left to right, then the S
  /// suffixes right to left.
  private static func induce<Character: FixedWidthInteger>(
    _ text: UnsafeBufferPointer<Character>, _ suffixes: UnsafeMutableBufferPointer<Int32>,
    isS: UnsafeBufferPointer<Bool>, counts: UnsafeBufferPointer<Int32>,
    bucket: UnsafeMutableBufferPointer<Int32>
  ) {
    let count = text.count
    bucketStarts(counts, into: bucket)
    // The suffix before the sentinel is L and comes first in its bucket.
    let last = Int(text[count - 1])
    suffixes[Int(bucket[last])] = Int32(count - 1)
    bucket[last] += 1
    for index in 0..<count {
      let position = Int(suffixes[index]) - 1
      if position >= 0 && !isS[position] {
        let character = Int(text[position])
        suffixes[Int(bucket[character])] = Int32(position)
        bucket[character] += 1
      }
    }
    bucketEnds(counts, into: bucket)
    for index in stride(from: count - 1, through: 0, by: -1) {
      let position = Int(suffixes[index]) - 1
      if position >= 0 && isS[position] {
        let character = Int(text[position])
        bucket[character] -= 1
        suffixes[Int(bucket[character])] = Int32(position)
      }
    }
  }

  private static func bucketStarts(
    _ counts: UnsafeBufferPointer<Int32>, into bucket: UnsafeMutableBufferPointer<Int32>
  ) {
    var sum: Int32 = 0
    for character in 0..<counts.count {
      bucket[character] = sum
      sum += counts[character]
    }
  }

  private static func bucketEnds(
    _ counts: UnsafeBufferPointer<Int32>, into bucket: UnsafeMutableBufferPointer<Int32>
  ) {
    var sum: Int32 = 0
    for character in 0..<counts.count {
      sum += counts[character]
      bucket[character] = sum
    }
  }
}
